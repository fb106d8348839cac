import Foundation
import Synchronization
import Testing
import Tessera
@testable import TesseraServer

/// The workers that make slow answers off the polling threads: every job run or refused exactly once, in the
/// order queued, a job that waited its longest refused, the queued ones refused when the pool closes; a worker is
/// set up for JPEG before its first job.
@Suite struct HandlerPoolTests {
    /// What happened to each job, by its number.
    final class Outcomes: Sendable {
        private let values = Mutex<[Int: String]>([:])
        let done = DispatchSemaphore(value: 0)

        func record(_ job: Int, _ outcome: String) {
            values.withLock { $0[job] = outcome }
            done.signal()
        }

        var all: [Int: String] { values.withLock { $0 } }
    }

    @Test func jobsWaitForAFreeWorkerAndRunInTheirOrder() {
        let pool = HandlerPool(limits: .init(threads: 1, maxWait: 60))
        defer { pool.close() }
        let outcomes = Outcomes(), release = DispatchSemaphore(value: 0)
        let order = Mutex<[Int]>([])
        let started = DispatchSemaphore(value: 0)
        pool.submit({ started.signal(); release.wait(); outcomes.record(0, "ran") }, refuse: { outcomes.record(0, "refused") })
        started.wait()
        for job in 1...3 {
            pool.submit({ order.withLock { $0.append(job) }; outcomes.record(job, "ran") },
                        refuse: { outcomes.record(job, "refused") })
        }
        #expect(pool.usage == .init(busy: 1, queued: 3, refused: 0))
        release.signal()
        for _ in 0..<4 { #expect(outcomes.done.wait(timeout: .now() + 10) == .success) }
        #expect(outcomes.all == [0: "ran", 1: "ran", 2: "ran", 3: "ran"])
        #expect(order.withLock { $0 } == [1, 2, 3])
    }

    @Test func aJobThatWaitedItsLongestIsRefusedAndClosingRefusesTheQueued() {
        let pool = HandlerPool(limits: .init(threads: 1, maxWait: 0.05))
        let outcomes = Outcomes(), release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        pool.submit({ started.signal(); release.wait(); outcomes.record(0, "ran") }, refuse: { outcomes.record(0, "refused") })
        started.wait()
        pool.submit({ outcomes.record(1, "ran") }, refuse: { outcomes.record(1, "refused") })
        usleep(200_000)
        release.signal()
        for _ in 0..<2 { #expect(outcomes.done.wait(timeout: .now() + 10) == .success) }
        #expect(outcomes.all == [0: "ran", 1: "refused"])
        let blocker = DispatchSemaphore(value: 0)
        pool.submit({ started.signal(); blocker.wait() }, refuse: {})
        started.wait()
        pool.submit({ outcomes.record(2, "ran") }, refuse: { outcomes.record(2, "refused") })
        pool.close()
        blocker.signal()
        #expect(outcomes.done.wait(timeout: .now() + 10) == .success)
        #expect(outcomes.all[2] == "refused")
    }

    /// A worker has libjpeg-turbo set up (`JPEGThreadSetup`) when it starts, before the renders it makes.
    @Test func aWorkerIsSetUpForJPEGBeforeItsFirstJob() {
        let pool = HandlerPool(limits: .init(threads: 1, maxWait: 60))
        defer { pool.close() }
        let outcomes = Outcomes()
        pool.submit({ outcomes.record(0, "\(JPEGThreadSetup.prepareCallingThread())") },
                    refuse: { outcomes.record(0, "refused") })
        #expect(outcomes.done.wait(timeout: .now() + 10) == .success)
        #expect(outcomes.all == [0: "false"])
    }
}
