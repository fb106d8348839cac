import Foundation
import Synchronization
import Testing
@testable import Tessera

/// `SharedCache`: callers asking for a value being made share the maker's, or are told it is being made when they
/// do not join; `holdsOrMakes`, what a caller deciding whether to make a value ahead of its use asks, neither
/// counted as a lookup nor marking the value as used.
@Suite struct SharedCacheTests {
    /// Callers asking while another makes the value get the maker's value, or its error, whether it comes while
    /// they watch for it (`spinLimit`) or after they have gone to sleep; the value is made once.
    @Test(arguments: [(0, false), (0, true), (3, false), (3, true)])
    func waitersShareTheMakersResultWhenItComes(spinLimitsLate: Int, fails: Bool) throws {
        struct Failed: Error {}
        let cache = SharedCache<String, Int>(byteLimit: 100) { _, _ in 8 }
        let makes = Atomic(0), waiters = 3
        let results = Mutex<[Int?]>([])
        let finished = DispatchGroup()
        func onThread(_ body: @escaping @Sendable () -> Void) {
            finished.enter()
            Thread {
                body()
                finished.leave()
            }.start()
        }
        onThread {
            _ = try? cache.value(for: "a") {
                makes.add(1, ordering: .relaxed)
                // Until every waiter has found the value being made, then as late as asked.
                while cache.lookups.coalesced < waiters { usleep(100) }
                usleep(UInt32(spinLimitsLate) * UInt32(SharedCache<String, Int>.spinLimit / 1000))
                if fails { throw Failed() }
                return 7
            }
        }
        while !cache.holdsOrMakes("a") { usleep(100) }
        for _ in 0..<waiters {
            onThread {
                let value = try? cache.value(for: "a") { -1 }
                results.withLock { $0.append(value) }
            }
        }
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(results.withLock { $0 } == Array(repeating: fails ? nil : 7, count: waiters))
        #expect(makes.load(ordering: .relaxed) == 1 && cache.lookups.misses == 1)
    }

    /// A caller that does not join another's making of its value (work done ahead of its use) is told so at once,
    /// makes nothing and counts in no lookup; once the value is held, it gets it.
    @Test func aCallerNotJoiningIsToldTheValueIsBeingMade() throws {
        let cache = SharedCache<String, Int>(byteLimit: 100) { _, _ in 8 }
        let value = try cache.value(for: "a") {
            #expect(throws: ValueBeingMade.self) { try cache.value(for: "a", joining: false) { -1 } }
            return 7
        }
        #expect(value == 7)
        #expect(try cache.value(for: "a", joining: false) { -1 } == 7)
        #expect(cache.lookups.misses == 1 && cache.lookups.coalesced == 0 && cache.lookups.hits == 1)
    }

    @Test func holdsOrMakesSeesHeldValuesAndFlightsAndCountsNothing() throws {
        let cache = SharedCache<String, Int>(byteLimit: 100) { _, _ in 40 }
        #expect(!cache.holdsOrMakes("a"))
        _ = try cache.value(for: "a") {
            #expect(cache.holdsOrMakes("a"), "being made")
            return 1
        }
        #expect(cache.holdsOrMakes("a"), "held")
        _ = try cache.value(for: "b") { 2 }
        // Asking about "a" does not make it the most recently used: the next value drops it, the oldest.
        #expect(cache.holdsOrMakes("a"))
        _ = try cache.value(for: "c") { 3 }
        #expect(!cache.holdsOrMakes("a") && cache.holdsOrMakes("b") && cache.holdsOrMakes("c"))
        #expect(cache.lookups.misses == 3 && cache.lookups.hits == 0)
    }
}
