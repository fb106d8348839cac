import Testing
@testable import TesseraTiling

private let seedImage = PixelSize(width: 11935, height: 8554)
private let phoneView = Size2D(width: 375, height: 268)

private func isClose(_ a: Double, _ b: Double, tolerance: Double = 1e-9) -> Bool {
    abs(a - b) <= tolerance * max(1, abs(a), abs(b))
}

@Test func seedImageZoomsFromFitToOneLevelPastOneToOne() {
    // PhotoScroller's maximum of 64 times the fitted width: 64 * 375 / 11935 points per image pixel, just over 2.
    let limits = ZoomLimits(contentSize: seedImage, viewSize: phoneView)
    #expect(limits.minimum == 268.0 / 8554.0)
    #expect(isClose(limits.maximum, 64 * 375.0 / 11935.0))
}

@Test func maximumZoomAtAnExactPowerOfTwoIsOneLevelPastOneToOne() {
    // 1/imageScale is exactly 4, so ceil(log2) is 2, not 3 as a rounding log2 could make it.
    let limits = ZoomLimits(contentSize: PixelSize(width: 1024, height: 512), viewSize: Size2D(width: 256, height: 256))
    #expect(limits.minimum == 0.25)
    #expect(limits.maximum == 2)
}

@Test func imageSmallerThanTheViewIsNeverForcedPastItsFit() {
    let limits = ZoomLimits(contentSize: PixelSize(width: 100, height: 50), viewSize: Size2D(width: 400, height: 400))
    #expect(limits.minimum == 4)
    #expect(limits.maximum == 4)
    #expect(limits.clamp(10) == 4)
    #expect(limits.clamp(1) == 4)
}

@Test func newViewportFitsAndCentresTheImage() {
    let viewport = ScrollViewport(contentSize: seedImage, viewSize: phoneView)
    let zoomedWidth = 11935.0 * viewport.zoomScale
    #expect(viewport.zoomScale == 268.0 / 8554.0)
    #expect(viewport.contentOffset.y == 0)
    #expect(isClose(viewport.contentOffset.x, -(375 - zoomedWidth) / 2))
    #expect(isClose(viewport.visibleRect.center.x, 11935.0 / 2))
    #expect(isClose(viewport.visibleRect.center.y, 8554.0 / 2))
}

@Test func zoomKeepsTheContentUnderTheFocalPointFixed() {
    var viewport = ScrollViewport(contentSize: seedImage, viewSize: phoneView)
    viewport.zoom(to: 1)
    viewport.scroll(to: Point2D(x: 5000, y: 4000))
    let focal = Point2D(x: 100, y: 200)
    let before = viewport.contentPoint(atViewPoint: focal)
    viewport.zoom(to: 1.75, around: focal)
    #expect(viewport.zoomScale == 1.75)
    let after = viewport.contentPoint(atViewPoint: focal)
    #expect(isClose(before.x, after.x) && isClose(before.y, after.y))
}

@Test func zoomIsClampedToTheLimits() {
    var viewport = ScrollViewport(contentSize: seedImage, viewSize: phoneView)
    viewport.zoom(to: 1000)
    #expect(viewport.zoomScale == viewport.zoomLimits.maximum)
    viewport.zoom(to: 0.0001)
    #expect(viewport.zoomScale == viewport.zoomLimits.minimum)
}

@Test func panningStopsAtTheContentEdges() {
    var viewport = ScrollViewport(contentSize: seedImage, viewSize: phoneView)
    viewport.zoom(to: 1)
    viewport.scroll(to: Point2D(x: -500, y: -20))
    #expect(viewport.contentOffset == .zero)
    viewport.pan(by: Point2D(x: 1e9, y: 1e9))
    #expect(viewport.contentOffset == Point2D(x: 11935 - 375, y: 8554 - 268))
    #expect(viewport.visibleRect.maxX == 11935)
    #expect(viewport.visibleRect.maxY == 8554)
}

@Test func contentNarrowerThanTheViewStaysCentredAlongThatAxis() {
    // A tall strip in a wide view: at zoom 0.5 it is 50 points wide in a 400-point-wide view.
    var viewport = ScrollViewport(contentSize: PixelSize(width: 100, height: 4000), viewSize: Size2D(width: 400, height: 300))
    viewport.zoom(to: 0.5)
    #expect(viewport.zoomScale == 0.5)
    viewport.pan(by: Point2D(x: 250, y: 1e6))
    #expect(viewport.contentOffset == Point2D(x: -175, y: 2000 - 300))
    #expect(viewport.visibleRect.minX == -350)
}

@Test func scrollRectToVisibleMovesOnlyAsFarAsNeeded() {
    var viewport = ScrollViewport(contentSize: seedImage, viewSize: phoneView)
    viewport.zoom(to: 1)
    viewport.scroll(to: Point2D(x: 1000, y: 1000))
    // Already visible: nothing moves.
    viewport.scrollRectToVisible(Rect2D(x: 1100, y: 1100, width: 50, height: 50))
    #expect(viewport.contentOffset == Point2D(x: 1000, y: 1000))
    // Off to the right and below: the rect's far edges meet the view's.
    viewport.scrollRectToVisible(Rect2D(x: 2000, y: 2000, width: 100, height: 100))
    #expect(viewport.contentOffset == Point2D(x: 2100 - 375, y: 2100 - 268))
    // Off to the left and above: the near edges meet.
    viewport.scrollRectToVisible(Rect2D(x: 10, y: 20, width: 10, height: 10))
    #expect(viewport.contentOffset == Point2D(x: 10, y: 20))
    // Zoomed, rects are in content points: content 3000 is 6000 screen points at zoom 2.
    viewport.zoom(to: 2, around: .zero)
    viewport.scrollRectToVisible(Rect2D(x: 3000, y: 3000, width: 10, height: 10))
    #expect(viewport.contentOffset == Point2D(x: 6020 - 375, y: 6020 - 268))
}

@Test func resizeKeepsTheCentreAndTheZoom() {
    var viewport = ScrollViewport(contentSize: seedImage, viewSize: phoneView)
    viewport.zoom(to: 2)
    viewport.scroll(to: Point2D(x: 8000, y: 6000))
    let centre = viewport.visibleRect.center
    viewport.resize(to: Size2D(width: 268, height: 375))
    #expect(viewport.zoomScale == 2)
    #expect(isClose(viewport.visibleRect.center.x, centre.x))
    #expect(isClose(viewport.visibleRect.center.y, centre.y))
    #expect(viewport.zoomLimits == ZoomLimits(contentSize: seedImage, viewSize: Size2D(width: 268, height: 375)))
}
