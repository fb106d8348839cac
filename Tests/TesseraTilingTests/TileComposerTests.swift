import Testing
@testable import TesseraTiling

private let configuration = TiledLayerConfiguration(levelsOfDetail: 3, levelsOfDetailBias: 1)
private let layout = TiledLayout(configuration: configuration, contentSize: PixelSize(width: 1024, height: 1024))
private let composer = TileComposer(layout: layout)
/// Level 0, tiles (0,0), (1,0), (0,1), (1,1) of 256 points.
private let plan = layout.plan(visibleRect: Rect2D(x: 0, y: 0, width: 512, height: 512), zoomScale: 1)

private func cache(_ keys: [(level: Int, column: Int, row: Int)], arrival: Double = 0) -> TileCache<String> {
    let cache = TileCache<String>(byteBudget: 1 << 30)
    for key in keys {
        let key = TileKey(level: key.level, column: key.column, row: key.row)
        cache.insert(key.description, for: key, cost: 1, arrivalTime: arrival)
    }
    return cache
}

@Test func cachedVisibleTilesAreDrawnWholeAndOpaqueOnceFaded() {
    let list = composer.drawList(for: plan, cache: cache([(0, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1)]), now: 1)
    #expect(list.map(\.key) == plan.visible.map(\.key))
    #expect(list.allSatisfy { $0.role == .exact && $0.alpha == 1 })
    #expect(list.allSatisfy { $0.sourceRect == Rect2D(x: 0, y: 0, width: 256, height: 256) })
    #expect(list.map(\.destinationRect) == plan.visible.map(\.rect))
}

@Test func missingTileIsStandedInForByItsNearestCachedAncestorCropped() {
    // Level -1 tile (0,0) covers 512 points in 256 pixels; level -2 tile (0,0) covers all 1024 points.
    let list = composer.drawList(for: plan, cache: cache([(-1, 0, 0), (-2, 0, 0)]), now: 1)
    #expect(list.count == 4)
    #expect(list.allSatisfy { $0.role == .coarserPlaceholder && $0.key == TileKey(level: -1, column: 0, row: 0) })
    let right = list.first { $0.destinationRect.minX == 256 && $0.destinationRect.minY == 0 }
    #expect(right?.sourceRect == Rect2D(x: 128, y: 0, width: 128, height: 128))
}

@Test func coarsestAncestorIsUsedWhenNothingNearerIsCached() {
    let list = composer.drawList(for: plan, cache: cache([(-2, 0, 0)]), now: 1)
    let bottomRight = list.first { $0.destinationRect == Rect2D(x: 256, y: 256, width: 256, height: 256) }
    #expect(bottomRight?.key == TileKey(level: -2, column: 0, row: 0))
    #expect(bottomRight?.sourceRect == Rect2D(x: 64, y: 64, width: 64, height: 64))
}

@Test func edgeTilesCropOnlyTheContentFromTheirAncestor() {
    let edgeLayout = TiledLayout(configuration: configuration, contentSize: PixelSize(width: 600, height: 300))
    let edgePlan = edgeLayout.plan(visibleRect: Rect2D(x: 500, y: 200, width: 100, height: 100), zoomScale: 1)
    let list = TileComposer(layout: edgeLayout).drawList(for: edgePlan, cache: cache([(-1, 1, 0)]), now: 1)
    let corner = list.first { $0.destinationRect.minX == 512 && $0.destinationRect.minY == 256 }
    #expect(corner?.destinationRect == Rect2D(x: 512, y: 256, width: 88, height: 44))
    #expect(corner?.sourceRect == Rect2D(x: 0, y: 128, width: 44, height: 22))
}

@Test func finerTilesStandInOnlyWhenAllOfThemAreCached() {
    let allFour = cache([(1, 0, 0), (1, 1, 0), (1, 0, 1), (1, 1, 1), (1, 2, 0), (1, 3, 0), (1, 2, 1)])
    let list = composer.drawList(for: plan, cache: allFour, now: 1)
    // Tile (0,0) has all four children; tile (1,0) misses child (3,1) and stays blank.
    #expect(list.map(\.key) == [(0, 0), (1, 0), (0, 1), (1, 1)].map { TileKey(level: 1, column: $0.0, row: $0.1) })
    #expect(list.allSatisfy { $0.role == .finerPlaceholder })
    #expect(list[1].destinationRect == Rect2D(x: 128, y: 0, width: 128, height: 128))
    #expect(list[1].sourceRect == Rect2D(x: 0, y: 0, width: 256, height: 256))
}

@Test func fadeAlphaGrowsFromArrivalOverTheFadeDuration() {
    let fading = cache([(0, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1)], arrival: 1)
    #expect(composer.drawList(for: plan, cache: fading, now: 1).allSatisfy { $0.alpha == 0 })
    #expect(composer.drawList(for: plan, cache: fading, now: 1.125).allSatisfy { $0.alpha == 0.5 })
    #expect(composer.drawList(for: plan, cache: fading, now: 2).allSatisfy { $0.alpha == 1 })
    let instant = TileComposer(layout: TiledLayout(
        configuration: TiledLayerConfiguration(levelsOfDetail: 3, levelsOfDetailBias: 1, fadeDuration: 0),
        contentSize: layout.contentSize))
    #expect(instant.drawList(for: plan, cache: fading, now: 1).allSatisfy { $0.alpha == 1 })
}

@Test func aFadingTileIsPaintedOverItsAncestor() {
    let tiles = cache([(-1, 0, 0)])
    tiles.insert("fresh", for: TileKey(level: 0, column: 0, row: 0), cost: 1, arrivalTime: 1)
    let list = composer.drawList(for: plan, cache: tiles, now: 1.125)
    #expect(list.map(\.role) == [.coarserPlaceholder, .coarserPlaceholder, .coarserPlaceholder, .coarserPlaceholder, .exact])
    #expect(list.last?.tile == "fresh")
    #expect(list.last?.alpha == 0.5)
}

@Test func placeholdersArePaintedCoarsestFirstAndExactTilesLast() {
    // Centre 550: tile (2,0) comes first in the plan, but its level -1 stand-in paints over (1,0)'s level -2 one.
    let strip = layout.plan(visibleRect: Rect2D(x: 300, y: 0, width: 500, height: 200), zoomScale: 1)
    #expect(strip.visible.map(\.key.column) == [2, 1, 3])
    let list = composer.drawList(for: strip, cache: cache([(-2, 0, 0), (-1, 1, 0), (0, 3, 0)]), now: 10)
    #expect(list.map(\.key) == [
        TileKey(level: -2, column: 0, row: 0), TileKey(level: -1, column: 1, row: 0), TileKey(level: 0, column: 3, row: 0),
    ])
    #expect(list.map(\.role) == [.coarserPlaceholder, .coarserPlaceholder, .exact])
}

@Test func onlyVisibleTileLookupsCountAsHitsAndMisses() {
    let tiles = cache([(0, 0, 0), (-1, 0, 0)])
    _ = composer.drawList(for: plan, cache: tiles, now: 1)
    #expect(tiles.statistics.hits == 1)
    #expect(tiles.statistics.misses == 3)
}
