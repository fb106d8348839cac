import CServerShims
import Foundation
import Synchronization
import Tessera

/// One thread that runs jobs only in the machine's idle time (on Linux, `SCHED_IDLE`: any other thread that wants
/// its core takes it at once): speculative work, such as the renders an info.json foresees
/// (`HTTPResponse.idleFollowUp`), which must take no core from a request or from a client reading its response.
/// Jobs run one at a time, in the order queued; past `maxQueued` waiting, a new one is dropped (a guess about what
/// clients will ask, not a promise). A job steps aside at its yield points (`CooperativeYield`) every
/// `stepAsideInterval`: it sleeps `stepAsideSleep`, so that a request's thread waiting for the core runs, which
/// the idle class alone did not ensure (a polling thread preempted by its client on that core, before it had
/// taken the client's next request, waited 1.2 ms there with the other core idle, and nothing counted that
/// request in progress yet to ask about). The steps cost the jobs some 13% of their time. A job queued as
/// preempting (what a client asks for next at once) runs before the others waiting, and runs at once, nested in
/// the job in progress at its next yield point, unless that job preempted too; it does not step aside, as the
/// request it is for comes next: a step's 10 us sleep, with the core left idle, took 40-155 us to end on the
/// benchmarks' machine (a halted virtual CPU's wake-up), two of them in a new image's thumbnail planes' 0.15 ms
/// decode. The thread starts with the object (not with its first job, which would pay for its creation on the
/// thread that queued it), and stops with `close`.
final class IdleTimeThread: @unchecked Sendable {
    /// The most jobs waiting at once.
    static let maxQueued = 64
    /// The longest a job runs between two steps aside, in nanoseconds.
    static let stepAsideInterval: UInt64 = 100_000
    /// How long a step aside sleeps, in nanoseconds: long enough for the thread to be switched out, so that the
    /// scheduler picks the thread waiting (a 1 us sleep ended before that, and the thread ran on); the thread's
    /// timer slack is 1 ns, so the sleep is this long, 13 us in all with the switches.
    static let stepAsideSleep = 10_000
    /// The longest a job standing by (`standBy`) waits for its work, in nanoseconds: far longer than what it waits
    /// for (an image opened on a polling thread, a fraction of a millisecond).
    static let standByLimit: UInt64 = 5_000_000

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [(job: @Sendable () -> Void, preempts: Bool)] = []
    private var closed = false
    /// How many times the jobs stepped aside (read by tests).
    let stepsAside = Atomic(0)

    /// The thread, named `name`, started.
    init(name: String) {
        queue.reserveCapacity(Self.maxQueued)
        let thread = Thread { [self] in
            _ = tessera_thread_run_only_when_idle()
            var lastStep = DispatchTime.now().uptimeNanoseconds
            // Whether the job running (or the one interrupted) preempted: none is nested in it.
            var inPreempting = false
            let stepAside = { [self] in
                if !inPreempting, let (preempting, _) = next(preemptingOnly: true) {
                    inPreempting = true
                    preempting()
                    inPreempting = false
                }
                let now = DispatchTime.now().uptimeNanoseconds
                guard !inPreempting, now - lastStep >= Self.stepAsideInterval else { return }
                var pause = timespec(tv_sec: 0, tv_nsec: Self.stepAsideSleep)
                nanosleep(&pause, nil)
                stepsAside.add(1, ordering: .relaxed)
                lastStep = DispatchTime.now().uptimeNanoseconds
            }
            while let (job, preempts) = next() {
                inPreempting = preempts
                lastStep = DispatchTime.now().uptimeNanoseconds
                CooperativeYield.run(stepAside: stepAside, job)
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
        condition.withLock {
            guard !closed, queue.count < Self.maxQueued else { return false }
            queue.append((job, preempting))
            condition.signal()
            return true
        }
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

        /// Spins until the work is handed over, then runs it; gives up after `standByLimit`.
        fileprivate func waitAndRun() {
            let deadline = DispatchTime.now().uptimeNanoseconds + IdleTimeThread.standByLimit
            while state.load(ordering: .acquiring) == State.waiting.rawValue {
                if DispatchTime.now().uptimeNanoseconds >= deadline,
                   state.compareExchange(expected: State.waiting.rawValue, desired: State.givenUp.rawValue,
                                         ordering: .acquiringAndReleasing).exchanged {
                    return
                }
                sched_yield()
            }
            work.withLock { $0 }?()
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

    /// The next job taken from the queue: the first preempting one, else (unless `preemptingOnly`) the first,
    /// waiting for one (unless `preemptingOnly`: then nil when none waits); nil once closed.
    private func next(preemptingOnly: Bool = false) -> (job: @Sendable () -> Void, preempts: Bool)? {
        condition.withLock {
            while !preemptingOnly && queue.isEmpty && !closed { condition.wait() }
            guard !closed, let index = queue.firstIndex(where: { $0.preempts }) ?? (preemptingOnly ? nil : 0) else {
                return nil
            }
            return queue.remove(at: index)
        }
    }
}
