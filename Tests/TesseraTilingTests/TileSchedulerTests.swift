import Testing
@testable import TesseraTiling

/// A latch tests open by hand: `wait()` suspends until `open()`, and passes straight through afterwards.
final class Gate: Sendable {
    private let state = Locked<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let passes = state.withLock { state in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A provider that records the order tiles start in, holds every tile until its gate opens, and fails on request.
final class RecordingProvider: TileProvider {
    struct Failure: Error {}

    let gate = Gate()
    let failing: Set<TileKey>
    let estimate: Int
    private let started = Locked<[TileKey]>([])
    private let startSignals: AsyncStream<TileKey>.Continuation
    let startStream: AsyncStream<TileKey>

    init(failing: Set<TileKey> = [], estimate: Int = 0) {
        self.failing = failing
        self.estimate = estimate
        (startStream, startSignals) = AsyncStream.makeStream(of: TileKey.self)
    }

    var startOrder: [TileKey] { started.withLock { $0 } }

    func makeTile(for request: TileRequest) async throws -> String {
        started.withLock { $0.append(request.key) }
        startSignals.yield(request.key)
        await gate.wait()
        if failing.contains(request.key) { throw Failure() }
        return request.key.description
    }

    func cost(of tile: String) -> Int { 100 }

    func estimatedCost(of request: TileRequest) -> Int { estimate }

    /// Waits until `count` more tiles have started.
    func waitForStarts(_ count: Int) async {
        var iterator = startStream.makeAsyncIterator()
        for _ in 0..<count { _ = await iterator.next() }
    }
}

private func key(_ column: Int, level: Int = 0) -> TileKey { TileKey(level: level, column: column, row: 0) }

private func request(_ column: Int, _ purpose: TilePriority.Purpose, _ order: Int) -> TileRequest {
    TileRequest(key: key(column), pixelSize: PixelSize(width: 256, height: 256), priority: TilePriority(purpose, order: order))
}

private func makeScheduler(
    _ provider: RecordingProvider, concurrency: Int = 1, capacity: Int = 64, budget: Int = 1_000_000
) -> TileScheduler<RecordingProvider> {
    TileScheduler(
        provider: provider,
        cache: TileCache(byteBudget: budget),
        configuration: .init(maxConcurrentTiles: concurrency, queueCapacity: capacity),
        clock: { 42 }
    )
}

@Test func visibleTilesStartBeforePrefetchThenCentreOut() async {
    let provider = RecordingProvider()
    let scheduler = makeScheduler(provider)
    await scheduler.request(request(0, .prefetch, 0))
    await provider.waitForStarts(1)
    // Tile 0 holds the only slot; everything else queues and must start in priority order.
    await scheduler.update(wanted: [
        request(1, .prefetch, 1), request(2, .visible, 2), request(3, .prefetch, 0),
        request(4, .visible, 0), request(5, .visible, 1), request(0, .prefetch, 0),
    ])
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect(provider.startOrder == [0, 4, 5, 2, 3, 1].map { key($0) })
    #expect(await scheduler.statistics.completed == 6)
    #expect(scheduler.cache.probe(key(2))?.tile == "0/2_0")
    #expect(scheduler.cache.probe(key(2))?.arrivalTime == 42)
}

@Test func loadCountsTheTilesRunningAndTheRequestsWaiting() async {
    let provider = RecordingProvider()
    let scheduler = makeScheduler(provider, concurrency: 2)
    await scheduler.update(wanted: (0..<5).map { request($0, .visible, $0) })
    await provider.waitForStarts(2)
    #expect(await scheduler.load == (running: 2, queued: 3))
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect(await scheduler.load == (running: 0, queued: 0))
}

@Test func tilesThatLeaveThePlanBeforeStartingAreCancelled() async {
    let provider = RecordingProvider()
    let scheduler = makeScheduler(provider)
    await scheduler.update(wanted: [request(0, .visible, 0), request(1, .visible, 1), request(2, .visible, 2)])
    await provider.waitForStarts(1)
    // The view moved: 1 is gone; 0 is running and finishes anyway.
    await scheduler.update(wanted: [request(2, .visible, 0), request(3, .visible, 1)])
    await scheduler.cancel([key(3)])
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect(provider.startOrder == [key(0), key(2)])
    #expect(await scheduler.statistics.cancelled == 2)
    #expect(scheduler.cache.contains(key(0)))
}

@Test func duplicateRequestsAreCoalesced() async {
    let provider = RecordingProvider()
    let scheduler = makeScheduler(provider)
    #expect(await scheduler.request(request(0, .visible, 0)) == .queued)
    #expect(await scheduler.request(request(1, .visible, 1)) == .queued)
    await provider.waitForStarts(1)
    // 0 is running, 1 is queued: asking again joins them.
    #expect(await scheduler.request(request(0, .visible, 0)) == .coalesced)
    #expect(await scheduler.request(request(1, .visible, 0)) == .coalesced)
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect(provider.startOrder == [key(0), key(1)])
    #expect(await scheduler.request(request(0, .visible, 0)) == .cached)
    #expect(await scheduler.statistics.coalesced == 2)
}

@Test func aTileFinishedAfterInvalidateIsDropped() async {
    let provider = RecordingProvider()
    let scheduler = makeScheduler(provider, concurrency: 2)
    await scheduler.request(request(0, .visible, 0))
    await provider.waitForStarts(1)
    await scheduler.invalidate()
    #expect(await scheduler.generation == 1)
    // Asked again after the invalidation, the tile is made afresh rather than joined to the stale one.
    #expect(await scheduler.request(request(0, .visible, 0)) == .queued)
    await provider.waitForStarts(1)
    provider.gate.open()
    await scheduler.waitUntilIdle()
    let statistics = await scheduler.statistics
    #expect(statistics.stale == 1)
    #expect(statistics.completed == 1)
    #expect(provider.startOrder == [key(0), key(0)])
    #expect(scheduler.cache.statistics.count == 1)
}

@Test func invalidateWithNothingRequestedAgainLeavesTheCacheEmpty() async {
    let provider = RecordingProvider()
    let scheduler = makeScheduler(provider)
    await scheduler.request(request(0, .visible, 0))
    await provider.waitForStarts(1)
    await scheduler.invalidate()
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect(!scheduler.cache.contains(key(0)))
    #expect(await scheduler.statistics.stale == 1)
}

@Test func aFullQueueDropsTheLeastUrgentRequest() async {
    let provider = RecordingProvider()
    let scheduler = makeScheduler(provider, capacity: 2)
    await scheduler.request(request(0, .visible, 0))
    await provider.waitForStarts(1)
    #expect(await scheduler.request(request(1, .prefetch, 5)) == .queued)
    #expect(await scheduler.request(request(2, .prefetch, 3)) == .queued)
    // Full: a visible tile displaces the least urgent prefetch; a less urgent prefetch is turned away.
    #expect(await scheduler.request(request(3, .visible, 1)) == .queued)
    #expect(await scheduler.request(request(4, .prefetch, 9)) == .rejected)
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect(provider.startOrder == [key(0), key(3), key(2)])
    #expect(await scheduler.statistics.dropped == 2)
}

@Test func failedTilesAreCountedAndNotCached() async {
    let provider = RecordingProvider(failing: [key(1)])
    provider.gate.open()
    let scheduler = makeScheduler(provider, concurrency: 2)
    await scheduler.update(wanted: [request(0, .visible, 0), request(1, .visible, 1)])
    await scheduler.waitUntilIdle()
    let statistics = await scheduler.statistics
    #expect(statistics.failed == 1)
    #expect(statistics.completed == 1)
    #expect(!scheduler.cache.contains(key(1)))
}

@Test func tilesInFlightReserveTheirEstimatedCostUntilTheyArriveOrFail() async {
    let provider = RecordingProvider(failing: [key(1)], estimate: 100)
    let scheduler = makeScheduler(provider, concurrency: 2, budget: 300)
    scheduler.cache.insert("old", for: key(9), cost: 100, arrivalTime: 0)
    scheduler.cache.insert("older", for: key(8), cost: 100, arrivalTime: 0)
    await scheduler.update(wanted: [request(0, .visible, 0), request(1, .visible, 1)])
    await provider.waitForStarts(2)
    // Two tiles in flight take 200 of the 300 bytes: one cached tile had to go.
    #expect(scheduler.cache.statistics.reservedBytes == 200)
    #expect(scheduler.cache.statistics.bytes == 100)
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect(scheduler.cache.statistics.reservedBytes == 0)
    #expect(scheduler.cache.statistics.bytes == 200)
}

@Test func updatingWithAPlanPinsItsVisibleTiles() async {
    let provider = RecordingProvider()
    provider.gate.open()
    // Room for one tile only: without the pins the cache would keep just the last arrival.
    let scheduler = makeScheduler(provider, concurrency: 2, budget: 100)
    let layout = TiledLayout(configuration: TiledLayerConfiguration(), contentSize: PixelSize(width: 512, height: 256))
    let plan = layout.plan(visibleRect: Rect2D(x: 0, y: 0, width: 512, height: 256), zoomScale: 1)
    await scheduler.update(plan)
    await scheduler.waitUntilIdle()
    #expect(plan.visible.allSatisfy { scheduler.cache.contains($0.key) })
    #expect(scheduler.cache.statistics.bytes == 200)
}

@Test func backstopTilesStartFirstAndStayPinned() async {
    let provider = RecordingProvider()
    // Room for one tile only: without the pins the cache would keep just the last arrival.
    let scheduler = makeScheduler(provider, concurrency: 1, budget: 100)
    let layout = TiledLayout(
        configuration: TiledLayerConfiguration(levelsOfDetail: 2), contentSize: PixelSize(width: 512, height: 256))
    let plan = layout.plan(visibleRect: Rect2D(x: 0, y: 0, width: 300, height: 200), zoomScale: 1)
    #expect(plan.backstop.map(\.key) == [TileKey(level: -1, column: 0, row: 0)])
    await scheduler.update(plan)
    await provider.waitForStarts(1)
    #expect(provider.startOrder == [TileKey(level: -1, column: 0, row: 0)])
    provider.gate.open()
    await scheduler.waitUntilIdle()
    #expect((plan.visible + plan.backstop).allSatisfy { scheduler.cache.contains($0.key) })
}

@Test func requestQueueTakesMostUrgentFirstAndEqualsInArrivalOrder() {
    var queue = TileRequestQueue(capacity: 3)
    #expect(queue.offer(request(0, .prefetch, 0)) == .queued)
    #expect(queue.offer(request(1, .visible, 4)) == .queued)
    #expect(queue.offer(request(2, .visible, 4)) == .queued)
    #expect(queue.offer(request(3, .visible, 9)) == .displaced(key(0)))
    #expect(queue.offer(request(3, .visible, 0)) == .updated)
    #expect(queue.offer(request(5, .prefetch, 0)) == .rejected)
    var order: [TileKey] = []
    while let next = queue.popMostUrgent() { order.append(next.key) }
    #expect(order == [key(3), key(1), key(2)])
}
