import CMicroHTTPD
import Foundation

/// The connections a server has suspended (`MHD_suspend_connection`) while something off the polling threads
/// makes their response or the next bytes of their body, each resumed exactly once: by whoever finishes that
/// work, or by `resumeAll` before the daemon stops (libmicrohttpd must not be stopped with a connection
/// suspended). A suspended connection does not time out and costs its polling thread nothing.
final class SuspendedConnections: @unchecked Sendable {
    /// One suspension, for resuming it: stale once resumed, so a late `resume` cannot touch a connection that
    /// libmicrohttpd has freed and reused since.
    struct Ticket: Hashable, Sendable {
        fileprivate let number: UInt64
    }

    /// libmicrohttpd's connection handle, used only under the lock while suspended.
    private struct Connection: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let lock = NSLock()
    // Guarded by `lock`. Its storage is made with the server: made by the first suspension, it cost that request
    // the runtime's first instantiation of the dictionary's storage type (about a tenth of a millisecond).
    private var suspended = [Ticket: Connection](minimumCapacity: 64)
    private var nextNumber: UInt64 = 0
    private var stopping = false

    /// Suspends `connection` (on its polling thread, in the access handler or a content reader, as libmicrohttpd
    /// requires) and returns the ticket that resumes it; nil, leaving it running, once the server is stopping.
    func suspend(_ connection: OpaquePointer) -> Ticket? {
        lock.withLock {
            guard !stopping else { return nil }
            nextNumber += 1
            let ticket = Ticket(number: nextNumber)
            suspended[ticket] = Connection(pointer: connection)
            MHD_suspend_connection(connection)
            return ticket
        }
    }

    /// Resumes the connection `ticket` suspended, unless it was resumed already: its polling thread then calls
    /// the access handler (or the content reader) again.
    func resume(_ ticket: Ticket) {
        lock.withLock {
            if let connection = suspended.removeValue(forKey: ticket) { MHD_resume_connection(connection.pointer) }
        }
    }

    /// Whether `resumeAll` has been called: nothing is suspended any more.
    var isStopping: Bool { lock.withLock { stopping } }

    /// Resumes every suspended connection and refuses to suspend any more: called before the daemon stops.
    func resumeAll() {
        lock.withLock {
            stopping = true
            for connection in suspended.values { MHD_resume_connection(connection.pointer) }
            suspended.removeAll()
        }
    }
}
