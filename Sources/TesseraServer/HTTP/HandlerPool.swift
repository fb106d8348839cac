import Foundation
import Synchronization
import Tessera

/// The threads that make `HTTPAnswer.later` responses, off libmicrohttpd's polling threads: a fixed number of
/// them and a queue of their own, first come first served. The queue is bounded in waiting time, as the render
/// budget's is: a job that has waited its longest is not run, and its request is answered 503 with Retry-After.
/// Its length is bounded by the connections the server accepts (a job is a suspended connection's), not by a
/// count of its own: a burst of cheap renders (a never-seen image's tiles) waits its turn rather than being
/// refused. Renders then meet the render budget on the workers: the pool bounds how many run at once (the CPU),
/// the budget how much memory they hold. One pool serves one `HTTPServer`, which
/// closes it when it stops.
public final class HandlerPool: @unchecked Sendable {
    /// How many workers, and how long a job may wait for one.
    public struct Limits: Sendable, Equatable {
        /// The workers, started with the pool and kept until it closes.
        public var threads: Int
        /// The longest a job waits for a worker before it is refused, in seconds.
        public var maxWait: Double

        /// `threads` workers, each job waiting at most `maxWait` seconds for one.
        public init(threads: Int, maxWait: Double) {
            self.threads = max(1, threads)
            self.maxWait = max(0, maxWait)
        }

        /// The workers unless told otherwise: two per core (a worker may wait on a remote host or on a render
        /// another request started, as well as compute).
        public static var defaultThreads: Int { 2 * ProcessInfo.processInfo.activeProcessorCount }
    }

    /// A job and when it was queued.
    private struct Job {
        let run: @Sendable () -> Void
        let refuse: @Sendable () -> Void
        let queued: DispatchTime
    }

    /// What the pool holds now.
    public struct Usage: Sendable, Equatable {
        /// Jobs running on a worker.
        public var busy: Int
        /// Jobs waiting for one.
        public var queued: Int
        /// Jobs refused since the start (their wait run out, or the pool closed).
        public var refused: Int
    }

    public let limits: Limits
    private let jobs = JobQueue<Job>(capacity: 64)
    private let busy = Atomic(0)
    private let refused = Atomic(0)

    /// A pool of `limits.threads` workers, started now.
    public init(limits: Limits) {
        self.limits = limits
        for index in 0..<limits.threads {
            let thread = Thread { [self] in
                JPEGThreadSetup.prepareCallingThread()
                work()
            }
            thread.name = "tessera worker \(index)"
            thread.start()
        }
    }

    /// Queues `run` for the next free worker; calls `refuse` instead when the pool is closed (at once), or once
    /// the job has waited `maxWait` seconds (on the worker that took it).
    func submit(_ run: @escaping @Sendable () -> Void, refuse: @escaping @Sendable () -> Void) {
        if !jobs.append(Job(run: run, refuse: refuse, queued: .now())) {
            refused.add(1, ordering: .relaxed)
            refuse()
        }
    }

    /// What the pool holds now.
    public var usage: Usage {
        Usage(busy: busy.load(ordering: .relaxed), queued: jobs.count, refused: refused.load(ordering: .relaxed))
    }

    /// Stops the workers once their jobs are done; the jobs still queued are refused.
    func close() {
        let dropped = jobs.close()
        refused.add(dropped.count, ordering: .relaxed)
        for job in dropped { job.refuse() }
    }

    private func work() {
        while let job = jobs.take() {
            let waited = Double(DispatchTime.now().uptimeNanoseconds - job.queued.uptimeNanoseconds) / 1e9
            if waited > limits.maxWait {
                refused.add(1, ordering: .relaxed)
                job.refuse()
            } else {
                busy.add(1, ordering: .relaxed)
                job.run()
                busy.subtract(1, ordering: .relaxed)
            }
        }
    }
}
