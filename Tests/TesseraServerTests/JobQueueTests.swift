import Foundation
import Testing
@testable import TesseraServer

/// The queue the workers and the idle-time thread take their jobs from: in order, the kind asked for first, up to
/// its bound; closing it wakes a thread waiting and hands back what was queued.
@Suite struct JobQueueTests {
    @Test func jobsComeInTheirOrderOrTheKindAskedForFirst() {
        let queue = JobQueue<Int>(limit: 4, capacity: 4)
        #expect([1, 2, 3, 4, 5].map { queue.append($0) } == [true, true, true, true, false], "at most 4 wait")
        #expect(queue.count == 4)
        #expect(queue.take(preferring: { $0 % 2 == 0 }) == 2)
        #expect(queue.take(preferring: { $0 > 10 }, onlyPreferred: true) == nil, "none of the kind: nil at once")
        #expect(queue.take() == 1)
        #expect(queue.take(preferring: { $0 == 4 }, onlyPreferred: true) == 4)
        #expect(queue.count == 1)
    }

    @Test func closingWakesAWaitingThreadAndHandsBackTheJobsQueued() {
        let empty = JobQueue<Int>(capacity: 1)
        let woke = DispatchSemaphore(value: 0)
        Thread {
            if empty.take() == nil { woke.signal() }
        }.start()
        usleep(50_000)
        #expect(empty.close().isEmpty)
        #expect(woke.wait(timeout: .now() + 10) == .success, "the waiting thread took nil")

        let queue = JobQueue<Int>(capacity: 2)
        _ = queue.append(1)
        _ = queue.append(2)
        #expect(queue.close() == [1, 2])
        #expect(!queue.append(3), "nothing is queued once closed")
        #expect(queue.take() == nil && queue.count == 0)
    }
}
