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
/// the job in progress at its next yield point, unless that job preempted too. The thread starts with the object
/// (not with its first job, which would pay for its creation on the thread that queued it), and stops with
/// `close`.
final class IdleTimeThread: @unchecked Sendable {
    /// The most jobs waiting at once.
    static let maxQueued = 64
    /// The longest a job runs between two steps aside, in nanoseconds.
    static let stepAsideInterval: UInt64 = 100_000
    /// How long a step aside sleeps, in nanoseconds: long enough for the thread to be switched out, so that the
    /// scheduler picks the thread waiting (a 1 us sleep ended before that, and the thread ran on); the thread's
    /// timer slack is 1 ns, so the sleep is this long, 13 us in all with the switches.
    static let stepAsideSleep = 10_000

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
                if !inPreempting, let preempting = nextPreempting() {
                    inPreempting = true
                    preempting()
                    inPreempting = false
                }
                let now = DispatchTime.now().uptimeNanoseconds
                guard now - lastStep >= Self.stepAsideInterval else { return }
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
    /// would never be made.
    func submit(_ job: @escaping @Sendable () -> Void, preempting: Bool = false) {
        condition.withLock {
            guard !closed, queue.count < Self.maxQueued else { return }
            queue.append((job, preempting))
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

    /// The next job (the first preempting one, else the first), waiting for one; nil once closed.
    private func next() -> (job: @Sendable () -> Void, preempts: Bool)? {
        condition.withLock {
            while queue.isEmpty && !closed { condition.wait() }
            guard !closed else { return nil }
            return queue.remove(at: queue.firstIndex { $0.preempts } ?? 0)
        }
    }

    /// The first preempting job waiting, taken from the queue, or nil (not waiting for one).
    private func nextPreempting() -> (@Sendable () -> Void)? {
        condition.withLock {
            guard !closed, let index = queue.firstIndex(where: { $0.preempts }) else { return nil }
            return queue.remove(at: index).job
        }
    }
}
