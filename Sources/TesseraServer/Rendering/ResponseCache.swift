import Foundation
import Synchronization
import TesseraTiling

/// The encoded bytes of rendered responses, shared by every client: keyed by the canonical request and the
/// identity of what it was rendered from (so a changed file misses), bounded in bytes, the least recently used
/// dropped first. Identical requests that arrive while one is being rendered wait for it and share its bytes: one
/// render however many ask. Stored tiles do not come here; they are read as they are.
public final class ResponseCache: Sendable {
    /// One rendered response.
    public struct Response: Sendable {
        public let bytes: [UInt8]
        public let mediaType: String

        /// A response of `bytes` encoded as `mediaType`.
        public init(bytes: [UInt8], mediaType: String) {
            self.bytes = bytes
            self.mediaType = mediaType
        }

        /// The memory an entry holds, estimated: its bytes, its key and the bookkeeping.
        fileprivate func byteCost(key: String) -> Int { bytes.count + key.utf8.count + 128 }
    }

    /// A render in progress, which identical requests wait for.
    private final class Flight: Sendable {
        let done = DispatchGroup()
        let result = Mutex<Result<Response, any Error>?>(nil)

        init() { done.enter() }
    }

    private struct State {
        var responses = LRUList<String, Response>()
        var bytes = 0
        var flights: [String: Flight] = [:]
        var lookups = Lookups()
    }

    /// How requests were answered since the start: from a held response, by waiting for an identical render in
    /// flight, or by rendering.
    public struct Lookups: Sendable, Equatable {
        public var hits = 0
        public var coalesced = 0
        public var misses = 0
    }

    /// The most memory the responses may hold together, in bytes; 0 keeps none (identical requests in flight are
    /// still rendered once).
    public let byteLimit: Int
    private let state = Mutex(State())

    /// A cache holding at most `byteLimit` bytes of responses.
    public init(byteLimit: Int) {
        self.byteLimit = max(0, byteLimit)
    }

    /// How many responses are held, and the memory they hold, in bytes.
    public var usage: (count: Int, bytes: Int) { state.withLock { ($0.responses.count, $0.bytes) } }

    /// How requests were answered since the start.
    public var lookups: Lookups { state.withLock(\.lookups) }

    /// The response for `key`: held, or being rendered by another request (waited for), or rendered by `render`
    /// now and kept. An error from `render` reaches every request waiting for it and is not kept.
    public func response(for key: String, render: () throws -> Response) throws -> Response {
        enum Role { case held(Response), waiter(Flight), renderer(Flight) }
        let role: Role = state.withLock { state in
            if let held = state.responses.use(key) {
                state.lookups.hits += 1
                return .held(held)
            }
            if let flight = state.flights[key] {
                state.lookups.coalesced += 1
                return .waiter(flight)
            }
            state.lookups.misses += 1
            let flight = Flight()
            state.flights[key] = flight
            return .renderer(flight)
        }
        switch role {
        case let .held(response):
            return response
        case let .waiter(flight):
            flight.done.wait()
            return try flight.result.withLock { $0! }.get()
        case let .renderer(flight):
            let result = Result { try render() }
            flight.result.withLock { $0 = result }
            state.withLock { state in
                state.flights[key] = nil
                if case let .success(response) = result { store(response, for: key, in: &state) }
            }
            flight.done.leave()
            return try result.get()
        }
    }

    /// Keeps `response` unless it alone is over the limit, dropping the least recently used to stay within it.
    private func store(_ response: Response, for key: String, in state: inout State) {
        let cost = response.byteCost(key: key)
        guard cost <= byteLimit else { return }
        var bytes = state.bytes + cost - (state.responses.set(response, for: key)?.byteCost(key: key) ?? 0)
        let limit = byteLimit
        state.responses.evictOldest(keeping: [key], while: { bytes > limit }) { key, evicted in
            bytes -= evicted.byteCost(key: key)
        }
        state.bytes = bytes
    }
}
