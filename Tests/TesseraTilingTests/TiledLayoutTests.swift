import Testing
@testable import TesseraTiling

private let content = PixelSize(width: 1000, height: 700)
private let layout = TiledLayout(configuration: TiledLayerConfiguration(), contentSize: content)

private func cells(_ tiles: [PlannedTile]) -> [[Int]] {
    tiles.map { [$0.key.column, $0.key.row] }
}

@Test func topLeftCornerDrawsFourTilesCentreOutAndPrefetchesTheRing() {
    let plan = layout.plan(visibleRect: Rect2D(x: 0, y: 0, width: 375, height: 268), zoomScale: 1)
    #expect(plan.level?.level == 0)
    #expect(cells(plan.visible) == [[0, 0], [1, 0], [0, 1], [1, 1]])
    #expect(plan.visible.allSatisfy { $0.key.level == 0 })
    #expect(Set(cells(plan.prefetch)) == [[2, 0], [2, 1], [0, 2], [1, 2], [2, 2]])
}

@Test func bottomRightCornerTilesAreClippedAtTheContentEdges() {
    let plan = layout.plan(visibleRect: Rect2D(x: 625, y: 432, width: 375, height: 268), zoomScale: 1)
    #expect(Set(cells(plan.visible)) == [[2, 1], [3, 1], [2, 2], [3, 2]])
    let corner = plan.visible.first { $0.key.column == 3 && $0.key.row == 2 }
    #expect(corner?.rect == Rect2D(x: 768, y: 512, width: 232, height: 188))
    #expect(corner?.pixelSize == PixelSize(width: 232, height: 188))
    let edge = plan.visible.first { $0.key.column == 2 && $0.key.row == 2 }
    #expect(edge?.rect == Rect2D(x: 512, y: 512, width: 256, height: 188))
    // The ring stops at the content: nothing right of column 3 or below row 2.
    #expect(Set(cells(plan.prefetch)) == [[1, 0], [2, 0], [3, 0], [1, 1], [1, 2]])
}

@Test func aViewEndingOnATileEdgeDoesNotTakeTheNextTile() {
    let plan = layout.plan(visibleRect: Rect2D(x: 256, y: 0, width: 256, height: 256), zoomScale: 1)
    #expect(cells(plan.visible) == [[1, 0]])
}

@Test func contentSmallerThanTheViewIsClippedNotStretched() {
    let small = TiledLayout(configuration: TiledLayerConfiguration(), contentSize: PixelSize(width: 300, height: 200))
    let plan = small.plan(visibleRect: Rect2D(x: -50, y: -50, width: 400, height: 300), zoomScale: 1)
    #expect(cells(plan.visible) == [[0, 0], [1, 0]])
    #expect(plan.visible.map(\.rect) == [
        Rect2D(x: 0, y: 0, width: 256, height: 200), Rect2D(x: 256, y: 0, width: 44, height: 200),
    ])
    #expect(plan.prefetch.isEmpty)
}

@Test func retinaZoomDrawsFinerLevelWithSmallerTilesInPoints() {
    let retina = TiledLayout(
        configuration: TiledLayerConfiguration(levelsOfDetailBias: 2, contentsScale: 2), contentSize: content)
    let plan = retina.plan(visibleRect: Rect2D(x: 100, y: 100, width: 100, height: 100), zoomScale: 1.5)
    // Zoom 1.5 on a 2x screen wants 3 pixels per point: level 1 draws at 4, tiles of 64 points.
    #expect(plan.level?.level == 1)
    #expect(plan.level?.pixelsPerPoint == 4)
    // Centre (150, 150); cell centres at 96, 160, 224: distances 10 and 54 and 74 from it, ties by row.
    #expect(cells(plan.visible) == [[2, 2], [2, 1], [1, 2], [3, 2], [2, 3], [1, 1], [3, 1], [1, 3], [3, 3]])
    #expect(plan.visible.first?.rect == Rect2D(x: 128, y: 128, width: 64, height: 64))
}

