import CServerShims
import Foundation
import Synchronization
import Tessera

/// One thread that runs jobs only in the machine's idle time (on Linux, `SCHED_IDLE`): speculative work, such as
/// the renders an info.json foresees (`HTTPResponse.idleFollowUp`), which must take no core from a request or from
/// a client reading its response. Jobs run one at a time, in the order queued; past `maxQueued` waiting, a new one
/// is dropped (a guess about what clients will ask, not a promise). A job yields its core (`sched_yield`) at each
/// of its yield points (`CooperativeYield`), so that a request's thread waiting for that core runs: the idle class
/// alone did not ensure it. On the benchmarks' machine (Linux 6.18), a polling thread woken onto the idle-time
/// thread's core waited there until the job next slept, 0.3-1.2 ms, with the other core idle; a system call that
/// does not reschedule (`getppid`) did not end such a wait, a yield (0.2 us) did.
/// A job queued as preempting (what a client asks for next at once) runs before the others waiting, and runs at
/// once, nested in the job in progress at its next yield point, unless that job preempted too. The thread starts
/// with the object (not with its first job, which would pay for its creation on the thread that queued it), and
/// stops with `close`.
final class IdleTimeThread: @unchecked Sendable {
    /// The most jobs waiting at once.
    static let maxQueued = 64
    /// The longest a job standing by (`standBy`) waits for its work, in nanoseconds: far longer than what it waits
    /// for (an image opened on a polling thread, a fraction of a millisecond).
    static let standByLimit: UInt64 = 5_000_000

    private let queue = JobQueue<(job: @Sendable () -> Void, preempts: Bool)>(limit: maxQueued, capacity: maxQueued)
    /// How many times the jobs yielded their core (read by tests).
    let yields = Atomic(0)

    /// The thread, named `name`, started.
    init(name: String) {
        let thread = Thread { [self] in
            _ = tessera_thread_run_only_when_idle()
            JPEGThreadSetup.prepareCallingThread()
            // Whether the job running (or the one interrupted) preempted: none is nested in it.
            var inPreempting = false
            let yieldPoint = { [self] in
                if !inPreempting, let (preempting, _) = queue.take(preferring: { $0.preempts }, onlyPreferred: true) {
                    inPreempting = true
                    preempting()
                    inPreempting = false
                }
                sched_yield()
                yields.add(1, ordering: .relaxed)
            }
            while let (job, preempts) = queue.take(preferring: { $0.preempts }) {
                inPreempting = preempts
                CooperativeYield.run(stepAside: yieldPoint, job)
            }
        }
        thread.name = name
        thread.start()
    }

    /// Queues `job`; dropped when `maxQueued` jobs wait already or the thread is closed. A `preempting` job runs
    /// before the others waiting, and at the next yield point of the job in progress (nested in it) unless that one
    /// preempted too: it must not wait for what the job it interrupts may be making (a `SharedCache` value), which
    /// would never be made. Returns whether it was queued.
    @discardableResult
    func submit(_ job: @escaping @Sendable () -> Void, preempting: Bool = false) -> Bool {
        queue.append((job, preempting))
    }

    /// A preempting job queued now whose work is handed to it later (`StandBy.hand`), for work that can start only
    /// once its caller has done something, such as opening the image an info.json describes. The job waits for it
    /// by spinning, at the thread's idle priority and for at most `standByLimit`, so that the work starts the moment
    /// it is handed over, on a core the caller leaves idle, while the caller goes on: a thread woken then would start
    /// it only after its wake-up (a halted virtual CPU's took 0.14-0.17 ms on the benchmarks' machine), or after the
    /// caller (woken on its core). Work handed over later than that is queued as a preempting job then.
    func standBy() -> StandBy {
        let standBy = StandBy(thread: self)
        if !submit({ standBy.waitAndRun() }, preempting: true) { standBy.giveUp() }
        return standBy
    }

    /// The job `standBy` queued, waiting for its work.
    final class StandBy: Sendable {
        private let thread: IdleTimeThread
        private let state = Atomic(State.waiting.rawValue)
        private let work = Mutex<(@Sendable () -> Void)?>(nil)

        private enum State: Int { case waiting, handed, givenUp }

        fileprivate init(thread: IdleTimeThread) { self.thread = thread }

        /// Hands `work` to the job (nil: there is none, and it stops waiting), or queues it as a preempting job when
        /// the job has given up waiting.
        func hand(_ work: (@Sendable () -> Void)?) {
            self.work.withLock { $0 = work }
            if !state.compareExchange(expected: State.waiting.rawValue, desired: State.handed.rawValue,
                                      ordering: .acquiringAndReleasing).exchanged, let work {
                thread.submit(work, preempting: true)
            }
        }

        fileprivate func giveUp() { state.store(State.givenUp.rawValue, ordering: .releasing) }

        /// Watches until the work is handed over (`BriefWatch`), then runs it; gives up after `standByLimit` unless
        /// it is handed over meanwhile.
        fileprivate func waitAndRun() {
            let handed = BriefWatch.until({ state.load(ordering: .acquiring) != State.waiting.rawValue },
                                          forNanoseconds: IdleTimeThread.standByLimit)
            if !handed, state.compareExchange(expected: State.waiting.rawValue, desired: State.givenUp.rawValue,
                                              ordering: .acquiringAndReleasing).exchanged {
                return
            }
            work.withLock { $0 }?()
        }
    }

    /// Drops the jobs still waiting and stops the thread once its job is done.
    func close() { queue.close() }
}
