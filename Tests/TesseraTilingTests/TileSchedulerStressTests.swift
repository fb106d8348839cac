import Testing
@testable import TesseraTiling

/// A provider that gives up its thread once and sometimes fails, so tasks interleave with requests,
/// cancellations and invalidations.
private struct YieldingProvider: TileProvider {
    struct Failure: Error {}

    func makeTile(for request: TileRequest) async throws -> [UInt8] {
        await Task.yield()
        if (request.key.column + request.key.row) % 7 == 6 { throw Failure() }
        return [UInt8](repeating: UInt8(truncatingIfNeeded: request.key.column), count: 16)
    }

    func cost(of tile: [UInt8]) -> Int { tile.count }
}

/// A small deterministic generator, one per task, so a failing run can be replayed.
private struct LinearCongruential: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
}

@Test func eightTasksRequestingCancellingAndInvalidatingLeaveConsistentState() async {
    let budget = 16 * 40
    let scheduler = TileScheduler(
        provider: YieldingProvider(),
        cache: TileCache<[UInt8]>(byteBudget: budget),
        configuration: .init(maxConcurrentTiles: 4, queueCapacity: 32)
    )
    await withTaskGroup(of: Void.self) { group in
        for worker in 0..<8 {
            group.addTask {
                var random = LinearCongruential(state: UInt64(worker + 1))
                func randomRequest() -> TileRequest {
                    TileRequest(
                        key: TileKey(level: Int.random(in: 0...2, using: &random), column: Int.random(in: 0..<12, using: &random),
                                     row: Int.random(in: 0..<12, using: &random)),
                        pixelSize: PixelSize(width: 4, height: 4),
                        priority: TilePriority(Bool.random(using: &random) ? .visible : .prefetch,
                                               order: Int.random(in: 0..<50, using: &random))
                    )
                }
                for _ in 0..<300 {
                    switch Int.random(in: 0..<100, using: &random) {
                    case 0..<40:
                        await scheduler.update(wanted: (0..<Int.random(in: 1...20, using: &random)).map { _ in randomRequest() })
                    case 40..<65:
                        await scheduler.request(randomRequest())
                    case 65..<80:
                        await scheduler.cancel((0..<5).map { _ in randomRequest().key })
                    case 80..<84:
                        await scheduler.invalidate()
                    case 84..<92:
                        scheduler.cache.setPinned(Set((0..<4).map { _ in randomRequest().key }))
                    default:
                        _ = scheduler.cache.tile(for: randomRequest().key)
                    }
                }
            }
        }
    }
    await scheduler.waitUntilIdle()
    scheduler.cache.setPinned([])
    let statistics = await scheduler.statistics
    #expect(statistics.started == statistics.completed + statistics.failed + statistics.stale)
    #expect(statistics.started > 0)
    let cache = scheduler.cache.statistics
    #expect(cache.bytes <= budget)
    #expect(cache.bytes == cache.count * 16)
}
