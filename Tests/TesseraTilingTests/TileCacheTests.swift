import Testing
@testable import TesseraTiling

private func key(_ column: Int) -> TileKey { TileKey(level: 0, column: column, row: 0) }

@Test func leastRecentlyUsedTileIsEvictedFirst() {
    let cache = TileCache<Int>(byteBudget: 300)
    for column in 0..<3 { cache.insert(column, for: key(column), cost: 100, arrivalTime: 0) }
    #expect(cache.tile(for: key(0))?.tile == 0)
    cache.insert(3, for: key(3), cost: 100, arrivalTime: 0)
    #expect(!cache.contains(key(1)))
    #expect([0, 2, 3].allSatisfy { cache.contains(key($0)) })
    #expect(cache.statistics.evictions == 1)
    #expect(cache.statistics.bytes == 300)
}

@Test func bytesNeverExceedTheBudgetWithoutPins() {
    let cache = TileCache<Int>(byteBudget: 1000)
    for column in 0..<100 { cache.insert(column, for: key(column), cost: 70 + column % 5 * 30, arrivalTime: 0) }
    let statistics = cache.statistics
    #expect(statistics.bytes <= 1000)
    #expect(statistics.peakBytes <= 1000)
    #expect(statistics.count + statistics.evictions == 100)
}

@Test func pinnedTilesSurviveEvenOverBudget() {
    let cache = TileCache<Int>(byteBudget: 200)
    cache.setPinned([key(0), key(1), key(2)])
    for column in 0..<4 { cache.insert(column, for: key(column), cost: 100, arrivalTime: 0) }
    // The three pinned tiles stay; the unpinned one cannot fit and goes.
    #expect([0, 1, 2].allSatisfy { cache.contains(key($0)) })
    #expect(!cache.contains(key(3)))
    #expect(cache.statistics.bytes == 300)
    #expect(cache.statistics.peakBytes == 300)
    // Unpinning lets the cache shrink back to the budget, oldest first.
    cache.setPinned([key(2)])
    #expect(!cache.contains(key(0)))
    #expect(cache.contains(key(1)) && cache.contains(key(2)))
    #expect(cache.statistics.bytes == 200)
}

@Test func reservationsForTilesInFlightEvictToKeepTheTotalWithinTheBudget() {
    let cache = TileCache<Int>(byteBudget: 300)
    for column in 0..<3 { cache.insert(column, for: key(column), cost: 100, arrivalTime: 0) }
    cache.reserve(100)
    #expect(!cache.contains(key(0)))
    #expect(cache.statistics.bytes + cache.statistics.reservedBytes == 300)
    // The tile arrives, handing its reservation back in the same step: nothing more is evicted.
    cache.insert(3, for: key(3), cost: 100, arrivalTime: 0, releasing: 100)
    #expect([1, 2, 3].allSatisfy { cache.contains(key($0)) })
    #expect(cache.statistics.reservedBytes == 0)
    #expect(cache.statistics.evictions == 1)
    cache.reserve(50)
    cache.release(50)
    #expect(cache.statistics.reservedBytes == 0)
}

@Test func unpinEvictsWhatNoLongerFits() {
    let cache = TileCache<Int>(byteBudget: 100)
    cache.pin([key(0), key(1)])
    cache.insert(0, for: key(0), cost: 100, arrivalTime: 0)
    cache.insert(1, for: key(1), cost: 100, arrivalTime: 0)
    cache.unpin([key(0)])
    #expect(!cache.contains(key(0)))
    #expect(cache.contains(key(1)))
}

@Test func hitsAndMissesAreCountedOnlyByTileLookups() {
    let cache = TileCache<String>(byteBudget: 1000)
    cache.insert("a", for: key(0), cost: 10, arrivalTime: 1.5)
    #expect(cache.tile(for: key(0))?.arrivalTime == 1.5)
    #expect(cache.tile(for: key(1)) == nil)
    #expect(cache.probe(key(0))?.tile == "a")
    #expect(cache.probe(key(2)) == nil)
    #expect(cache.contains(key(0)))
    let statistics = cache.statistics
    #expect(statistics.hits == 1)
    #expect(statistics.misses == 1)
}

@Test func replacingATileAdjustsTheBytes() {
    let cache = TileCache<Int>(byteBudget: 1000)
    cache.insert(1, for: key(0), cost: 100, arrivalTime: 0)
    cache.insert(2, for: key(0), cost: 40, arrivalTime: 1)
    #expect(cache.statistics.bytes == 40)
    #expect(cache.statistics.count == 1)
    #expect(cache.probe(key(0))?.tile == 2)
    cache.remove(key(0))
    #expect(cache.statistics.bytes == 0)
    cache.insert(3, for: key(1), cost: 10, arrivalTime: 0)
    cache.removeAll()
    #expect(cache.statistics.count == 0)
    #expect(!cache.contains(key(1)))
}

@Test func aTileLargerThanTheBudgetIsNotKeptUnlessPinned() {
    let cache = TileCache<Int>(byteBudget: 50)
    cache.insert(0, for: key(0), cost: 80, arrivalTime: 0)
    #expect(!cache.contains(key(0)))
    cache.pin([key(1)])
    cache.insert(1, for: key(1), cost: 80, arrivalTime: 0)
    #expect(cache.contains(key(1)))
}

@Test func lruListReusesSlotsAndKeepsOrder() {
    var list = LRUList<TileKey, Int>()
    for column in 0..<5 { list.set(column, for: key(column)) }
    list.remove(key(2))
    list.set(9, for: key(9))
    _ = list.use(key(0))
    var order: [Int] = []
    list.evictOldest(keeping: [key(3)], while: { true }) { _, value in order.append(value) }
    #expect(order == [1, 4, 9, 0])
    #expect(list.count == 1)
    #expect(list.peek(key(3)) == 3)
}
