import Testing
@testable import Tessera

/// `SharedCache.holdsOrMakes`: what a caller deciding whether to make a value ahead of its use asks, neither
/// counted as a lookup nor marking the value as used.
@Suite struct SharedCacheTests {
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
