import CServerShims
import Foundation

/// One thread that runs jobs only in the machine's idle time (on Linux, `SCHED_IDLE`: any other thread that wants
/// its core takes it at once): speculative work, such as the renders an info.json foresees
/// (`HTTPResponse.idleFollowUp`), which must take no core from a request or from a client reading its response.
/// Jobs run one at a time, in the order queued; past `maxQueued` waiting, a new one is dropped (a guess about what
/// clients will ask, not a promise). The thread starts with the object (not with its first job, which would pay
/// for its creation on the thread that queued it), and stops with `close`.
final class IdleTimeThread: @unchecked Sendable {
    /// The most jobs waiting at once.
    static let maxQueued = 64

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [@Sendable () -> Void] = []
    private var closed = false

    /// The thread, named `name`, started.
    init(name: String) {
        queue.reserveCapacity(Self.maxQueued)
        let thread = Thread { [self] in
            _ = tessera_thread_run_only_when_idle()
            while let job = next() { job() }
        }
        thread.name = name
        thread.start()
    }

    /// Queues `job`; dropped when `maxQueued` jobs wait already or the thread is closed.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.withLock {
            guard !closed, queue.count < Self.maxQueued else { return }
            queue.append(job)
            condition.signal()
        }
    }

    /// Drops the jobs still waiting and stops the thread once its job is done.
    func close() {
        condition.withLock {
            closed = true
            queue.removeAll()
            condition.broadcast()
        }
    }

    /// The next job, waiting for one; nil once closed.
    private func next() -> (@Sendable () -> Void)? {
        condition.withLock {
            while queue.isEmpty && !closed { condition.wait() }
            return closed ? nil : queue.removeFirst()
        }
    }
}
