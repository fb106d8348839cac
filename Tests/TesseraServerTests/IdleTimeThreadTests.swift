import Foundation
import Synchronization
import Testing
import Tessera
@testable import TesseraServer

/// The thread of speculative work: jobs run one at a time in their order, at the idle scheduling class on Linux;
/// past its queue's bound a job is dropped, and closing drops those waiting; a job yields its core at each yield
/// point, and a preempting job runs before those waiting and within the one under way; a job standing by runs the
/// work handed to it, and work handed over after it gave up runs all the same; its thread is set up for JPEG first.
@Suite struct IdleTimeThreadTests {
    @Test func jobsRunInTheirOrderInIdleTimeAndTheQueueIsBounded() {
        let thread = IdleTimeThread(name: "test idle time")
        defer { thread.close() }
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let order = Mutex<[Int]>([]), policy = Mutex<Int32>(-1)
        thread.submit {
            policy.withLock { $0 = sched_getscheduler(0) }
            started.signal()
            release.wait()
        }
        started.wait()
        for job in 0..<IdleTimeThread.maxQueued + 3 {
            thread.submit {
                order.withLock { $0.append(job) }
                done.signal()
            }
        }
        release.signal()
        for _ in 0..<IdleTimeThread.maxQueued { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(done.wait(timeout: .now() + 0.2) == .timedOut, "the jobs past the bound were dropped")
        #expect(order.withLock { $0 } == Array(0..<IdleTimeThread.maxQueued))
        #if os(Linux)
        #expect(policy.withLock { $0 } == 5, "SCHED_IDLE")
        #endif
    }

    @Test func closingDropsTheJobsWaiting() {
        let thread = IdleTimeThread(name: "test idle time")
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        thread.submit {
            started.signal()
            release.wait()
        }
        started.wait()
        for _ in 0..<3 { thread.submit { ran.withLock { $0 += 1 } } }
        thread.close()
        release.signal()
        thread.submit { ran.withLock { $0 += 1 } }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(ran.withLock { $0 } == 0)
    }

    /// Ordinary and preempting jobs alike yield the core at every yield point: a job of eight encodes of 256 iMCU
    /// rows each, a yield point per row and one before each encode ends.
    @Test(arguments: [false, true]) func aJobYieldsItsCoreAtEachYieldPoint(preempting: Bool) {
        let thread = IdleTimeThread(name: "test idle time")
        defer { thread.close() }
        let done = DispatchSemaphore(value: 0)
        thread.submit({
            var planes = JPEGPlanes(size: Tessera.Size(width: 64, height: 4096), gray: false, subsampling: .s420)
            for index in planes.samples.indices { planes.samples[index] = UInt8(truncatingIfNeeded: index * 7) }
            for _ in 0..<8 {
                let copy = planes
                _ = try? copy.encoded(options: EncodeOptions(), name: "test")
            }
            done.signal()
        }, preempting: preempting)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(thread.yields.load(ordering: .relaxed) == 8 * (256 + 1))
    }

    /// The thread has libjpeg-turbo set up (`JPEGThreadSetup`) when it starts, before the jobs that decode.
    @Test func itsThreadIsSetUpForJPEGBeforeItsFirstJob() {
        let thread = IdleTimeThread(name: "test idle time")
        defer { thread.close() }
        let setUpByTheJob = Mutex<Bool?>(nil), done = DispatchSemaphore(value: 0)
        thread.submit {
            setUpByTheJob.withLock { $0 = JPEGThreadSetup.prepareCallingThread() }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(setUpByTheJob.withLock { $0 } == false)
    }

    /// A preempting job queued while another runs is run at that job's next yield point, on its thread, before the
    /// job ends, and before the jobs queued ahead of it; one queued while a preempting job runs waits for it.
    @Test func aPreemptingJobRunsWithinTheJobUnderWay() {
        let thread = IdleTimeThread(name: "test idle time")
        defer { thread.close() }
        let started = DispatchSemaphore(value: 0), queued = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let events = Mutex<[String]>([])
        @Sendable func note(_ event: String) { events.withLock { $0.append(event) } }
        // A job that passes yield points (the rows of encodes) until told everything is queued, then a few more.
        @Sendable func encoding(_ name: String, waitFor gate: DispatchSemaphore?) -> @Sendable () -> Void {
            { [gate] in
                note(name + " started")
                started.signal()
                gate?.wait()
                let planes = JPEGPlanes(size: Tessera.Size(width: 64, height: 1024), gray: false, subsampling: .s420)
                for _ in 0..<4 { _ = try? planes.encoded(options: EncodeOptions(), name: "test") }
                note(name + " ended")
                done.signal()
            }
        }
        thread.submit(encoding("long", waitFor: queued))
        started.wait()
        thread.submit(encoding("ordinary", waitFor: nil))
        thread.submit(encoding("urgent", waitFor: nil), preempting: true)
        thread.submit(encoding("second urgent", waitFor: nil), preempting: true)
        queued.signal()
        for _ in 0..<4 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(events.withLock { $0 } == ["long started", "urgent started", "urgent ended", "second urgent started",
                                           "second urgent ended", "long ended", "ordinary started", "ordinary ended"])
    }

    /// Work handed to a job standing by runs on the thread, before the jobs queued ahead of the stand-by; a job
    /// submitted after it runs once it has run.
    @Test func aJobStandingByRunsTheWorkHandedToIt() {
        let thread = IdleTimeThread(name: "test idle time")
        defer { thread.close() }
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let events = Mutex<[String]>([]), policy = Mutex<Int32>(-1)
        thread.submit {
            started.signal()
            release.wait()
        }
        started.wait()
        thread.submit {
            events.withLock { $0.append("ordinary") }
            done.signal()
        }
        let standBy = thread.standBy()
        release.signal()
        // Past the stand-by's start, most likely: its work is handed to it while it spins.
        Thread.sleep(forTimeInterval: 0.001)
        standBy.hand {
            policy.withLock { $0 = sched_getscheduler(0) }
            events.withLock { $0.append("handed") }
            done.signal()
        }
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(events.withLock { $0 } == ["handed", "ordinary"])
        #if os(Linux)
        #expect(policy.withLock { $0 } == 5, "run on the idle-time thread, SCHED_IDLE")
        #endif
    }

    /// A stand-by whose work comes after `standByLimit` gives up and lets the thread go on; the work then runs as a
    /// preempting job. One handed nothing stops waiting.
    @Test func workHandedAfterTheStandByGaveUpRunsAllTheSame() {
        let thread = IdleTimeThread(name: "test idle time")
        defer { thread.close() }
        let done = DispatchSemaphore(value: 0)
        let late = thread.standBy()
        thread.submit { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success, "the thread went on after the limit")
        late.hand { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        thread.standBy().hand(nil)
        thread.submit { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
    }
}
