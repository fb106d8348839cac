import Dispatch
import Synchronization
import TesseraTiling

/// Values made on demand and shared by every thread: bounded by the bytes they hold (`cost`), the least recently
/// used dropped first, and made once however many ask at the same time (the others wait for the one making it
/// and share its value or its error, which is not kept). What the server's rendered responses and JPEG 2000's
/// decoded codestream tiles are kept in.
///
/// Its lookups are `@inlinable`, so that a cache of another module (the server's responses) is specialized for its
/// keys and values where it is used: generic, each call looked its types' metadata up at run time, a hit took
/// 350 ns instead of 65, a miss 1.7 us instead of 0.7.
public final class SharedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// A value being made, which identical requests wait for.
    @usableFromInline
    final class Flight: Sendable {
        @usableFromInline let result = Mutex<Result<Value, any Error>?>(nil)
        @usableFromInline let isFinished = Atomic(false)
        @usableFromInline let done = DispatchGroup()

        @inlinable
        init() { done.enter() }

        /// Gives the waiters `result`.
        @inlinable
        func finish(with result: Result<Value, any Error>) {
            self.result.withLock { $0 = result }
            isFinished.store(true, ordering: .releasing)
            done.leave()
        }

        /// The maker's result, once it has one: watched for `SharedCache.spinLimit` (`BriefWatch`), then slept for.
        @inlinable
        func wait() -> Result<Value, any Error> {
            if !BriefWatch.until({ isFinished.load(ordering: .acquiring) }, forNanoseconds: SharedCache.spinLimit) {
                done.wait()
            }
            return result.withLock { $0! }
        }
    }

    /// What a caller of `value` is to do: take a held value, wait for another's, or make it; or, not joining
    /// another's, leave it.
    @usableFromInline
    enum Role {
        case held(Value), waiter(Flight), maker(Flight), busy
    }

    @usableFromInline
    struct State {
        @usableFromInline var values = LRUList<Key, Value>()
        @usableFromInline var bytes = 0
        @usableFromInline var flights: [Key: Flight] = [:]
        @usableFromInline var lookups = CacheLookups()
        @inlinable init() {}
    }

    /// How long a caller waiting for another's value watches for it before it sleeps, in nanoseconds: about what
    /// waking a sleeping thread costs when its CPU has halted (`BriefWatch`), so that a value made in a fraction of
    /// a millisecond (a render, a thumbnail's planes) reaches its waiter at once, and a longer wait costs at most
    /// twice what it would.
    @usableFromInline
    static var spinLimit: UInt64 { 200_000 }

    /// The most memory the values may hold together, in bytes; 0 keeps none (identical requests in flight are
    /// still made once).
    public let byteLimit: Int
    @usableFromInline let cost: @Sendable (Key, Value) -> Int
    @usableFromInline let state = Mutex(State())

    /// A cache holding at most `byteLimit` bytes, an entry costing `cost(key, value)` bytes.
    public init(byteLimit: Int, cost: @escaping @Sendable (Key, Value) -> Int) {
        self.byteLimit = max(0, byteLimit)
        self.cost = cost
    }

    /// How many values are held, and the memory they hold, in bytes.
    public var usage: (count: Int, bytes: Int) { state.withLock { ($0.values.count, $0.bytes) } }

    /// How callers were answered since the start.
    public var lookups: CacheLookups { state.withLock(\.lookups) }

    /// The value held for `key`, counted as a hit unless not `counted`, or nil (neither waiting nor making, nor
    /// counted): for a caller that must not wait, and asks `value` elsewhere on a miss.
    @inlinable
    public func heldValue(for key: Key, counted: Bool = true) -> Value? {
        state.withLock { state in
            guard let held = state.values.use(key) else { return nil }
            if counted { state.lookups.hits += 1 }
            return held
        }
    }

    /// Whether a value for `key` is held or being made, neither counted nor marked as used: for a caller deciding
    /// whether to make it ahead of its use.
    @inlinable
    public func holdsOrMakes(_ key: Key) -> Bool {
        state.withLock { $0.values.peek(key) != nil || $0.flights[key] != nil }
    }

    /// The value for `key`: held, or being made by another caller (waited for, unless not `joining`: then
    /// `ValueBeingMade` is thrown), or made by `make` now and kept; counted in `lookups` unless not `counted` (a
    /// value made ahead of its use, which no caller asked for yet).
    @inlinable
    public func value(for key: Key, counted: Bool = true, joining: Bool = true, make: () throws -> Value) throws -> Value {
        let step = counted ? 1 : 0
        let role: Role = state.withLock { state in
            if let held = state.values.use(key) {
                state.lookups.hits += step
                return .held(held)
            }
            if let flight = state.flights[key] {
                guard joining else { return .busy }
                state.lookups.coalesced += step
                return .waiter(flight)
            }
            state.lookups.misses += step
            let flight = Flight()
            state.flights[key] = flight
            return .maker(flight)
        }
        switch role {
        case let .held(value):
            return value
        case let .waiter(flight):
            return try flight.wait().get()
        case .busy:
            throw ValueBeingMade()
        case let .maker(flight):
            let result = Result { try make() }
            state.withLock { state in
                state.flights[key] = nil
                if case let .success(value) = result { store(value, for: key, in: &state) }
            }
            flight.finish(with: result)
            return try result.get()
        }
    }

    /// Keeps `value` unless it alone is over the limit, dropping the least recently used to stay within it.
    @inlinable
    func store(_ value: Value, for key: Key, in state: inout State) {
        let entryCost = cost(key, value)
        guard entryCost <= byteLimit else { return }
        let cost = self.cost
        var bytes = state.bytes + entryCost - (state.values.set(value, for: key).map { cost(key, $0) } ?? 0)
        let limit = byteLimit
        if bytes > limit {
            state.values.evictOldest(keeping: [key], while: { bytes > limit }) { key, evicted in
                bytes -= cost(key, evicted)
            }
        }
        state.bytes = bytes
    }
}

/// How callers of a cache (`SharedCache`) were answered since the start: from a held value, by waiting for an
/// identical one being made, or by making it.
public struct CacheLookups: Sendable, Equatable {
    public var hits = 0
    public var coalesced = 0
    public var misses = 0
}

/// What `SharedCache.value` throws to a caller that does not join another's making of the value it asks for.
public struct ValueBeingMade: Error {
    @usableFromInline init() {}
}
