import Foundation

/// Jobs that threads wait for: appended up to a bound, taken in the order queued (or the first of a kind asked for
/// first), and closed once, which wakes every thread waiting and hands back the jobs still queued. The worker pool
/// (`HandlerPool`) and the idle-time thread (`IdleTimeThread`) each take their jobs from one.
final class JobQueue<Job>: @unchecked Sendable {
    /// The most jobs waiting at once.
    let limit: Int
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [Job] = []
    private var closed = false

    /// An empty queue of at most `limit` jobs, with room for `capacity` made now (rather than by the first job,
    /// which would pay for the runtime's first instantiation of its storage).
    init(limit: Int = .max, capacity: Int) {
        self.limit = limit
        jobs.reserveCapacity(capacity)
    }

    /// Queues `job` and wakes a thread waiting for one; false, and nothing queued, when `limit` jobs wait already or
    /// the queue is closed.
    func append(_ job: Job) -> Bool {
        condition.withLock {
            guard !closed, jobs.count < limit else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
    }

    /// The first job `preferred` says is one, else (unless `onlyPreferred`) the first; waiting for a job unless
    /// `onlyPreferred`, when none is preferred is nil at once. Nil once the queue is closed.
    func take(preferring preferred: (Job) -> Bool = { _ in false }, onlyPreferred: Bool = false) -> Job? {
        condition.withLock {
            while !onlyPreferred && jobs.isEmpty && !closed { condition.wait() }
            guard !closed, let index = jobs.firstIndex(where: preferred) ?? (onlyPreferred || jobs.isEmpty ? nil : 0)
            else { return nil }
            return jobs.remove(at: index)
        }
    }

    /// How many jobs wait.
    var count: Int { condition.withLock { jobs.count } }

    /// Closes the queue: the threads waiting wake (taking nil), no job is queued any more, and the jobs that were
    /// are returned, in their order.
    @discardableResult
    func close() -> [Job] {
        condition.withLock {
            closed = true
            condition.broadcast()
            defer { jobs.removeAll() }
            return jobs
        }
    }
}
