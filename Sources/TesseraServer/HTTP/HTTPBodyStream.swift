import Foundation

/// A response body produced while it is sent, for `HTTPResponse.stream`: `produce` runs on a thread of its own
/// and writes chunks; libmicrohttpd reads them as the socket takes them and sends them with chunked transfer
/// encoding. At most `capacity` bytes wait between the two: a producer ahead of a slow client blocks in `write`
/// (back-pressure), and once the client has gone `write` throws, so the producer stops. While the producer has
/// nothing ready, libmicrohttpd's read waits for it, holding one of the server's polling threads: streams are for
/// the few large responses whose first bytes matter, not for every tile.
public final class HTTPBodyStream: @unchecked Sendable {
    /// Thrown by `write` when the client has disconnected.
    public struct Disconnected: Error {}

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var chunks: [[UInt8]] = []
    private var offsetInFirst = 0
    private var buffered = 0
    private var finished = false
    private var failed = false
    private var cancelled = false
    private let capacity: Int

    /// Starts `produce` at once on a thread of its own; an error it throws ends the body early (the client sees
    /// an unterminated chunked body, as it must when a response fails after its headers were sent).
    public init(capacity: Int = 256 * 1024, produce: @escaping @Sendable (HTTPBodyStream) throws -> Void) {
        self.capacity = capacity
        let thread = Thread { [self] in
            var succeeded = true
            do { try produce(self) } catch { succeeded = false }
            condition.withLock {
                finished = true
                failed = !succeeded
                condition.broadcast()
            }
        }
        thread.start()
    }

    /// Queues `bytes` for the client, waiting while `capacity` bytes are already queued.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        try condition.withLock {
            while buffered >= capacity && !cancelled { condition.wait() }
            if cancelled { throw Disconnected() }
            chunks.append([UInt8](bytes))
            buffered += bytes.count
            condition.broadcast()
        }
    }

    /// What libmicrohttpd's content reader returns: bytes copied into `target`, or nil at the end of the body
    /// (`failed` when it ended early). Waits while the producer has nothing ready.
    func read(into target: UnsafeMutableRawBufferPointer) -> (count: Int?, failed: Bool) {
        condition.withLock {
            while chunks.isEmpty && !finished { condition.wait() }
            guard let first = chunks.first else { return (nil, failed) }
            let count = min(target.count, first.count - offsetInFirst)
            first.withUnsafeBytes { source in
                target.baseAddress!.copyMemory(from: source.baseAddress! + offsetInFirst, byteCount: count)
            }
            offsetInFirst += count
            if offsetInFirst == first.count {
                chunks.removeFirst()
                offsetInFirst = 0
            }
            buffered -= count
            condition.broadcast()
            return (count, false)
        }
    }

    /// The response is gone (sent, or the client disconnected): a waiting producer is released.
    func cancel() {
        condition.withLock {
            cancelled = true
            chunks.removeAll()
            buffered = 0
            condition.broadcast()
        }
    }
}
