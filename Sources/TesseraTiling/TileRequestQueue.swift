/// The scheduler's bounded queue of tiles not yet started: one entry per key, the most urgent taken first
/// (equal priorities in arrival order), and at capacity a more urgent request displaces the least urgent one.
struct TileRequestQueue {
    /// What happened to a request offered to the queue.
    enum Outcome: Equatable {
        /// The request is now queued.
        case queued
        /// The key was already queued; its priority is now the request's.
        case updated
        /// The queue was full: the request is queued and this less urgent one was dropped.
        case displaced(TileKey)
        /// The queue was full of more urgent requests: this one was dropped.
        case rejected
    }

    private struct Entry {
        var request: TileRequest
        var sequence: Int
    }

    /// The most requests held at once.
    let capacity: Int
    private var entries: [TileKey: Entry] = [:]
    private var nextSequence = 0

    /// An empty queue of at most `capacity` requests.
    init(capacity: Int) {
        precondition(capacity > 0, "a queue needs room for at least one request, got \(capacity)")
        self.capacity = capacity
    }

    /// How many requests wait.
    var count: Int { entries.count }
    /// Whether nothing waits.
    var isEmpty: Bool { entries.isEmpty }

    /// Whether `key` waits.
    func contains(_ key: TileKey) -> Bool { entries[key] != nil }

    /// Adds `request`, or updates the priority of the request already waiting for its key.
    mutating func offer(_ request: TileRequest) -> Outcome {
        if entries[request.key] != nil {
            entries[request.key]?.request = request
            return .updated
        }
        var outcome = Outcome.queued
        if entries.count >= capacity {
            guard let worst = entries.values.max(by: Self.isMoreUrgent), request.priority < worst.request.priority
            else { return .rejected }
            entries[worst.request.key] = nil
            outcome = .displaced(worst.request.key)
        }
        entries[request.key] = Entry(request: request, sequence: nextSequence)
        nextSequence += 1
        return outcome
    }

    /// Takes the most urgent request out of the queue.
    mutating func popMostUrgent() -> TileRequest? {
        guard let best = entries.values.min(by: Self.isMoreUrgent) else { return nil }
        entries[best.request.key] = nil
        return best.request
    }

    /// Takes `key` out of the queue; returns whether it was there.
    @discardableResult
    mutating func remove(_ key: TileKey) -> Bool {
        entries.removeValue(forKey: key) != nil
    }

    /// Takes out every request whose key `shouldRemove` accepts; returns how many went.
    mutating func removeAll(where shouldRemove: (TileKey) -> Bool) -> Int {
        let before = entries.count
        entries = entries.filter { !shouldRemove($0.key) }
        return before - entries.count
    }

    /// Orders by priority, then arrival: the minimum is the next to start, the maximum the first to drop.
    private static func isMoreUrgent(_ a: Entry, _ b: Entry) -> Bool {
        (a.request.priority, a.sequence) < (b.request.priority, b.sequence)
    }
}
