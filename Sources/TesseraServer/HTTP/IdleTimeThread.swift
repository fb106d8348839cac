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
/// request in progress yet to ask about). The steps cost the jobs some 13% of their time. The thread starts with
/// the object (not with its first job, which would pay for its creation on the thread that queued it), and stops
/// with `close`.
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
    private var queue: [@Sendable () -> Void] = []
    private var closed = false
    /// How many times the jobs stepped aside (read by tests).
    let stepsAside = Atomic(0)

    /// The thread, named `name`, started.
    init(name: String) {
        queue.reserveCapacity(Self.maxQueued)
        let thread = Thread { [self] in
            _ = tessera_thread_run_only_when_idle()
            var lastStep = DispatchTime.now().uptimeNanoseconds
            let stepAside = { [self] in
                let now = DispatchTime.now().uptimeNanoseconds
                guard now - lastStep >= Self.stepAsideInterval else { return }
                var pause = timespec(tv_sec: 0, tv_nsec: Self.stepAsideSleep)
                nanosleep(&pause, nil)
                stepsAside.add(1, ordering: .relaxed)
                lastStep = DispatchTime.now().uptimeNanoseconds
            }
            while let job = next() {
                lastStep = DispatchTime.now().uptimeNanoseconds
                CooperativeYield.run(stepAside: stepAside, job)
            }
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
