/// Runs a `TileProvider` for the tiles a frame wants and puts the results in a `TileCache`, CATiledLayer-style:
/// tiles are made on background tasks, at most `maxConcurrentTiles` at once, most urgent first.
///
/// ```
/// update(plan) -> queue (bounded, by priority) -> start (up to maxConcurrentTiles tasks): cache.reserve
///              -> provider.makeTile -> finish: generation current? -> cache.insert (releasing) -> onArrival
/// ```
///
/// - Backstop tiles go first, then visible ones, then prefetched ones, each in centre-out order (`TilePriority`).
/// - A started tile reserves `provider.estimatedCost(of:)` in the cache's budget until it arrives, so the cache
///   plus the tiles in flight stay within the budget.
/// - A tile that leaves the plan before it starts is cancelled (taken off the queue); one already running finishes
///   and is cached, since a pan back is likely.
/// - A request for a tile already queued or running is coalesced with it.
/// - `invalidate()` bumps a generation counter: a tile finishing afterwards was drawn from stale content and is
///   dropped, the race CATiledLayer's `setNeedsDisplay` has to handle.
/// - The queue is bounded: when full, a more urgent request displaces the least urgent one, otherwise it is
///   rejected; the next frame asks again for whatever it still wants.
public actor TileScheduler<Provider: TileProvider> {
    /// How much work the scheduler allows itself.
    public struct Configuration: Hashable, Sendable {
        /// The default number of tiles made at once: the core count of this project's machines. The standard
        /// library cannot ask the system for the core count, so an app that knows it (Foundation's
        /// `ProcessInfo.activeProcessorCount`) passes it in.
        public static var defaultConcurrency: Int { 2 }

        /// The most tiles made at once.
        public var maxConcurrentTiles: Int
        /// The most requests waiting to start.
        public var queueCapacity: Int

        /// Makes a configuration of `maxConcurrentTiles` tasks and a queue of `queueCapacity` requests.
        public init(maxConcurrentTiles: Int = defaultConcurrency, queueCapacity: Int = 256) {
            precondition(maxConcurrentTiles > 0, "maxConcurrentTiles must be positive, got \(maxConcurrentTiles)")
            precondition(queueCapacity > 0, "queueCapacity must be positive, got \(queueCapacity)")
            self.maxConcurrentTiles = maxConcurrentTiles
            self.queueCapacity = queueCapacity
        }
    }

    /// What happened to one request.
    public enum RequestOutcome: Hashable, Sendable {
        /// The tile is cached already; nothing to do.
        case cached
        /// The tile is already queued or being made; the request joined it.
        case coalesced
        /// The tile is queued (and may have started at once).
        case queued
        /// The queue was full of more urgent requests; ask again later.
        case rejected
    }

    /// What the scheduler has done since it was made.
    public struct Statistics: Hashable, Sendable {
        /// Requests that joined a tile already queued or being made.
        public var coalesced = 0
        /// Tiles handed to the provider.
        public var started = 0
        /// Tiles made and cached.
        public var completed = 0
        /// Tiles whose provider threw.
        public var failed = 0
        /// Tiles finished after an `invalidate()` and dropped.
        public var stale = 0
        /// Queued requests taken off before they started, because the plan no longer wanted them.
        public var cancelled = 0
        /// Requests dropped because the queue was full: rejected, or displaced by a more urgent one.
        public var dropped = 0
    }

    private struct Running {
        var token: Int
        var task: Task<Void, Never>
    }

    /// Where finished tiles go; drawing reads it directly.
    public nonisolated let cache: TileCache<Provider.Tile>
    /// The clock that stamps arrival times, in seconds; compose frames with `now` from the same clock.
    public nonisolated let clock: @Sendable () -> Double
    /// The limits the scheduler works within.
    public nonisolated let configuration: Configuration
    private let provider: Provider
    private let onArrival: @Sendable (TileKey) -> Void

    private var queue: TileRequestQueue
    private var running: [TileKey: Running] = [:]
    private var runningTasks = 0
    private var nextToken = 0
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Bumped by `invalidate()`; tiles started under an older generation are dropped when they finish.
    public private(set) var generation = 0
    /// The counters so far.
    public private(set) var statistics = Statistics()

    /// The tiles being made now (stale ones included) and the requests waiting to start: what a client shows as
    /// its requests in flight.
    public var load: (running: Int, queued: Int) { (runningTasks, queue.count) }

    /// Makes a scheduler that fills `cache` from `provider`, stamps arrivals with `clock` (seconds; by default
    /// the time since the scheduler was made) and calls `onArrival` with each tile cached (to ask for a redraw).
    public init(
        provider: Provider,
        cache: TileCache<Provider.Tile>,
        configuration: Configuration = Configuration(),
        clock: @escaping @Sendable () -> Double = TileScheduler.secondsSinceNow(),
        onArrival: @escaping @Sendable (TileKey) -> Void = { _ in }
    ) {
        self.provider = provider
        self.cache = cache
        self.configuration = configuration
        self.clock = clock
        self.onArrival = onArrival
        queue = TileRequestQueue(capacity: configuration.queueCapacity)
    }

    /// A clock reading seconds elapsed since it was made, on the system's monotonic clock.
    public static func secondsSinceNow() -> @Sendable () -> Double {
        let start = ContinuousClock.now
        return {
            let elapsed = (ContinuousClock.now - start).components
            return Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
        }
    }

    /// Makes `plan` the work to do: pins its visible and backstop tiles in the cache, cancels queued tiles it no
    /// longer wants and requests the rest, backstop first, then visible.
    public func update(_ plan: TilePlan) {
        cache.setPinned(plan.pinnedKeys)
        update(wanted: plan.requests)
    }

    /// Makes `requests` the work to do: queued tiles not among them are cancelled, the others are requested.
    public func update(wanted requests: [TileRequest]) {
        let wanted = Set(requests.map(\.key))
        statistics.cancelled += queue.removeAll { !wanted.contains($0) }
        for request in requests {
            enqueue(request)
        }
        startWhatFits()
        resumeWaitersIfIdle()
    }

    /// Asks for one tile, in addition to what is queued.
    @discardableResult
    public func request(_ request: TileRequest) -> RequestOutcome {
        let outcome = enqueue(request)
        startWhatFits()
        return outcome
    }

    /// Takes `keys` off the queue if they have not started.
    public func cancel(_ keys: some Sequence<TileKey>) {
        for key in keys where queue.remove(key) {
            statistics.cancelled += 1
        }
        resumeWaitersIfIdle()
    }

    /// The content changed: empties the cache and makes every tile now running stale (cancelled, and dropped when
    /// it finishes). Queued tiles stay queued; they will be made from the new content.
    public func invalidate() {
        generation += 1
        for tile in running.values {
            tile.task.cancel()
        }
        running.removeAll()
        cache.removeAll()
    }

    /// Returns once nothing is queued or running, stale tiles included.
    public func waitUntilIdle() async {
        if isIdle { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    // MARK: - Queue and tasks

    private var isIdle: Bool { queue.isEmpty && runningTasks == 0 }

    @discardableResult
    private func enqueue(_ request: TileRequest) -> RequestOutcome {
        if running[request.key] != nil {
            statistics.coalesced += 1
            return .coalesced
        }
        if cache.contains(request.key) { return .cached }
        switch queue.offer(request) {
        case .queued:
            return .queued
        case .updated:
            statistics.coalesced += 1
            return .coalesced
        case .displaced:
            statistics.dropped += 1
            return .queued
        case .rejected:
            statistics.dropped += 1
            return .rejected
        }
    }

    private func startWhatFits() {
        while runningTasks < configuration.maxConcurrentTiles, let request = queue.popMostUrgent() {
            start(request)
        }
    }

    private func start(_ request: TileRequest) {
        let token = nextToken
        let generation = generation
        nextToken += 1
        runningTasks += 1
        statistics.started += 1
        let reservation = provider.estimatedCost(of: request)
        cache.reserve(reservation)
        // Detached so the provider's work runs on the global executor, never on this actor.
        let task = Task.detached { [provider] in
            let result: Result<Provider.Tile, any Error>
            do {
                result = .success(try await provider.makeTile(for: request))
            } catch {
                result = .failure(error)
            }
            await self.finish(
                request.key, token: token, generation: generation, reservation: reservation, result: result)
        }
        running[request.key] = Running(token: token, task: task)
    }

    private func finish(
        _ key: TileKey, token: Int, generation: Int, reservation: Int, result: Result<Provider.Tile, any Error>
    ) {
        runningTasks -= 1
        if running[key]?.token == token {
            running[key] = nil
        }
        if generation != self.generation {
            cache.release(reservation)
            statistics.stale += 1
        } else {
            switch result {
            case .success(let tile):
                cache.insert(
                    tile, for: key, cost: provider.cost(of: tile), arrivalTime: clock(), releasing: reservation)
                statistics.completed += 1
                onArrival(key)
            case .failure:
                cache.release(reservation)
                statistics.failed += 1
            }
        }
        startWhatFits()
        resumeWaitersIfIdle()
    }

    private func resumeWaitersIfIdle() {
        guard isIdle else { return }
        let waiters = idleWaiters
        idleWaiters.removeAll()
        for waiter in waiters {
            waiter.resume()
        }
    }
}
