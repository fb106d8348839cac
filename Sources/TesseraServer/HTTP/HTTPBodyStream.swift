import Foundation

/// A response body produced while it is sent, for `HTTPResponse.stream`: `produce` runs on a thread of its own
/// and writes chunks; libmicrohttpd reads them as the socket takes them and sends them with chunked transfer
/// encoding. At most `capacity` bytes wait between the two: a producer ahead of a slow client blocks in `write`
/// (back-pressure), and once the client has gone `write` throws, so the producer stops. While the producer has
/// nothing ready, the connection is suspended (its polling thread serves the others) and resumed by the
/// producer's next `write` or its end.
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
    /// What resumes the reader's suspended connection, while it waits for bytes.
    private var wake: (@Sendable () -> Void)?
    private let capacity: Int

    /// Starts `produce` at once on a thread of its own; an error it throws ends the body early (the client sees
    /// an unterminated chunked body, as it must when a response fails after its headers were sent).
    public init(capacity: Int = 256 * 1024, produce: @escaping @Sendable (HTTPBodyStream) throws -> Void) {
        self.capacity = capacity
        let thread = Thread { [self] in
            var succeeded = true
            do { try produce(self) } catch { succeeded = false }
            let wake = condition.withLock {
                finished = true
                failed = !succeeded
                condition.broadcast()
                return takeWake()
            }
            wake?()
        }
        thread.start()
    }

    /// Queues `bytes` for the client, waiting while `capacity` bytes are already queued.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        let wake = try condition.withLock {
            while buffered >= capacity && !cancelled { condition.wait() }
            if cancelled { throw Disconnected() }
            chunks.append([UInt8](bytes))
            buffered += bytes.count
            condition.broadcast()
            return takeWake()
        }
        wake?()
    }

    /// What a read found.
    enum Read: Equatable {
        /// Bytes copied into the target.
        case bytes(Int)
        /// The end of the body (`failed` when it ended early).
        case end(failed: Bool)
        /// Nothing ready yet: the reader's connection is suspended until the producer writes or ends.
        case waiting
    }

    /// What libmicrohttpd's content reader returns, without waiting: bytes copied into `target`, the end, or,
    /// while the producer has nothing ready, `waiting` once `suspend` has suspended the connection and given what
    /// resumes it (called once, when the producer writes or ends); the end with a failure when `suspend` cannot.
    func read(into target: UnsafeMutableRawBufferPointer, suspend: () -> (@Sendable () -> Void)?) -> Read {
        condition.withLock {
            if chunks.isEmpty && !finished {
                // Asked again while already waiting: the connection is suspended still.
                if wake != nil { return .waiting }
                guard let resume = suspend() else { return .end(failed: true) }
                wake = resume
                return .waiting
            }
            guard let first = chunks.first else { return .end(failed: failed) }
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
            return .bytes(count)
        }
    }

    /// The waiting reader's resume, taken so that it is called once (under the lock; called after it).
    private func takeWake() -> (@Sendable () -> Void)? {
        defer { wake = nil }
        return wake
    }

    /// The response is gone (sent, or the client disconnected): a waiting producer is released.
    func cancel() {
        condition.withLock {
            cancelled = true
            chunks.removeAll()
            buffered = 0
            wake = nil
            condition.broadcast()
        }
    }
}
