import Foundation
import Synchronization
import Tessera
import Testing
@testable import TesseraServer

/// The workers that make slow answers off the polling threads: every job run or refused exactly once, in the
/// order queued, a job that waited its longest refused, the queued ones refused when the pool closes; every
/// thread that serves warmed up once, before its first request.
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

    /// The threads a warm-up ran on, by their pthread handle, in order.
    final class WarmedThreads: Sendable {
        private let threads = Mutex<[UInt]>([])

        func record() { threads.withLock { $0.append(UInt(pthread_self())) } }

        var all: [UInt] { threads.withLock { $0 } }
    }

    /// Each worker warms up once as it starts, before its first job, and never again; another thread that calls
    /// `warmUpThisThreadOnce` warms up the first time only.
    @Test func everyWorkerWarmsUpOnceBeforeItsFirstJob() throws {
        let warmed = WarmedThreads(), ran = Mutex<[UInt]>([]), warming = DispatchSemaphore(value: 0)
        let pool = HandlerPool(limits: .init(threads: 2, maxWait: 60), warmUp: {
            warmed.record()
            warming.signal()
        })
        defer { pool.close() }
        let outcomes = Outcomes()
        for job in 0..<8 {
            pool.submit({
                ran.withLock { $0.append(UInt(pthread_self())) }
                outcomes.record(job, "ran")
            }, refuse: { outcomes.record(job, "refused") })
        }
        for _ in 0..<8 { #expect(outcomes.done.wait(timeout: .now() + 10) == .success) }
        for _ in 0..<2 { #expect(warming.wait(timeout: .now() + 10) == .success) }
        let workers = Set(warmed.all)
        #expect(warmed.all.count == 2 && workers.count == 2)
        #expect(Set(ran.withLock { $0 }).isSubset(of: workers))
        let called = DispatchSemaphore(value: 0)
        let thread = Thread {
            pool.warmUpThisThreadOnce()
            pool.warmUpThisThreadOnce()
            called.signal()
        }
        thread.start()
        #expect(called.wait(timeout: .now() + 10) == .success)
        #expect(warmed.all.count == 3 && !workers.contains(warmed.all[2]))
    }

    /// A polling thread that hands a request to a worker warms up while the worker makes the answer: the one
    /// request warms two threads, the worker (as it started) and the polling thread.
    @Test func aPollingThreadWarmsUpWhenItFirstHandsOff() throws {
        let warmed = WarmedThreads()
        let pool = HandlerPool(limits: .init(threads: 1, maxWait: 60), warmUp: { warmed.record() })
        let server = HTTPServer(workers: pool) { _ in .later { .text(200, "made on a worker") } }
        try server.start(port: 0, threads: 1, connectionTimeout: 10)
        defer { server.stop() }
        let port = try #require(server.port)
        for _ in 0..<3 {
            let response = try HTTPClient().get("http://127.0.0.1:\(port)/")
            #expect(response.status == 200)
        }
        #expect(warmed.all.count == 2 && Set(warmed.all).count == 2)
    }
}
