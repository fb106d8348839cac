import Tessera

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

    private let cache: SharedCache<String, Response>

    /// The most memory the responses may hold together, in bytes; 0 keeps none (identical requests in flight are
    /// still rendered once).
    public var byteLimit: Int { cache.byteLimit }

    /// A cache holding at most `byteLimit` bytes of responses.
    public init(byteLimit: Int) {
        cache = SharedCache(byteLimit: byteLimit) { key, response in response.byteCost(key: key) }
    }

    /// How many responses are held, and the memory they hold, in bytes.
    public var usage: (count: Int, bytes: Int) { cache.usage }

    /// How requests were answered since the start.
    public var lookups: CacheLookups { cache.lookups }

    /// The response held for `key`, if there is one: what a polling thread may answer with, without waiting. Not
    /// counted in `lookups` when `madeAhead` (no client asked for it).
    public func heldResponse(for key: String, madeAhead: Bool = false) -> Response? {
        cache.heldValue(for: key, counted: !madeAhead)
    }

    /// The response for `key`: held, or being rendered by another request (waited for), or rendered by `render`
    /// now and kept. An error from `render` reaches every request waiting for it and is not kept. When `madeAhead`
    /// (a render made in idle time before a client asks for it, whose request then counts as a hit), not counted
    /// in `lookups`, and one being rendered already is left to its maker: `ValueBeingMade` is thrown.
    public func response(for key: String, madeAhead: Bool = false, render: () throws -> Response) throws -> Response {
        try cache.value(for: key, counted: !madeAhead, joining: !madeAhead, make: render)
    }
}
