import Foundation
import Synchronization
import Testing
import Tessera
@testable import TesseraServer

@Suite struct ResponseCacheTests {
    private func response(_ count: Int, _ fill: UInt8 = 1) -> ResponseCache.Response {
        ResponseCache.Response(bytes: [UInt8](repeating: fill, count: count), mediaType: "image/jpeg")
    }

    /// A response made ahead of its request (idle-time work) leaves one being rendered to its render: told so at
    /// once, it renders nothing; a client's request waits for it as before.
    @Test func aResponseMadeAheadDoesNotWaitForOneBeingRendered() throws {
        let cache = ResponseCache(byteLimit: 2000)
        _ = try cache.response(for: "a") {
            #expect(throws: ValueBeingMade.self) {
                try cache.response(for: "a", madeAhead: true) { Issue.record("rendered again"); return response(10) }
            }
            return response(10)
        }
        #expect(try cache.response(for: "a", madeAhead: true) { response(20) }.bytes.count == 10, "then held")
    }

    @Test func heldResponsesStayWithinTheByteLimitTheLeastRecentlyUsedDroppedFirst() throws {
        let cache = ResponseCache(byteLimit: 2000)
        let renders = Mutex(0)
        func get(_ key: String, _ count: Int = 500) throws -> ResponseCache.Response {
            try cache.response(for: key) {
                renders.withLock { $0 += 1 }
                return response(count)
            }
        }
        for key in ["a", "b", "c"] { _ = try get(key) }
        #expect(cache.usage.count == 3 && cache.usage.bytes <= 2000)
        _ = try get("a")
        #expect(renders.withLock { $0 } == 3, "a held response is not rendered again")
        _ = try get("d")
        #expect(cache.usage.bytes <= 2000, "\(cache.usage.bytes) bytes held")
        _ = try get("a")
        #expect(renders.withLock { $0 } == 4, "a, used last, stayed")
        _ = try get("b")
        #expect(renders.withLock { $0 } == 5, "b, the least recently used, went")
        _ = try get("huge", 5000)
        _ = try get("huge", 5000)
        #expect(renders.withLock { $0 } == 7, "a response over the whole limit is not kept")
        #expect(cache.usage.bytes <= 2000)
    }

    @Test func identicalRequestsInFlightAreRenderedOnce() throws {
        // Nothing is kept, so only the coalescing of requests in flight can save a render.
        let cache = ResponseCache(byteLimit: 0)
        let callers = 8
        let renders = Mutex(0), arrived = Atomic(0)
        let results = Mutex<[[UInt8]]>([])
        let finished = DispatchGroup()
        for _ in 0..<callers {
            finished.enter()
            Thread {
                arrived.add(1, ordering: .sequentiallyConsistent)
                let answer = try? cache.response(for: "tile") {
                    renders.withLock { $0 += 1 }
                    // Held until every caller has arrived, and a moment more for them to join this render.
                    while arrived.load(ordering: .sequentiallyConsistent) < callers { usleep(1000) }
                    usleep(100_000)
                    return response(300, 7)
                }
                results.withLock { $0.append(answer?.bytes ?? []) }
                finished.leave()
            }.start()
        }
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(renders.withLock { $0 } == 1)
        #expect(results.withLock { $0 } == Array(repeating: [UInt8](repeating: 7, count: 300), count: callers))
    }

    @Test func aFailedRenderReachesItsWaitersAndIsNotKept() throws {
        struct Failure: Error {}
        let cache = ResponseCache(byteLimit: 1 << 20)
        #expect(throws: Failure.self) { try cache.response(for: "k") { throw Failure() } }
        #expect(try cache.response(for: "k") { response(10) }.bytes.count == 10)
    }
}
