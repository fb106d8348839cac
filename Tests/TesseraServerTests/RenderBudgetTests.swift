import Foundation
import Synchronization
import Testing
@testable import TesseraServer

@Suite struct RenderBudgetTests {
    private func budget(_ bytes: Int, queue: Int = 4, wait: Double = 600) -> RenderBudget {
        RenderBudget(limits: .init(bytes: bytes, queueLength: queue, maxWait: wait))
    }

    /// Blocks until `condition` holds of the budget's usage (a state the other threads reach, not a time).
    private func waitUntil(_ budget: RenderBudget, _ condition: (RenderBudget.Usage) -> Bool) {
        while !condition(budget.usage) { usleep(1000) }
    }

    @Test func rendersThatFitRunAtOnceAndGiveTheirBytesBack() throws {
        let budget = budget(100)
        let first = try budget.reserve(60)
        let second = try budget.reserve(40)
        #expect(budget.usage == .init(bytes: 100, inFlight: 2, queued: 0, refused: 0))
        first.release()
        first.release()
        #expect(budget.usage.bytes == 40)
        second.release()
        #expect(try budget.withReservation(of: 100) { budget.usage.bytes } == 100)
        #expect(budget.usage == .init(bytes: 0, inFlight: 0, queued: 0, refused: 0))
    }

    @Test func aRenderLargerThanTheWholeBudgetIsRefusedWithoutWaiting() {
        let budget = budget(100)
        #expect(throws: RenderRefusal.tooLarge(needed: 101, budget: 100)) { try budget.reserve(101) }
        #expect(RenderRefusal.tooLarge(needed: 101, budget: 100).status == 400)
        #expect(RenderRefusal.tooLarge(needed: 101, budget: 100).response.headers.allSatisfy { $0.0 != "Retry-After" })
        #expect(budget.usage.refused == 0)
    }

    @Test func beyondTheQueueARenderIsRefusedWith503AndRetryAfter() throws {
        let budget = budget(100, queue: 0, wait: 7)
        let held = try budget.reserve(100)
        #expect(throws: RenderRefusal.queueFull(retryAfter: 7)) { try budget.reserve(1) }
        let response = RenderRefusal.queueFull(retryAfter: 7).response
        #expect(response.status == 503)
        #expect(response.headers.contains { $0 == ("Retry-After", "7") })
        #expect(budget.usage.refused == 1)
        held.release()
    }

    @Test func aWaitingRenderRunsWhenMemoryIsGivenBackInTheOrderTheyCame() throws {
        let budget = budget(100, queue: 2)
        let held = try budget.reserve(100)
        let order = Mutex<[Int]>([])
        let done = DispatchGroup()
        for index in 0..<2 {
            // The second starts only once the first is queued, so their order is known.
            waitUntil(budget) { $0.queued == index }
            DispatchQueue.global().async(group: done) {
                try? budget.withReservation(of: 100) { order.withLock { $0.append(index) } }
            }
        }
        waitUntil(budget) { $0.queued == 2 }
        #expect(throws: RenderRefusal.queueFull(retryAfter: 600)) { try budget.reserve(1) }
        #expect(order.withLock { $0 }.isEmpty)
        held.release()
        done.wait()
        #expect(order.withLock { $0 } == [0, 1])
        #expect(budget.usage == .init(bytes: 0, inFlight: 0, queued: 0, refused: 1))
    }

    @Test func aRenderThatWaitsTooLongIsRefusedAndLeavesTheQueue() throws {
        let budget = budget(100, queue: 1, wait: 0)
        let held = try budget.reserve(50)
        #expect(throws: RenderRefusal.timedOut(retryAfter: 1)) { try budget.reserve(51) }
        #expect(budget.usage == .init(bytes: 50, inFlight: 1, queued: 0, refused: 1))
        held.release()
    }

    @Test func aReservationDroppedUnreleasedGivesItsBytesBack() throws {
        let budget = budget(100)
        do { _ = try budget.reserve(80) }
        #expect(budget.usage.bytes == 0)
    }
}

@Suite struct MetricsRegistryTests {
    @Test func theExpositionIsPrometheusTextFormat() {
        let registry = MetricsRegistry()
        let requests = registry.counter("requests_total", help: "Requests.", labelNames: ["route", "status"])
        requests.add(labels: ["iiif", "200"])
        requests.add(2, labels: ["iiif", "200"])
        requests.add(labels: ["a\"b\\c", "503"])
        let latency = registry.histogram("latency_seconds", help: "Latency\nin seconds.", bounds: [0.1, 1])
        latency.observe(0.05)
        latency.observe(0.5)
        latency.observe(5)
        registry.gauge("in_flight", help: "Now.") { 3 }
        #expect(registry.exposition == """
            # HELP requests_total Requests.
            # TYPE requests_total counter
            requests_total{route="a\\"b\\\\c",status="503"} 1
            requests_total{route="iiif",status="200"} 3
            # HELP latency_seconds Latency\\nin seconds.
            # TYPE latency_seconds histogram
            latency_seconds_bucket{le="0.1"} 1
            latency_seconds_bucket{le="1"} 2
            latency_seconds_bucket{le="+Inf"} 3
            latency_seconds_sum 5.55
            latency_seconds_count 3
            # HELP in_flight Now.
            # TYPE in_flight gauge
            in_flight 3

            """)
    }
}
