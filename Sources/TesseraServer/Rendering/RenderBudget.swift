import Foundation

/// The memory every render in flight may hold together, across all requests: a render reserves its estimated
/// working set (`RenderCost`) before it starts and gives it back when done. A render that does not fit what is left
/// waits its turn in a bounded queue (first come, first served, so a large render is not starved by small ones);
/// when the queue is full, or its wait runs out, it is refused with a `RenderRefusal` the server answers as `503`
/// with `Retry-After`, so an overloaded server tells clients to come back instead of slowing every one of them.
public final class RenderBudget: @unchecked Sendable {
    /// How much may be rendered at once, and how long the line may be.
    public struct Limits: Sendable, Equatable {
        /// The bytes all renders in flight may hold together.
        public var bytes: Int
        /// The most renders that may wait for memory at once; one more is refused at once.
        public var queueLength: Int
        /// The longest a render waits for memory before it is refused, in seconds.
        public var maxWait: Double

        /// `bytes` across all renders, at most `queueLength` waiting, each at most `maxWait` seconds.
        public init(bytes: Int, queueLength: Int, maxWait: Double) {
            self.bytes = max(0, bytes)
            self.queueLength = max(0, queueLength)
            self.maxWait = max(0, maxWait)
        }
    }

    /// What the budget holds now.
    public struct Usage: Sendable, Equatable {
        /// Bytes reserved by the renders in flight.
        public var bytes: Int
        public var inFlight: Int
        public var queued: Int
        /// Renders refused since the start because the queue was full or their wait ran out.
        public var refused: Int
    }

    private struct State {
        var bytes = 0
        var inFlight = 0
        /// The waiting renders' tickets, in arrival order.
        var queue: [Int] = []
        var nextTicket = 0
        var refused = 0
    }

    public let limits: Limits
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var state = State()

    /// A budget of `limits`.
    public init(limits: Limits) {
        self.limits = limits
    }

    /// What the budget holds now.
    public var usage: Usage {
        condition.withLock { Usage(bytes: state.bytes, inFlight: state.inFlight, queued: state.queue.count,
                                   refused: state.refused) }
    }

    /// Runs `render` with `bytes` reserved, waiting in the queue while they do not fit; throws a `RenderRefusal`
    /// without running it when the render alone is over the budget, the queue is full, or the wait runs out.
    public func withReservation<Result>(of bytes: Int, _ render: () throws -> Result) throws -> Result {
        let reservation = try reserve(bytes)
        defer { reservation.release() }
        return try render()
    }

    /// Reserves `bytes` when nothing is queued and they fit now, without waiting; nil otherwise (the caller hands
    /// the render to a worker, which may wait: `reserve`). For renders small enough to make on a polling thread.
    public func reserveAtOnce(_ bytes: Int) -> Reservation? {
        condition.withLock {
            guard state.queue.isEmpty, state.bytes + bytes <= limits.bytes else { return nil }
            grant(bytes)
            return Reservation(budget: self, bytes: bytes)
        }
    }

    /// Reserves `bytes` for a render that outlives the call (a body streamed after its headers), waiting and
    /// refusing as `withReservation` does; the bytes come back on `release()` or when the reservation is dropped.
    public func reserve(_ bytes: Int) throws -> Reservation {
        guard bytes <= limits.bytes else { throw RenderRefusal.tooLarge(needed: bytes, budget: limits.bytes) }
        try condition.withLock {
            if state.queue.isEmpty && state.bytes + bytes <= limits.bytes { return grant(bytes) }
            guard state.queue.count < limits.queueLength else {
                state.refused += 1
                throw RenderRefusal.queueFull(retryAfter: retryAfter)
            }
            let ticket = state.nextTicket
            state.nextTicket += 1
            state.queue.append(ticket)
            let deadline = Date(timeIntervalSinceNow: limits.maxWait)
            while !(state.queue.first == ticket && state.bytes + bytes <= limits.bytes) {
                if !condition.wait(until: deadline), Date() >= deadline {
                    state.queue.removeAll { $0 == ticket }
                    state.refused += 1
                    // The one behind may fit now that this one gave up its place.
                    condition.broadcast()
                    throw RenderRefusal.timedOut(retryAfter: retryAfter)
                }
            }
            state.queue.removeFirst()
            grant(bytes)
            // The next in line may fit in what is left.
            condition.broadcast()
        }
        return Reservation(budget: self, bytes: bytes)
    }

    /// Bytes held in a budget until released (once, however often `release` is called).
    public final class Reservation: @unchecked Sendable {
        private let budget: RenderBudget
        private let bytes: Int
        private let released = NSLock()
        private var isReleased = false

        fileprivate init(budget: RenderBudget, bytes: Int) {
            self.budget = budget
            self.bytes = bytes
        }

        deinit { release() }

        /// Gives the bytes back to the budget, waking the renders waiting for them.
        public func release() {
            let first = released.withLock {
                defer { isReleased = true }
                return !isReleased
            }
            if first { budget.release(bytes) }
        }
    }

    private func grant(_ bytes: Int) {
        state.bytes += bytes
        state.inFlight += 1
    }

    fileprivate func release(_ bytes: Int) {
        condition.withLock {
            state.bytes -= bytes
            state.inFlight -= 1
            condition.broadcast()
        }
    }

    /// The seconds a refused client is told to wait: about as long as a render waits in line, at least one.
    private var retryAfter: Int { max(1, Int(limits.maxWait.rounded(.up))) }
}

/// Why a render was not run.
public enum RenderRefusal: Error, Equatable, CustomStringConvertible {
    /// The render alone needs more than the whole budget: it would never run, however long it waited.
    case tooLarge(needed: Int, budget: Int)
    /// As many renders as the queue holds are already waiting.
    case queueFull(retryAfter: Int)
    /// The render waited its longest and memory was still not free.
    case timedOut(retryAfter: Int)

    /// The HTTP status: 503 for a busy server (try again later); 400 for a render too large for any moment, as
    /// IIIF answers a size over the server's limits (a smaller size or region is the client's fix).
    public var status: Int {
        if case .tooLarge = self { return 400 }
        return 503
    }

    /// The `Retry-After` seconds for a busy server; nil when retrying cannot help.
    public var retryAfter: Int? {
        switch self {
        case .tooLarge: return nil
        case let .queueFull(seconds), let .timedOut(seconds): return seconds
        }
    }

    public var description: String {
        switch self {
        case let .tooLarge(needed, budget):
            return "this render needs about \(needed >> 20) MiB of memory and the server renders within \(budget >> 20) MiB "
                + "(--render-memory): ask for a smaller size or region"
        case .queueFull: return "the server is busy: every render slot and its queue are taken; retry later"
        case .timedOut: return "the server is busy: no memory for this render came free in time; retry later"
        }
    }

    /// The response that tells the client.
    public var response: HTTPResponse {
        var response = HTTPResponse.text(status, description)
        if let retryAfter { response.headers.append(("Retry-After", "\(retryAfter)")) }
        return response
    }
}