@Test func zoomedOutSeedImageWithOneLevelDrawsEveryOneXTile() {
    let seed = TiledLayout(
        configuration: TiledLayerConfiguration(levelsOfDetailBias: 6), contentSize: PixelSize(width: 11935, height: 8554))
    let viewport = ScrollViewport(contentSize: seed.contentSize, viewSize: Size2D(width: 375, height: 268))
    let plan = seed.plan(for: viewport)
    #expect(plan.level?.level == 0)
    #expect(plan.visible.count == 47 * 34)
    #expect(plan.prefetch.isEmpty)
}

@Test func keysNoLongerNeededAreThoseThePreviousFrameWantedAndThisOneDoesNot() {
    let before = layout.plan(visibleRect: Rect2D(x: 0, y: 0, width: 200, height: 200), zoomScale: 1)
    let after = layout.plan(visibleRect: Rect2D(x: 600, y: 0, width: 200, height: 200), zoomScale: 1)
    // Before: visible (0,0), ring (1,0), (0,1), (1,1). After: visible (2,0), (3,0), ring (1,0), (1,1)...(3,1).
    #expect(Set(after.keysNoLongerNeeded(since: before)) == [
        TileKey(level: 0, column: 0, row: 0), TileKey(level: 0, column: 0, row: 1),
    ])
    #expect(after.keysNoLongerNeeded(since: after).isEmpty)
}

@Test func requestsPutVisibleTilesBeforePrefetchInCentreOutOrder() {
    let plan = layout.plan(visibleRect: Rect2D(x: 0, y: 0, width: 375, height: 268), zoomScale: 1)
    let requests = plan.requests
    #expect(requests.map(\.key) == (plan.visible + plan.prefetch).map(\.key))
    #expect(requests.map(\.priority) == requests.map(\.priority).sorted())
    #expect(requests[3].priority == TilePriority(.visible, order: 3))
    #expect(requests[4].priority == TilePriority(.prefetch, order: 0))
}

@Test func zoomedInPlanWantsTheCoarsestTilesUnderAndAroundTheViewFirstAndPinsThem() {
    // Levels 0, -1, -2 of 64-pixel tiles: at 1/4x a tile covers 256 points and the content is a 4x3 grid.
    let configuration = TiledLayerConfiguration(tileSize: PixelSize(width: 64, height: 64), levelsOfDetail: 3)
    let layered = TiledLayout(configuration: configuration, contentSize: content)
    let plan = layered.plan(visibleRect: Rect2D(x: 300, y: 200, width: 200, height: 100), zoomScale: 1)
    #expect(plan.level?.level == 0)
    // The view meets coarse tiles (1, 0) and (1, 1), nearest the centre first; the ring adds columns 0 and 2, row 2.
    #expect(plan.backstop.prefix(2).map(\.key) == [TileKey(level: -2, column: 1, row: 0), TileKey(level: -2, column: 1, row: 1)])
    #expect(Set(plan.backstop.map { [$0.key.column, $0.key.row] }) == Set((0...2).flatMap { c in (0...2).map { [c, $0] } }))
    #expect(plan.requests.first?.priority == TilePriority(.backstop, order: 0))
    #expect(plan.requests.map(\.priority) == plan.requests.map(\.priority).sorted())
    #expect(plan.pinnedKeys == Set((plan.visible + plan.backstop).map(\.key)))
    // Drawing the coarsest level itself needs no backstop.
    let fit = layered.plan(visibleRect: Rect2D(x: 0, y: 0, width: 1000, height: 700), zoomScale: 0.25)
    #expect(fit.level?.level == -2)
    #expect(fit.backstop.isEmpty)
}

@Test func noLevelsMeansAnEmptyPlan() {
    let none = TiledLayout(configuration: TiledLayerConfiguration(levelsOfDetail: 0), contentSize: content)
    #expect(none.plan(visibleRect: Rect2D(x: 0, y: 0, width: 100, height: 100), zoomScale: 1) == .empty)
}
