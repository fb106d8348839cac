/// The scroll-view model over a tiled image: a view of `viewSize` points looking at content of `contentSize` points
/// at `zoomScale` screen points per content point, scrolled to `contentOffset`.
///
/// Like UIScrollView, `contentOffset` is the view's top-left corner in zoomed content (`content * zoomScale`);
/// when the zoomed content is smaller than the view along an axis it is centred, and the offset is negative there.
/// Every mutation keeps the zoom within `zoomLimits` and the offset within the content (no scrolling into the void).
public struct ScrollViewport: Hashable, Sendable {
    /// The size of the content, in points (image pixels at zoom 1).
    public let contentSize: PixelSize
    /// The size of the view, in points.
    public private(set) var viewSize: Size2D
    /// The zoom range for this content and view.
    public private(set) var zoomLimits: ZoomLimits
    /// The current zoom, in screen points per content point.
    public private(set) var zoomScale: Double
    /// The view's top-left corner in zoomed content, in screen points.
    public private(set) var contentOffset: Point2D

    /// A viewport showing all of `contentSize` in `viewSize`, at the minimum zoom and centred.
    public init(contentSize: PixelSize, viewSize: Size2D) {
        self.contentSize = contentSize
        self.viewSize = viewSize
        zoomLimits = ZoomLimits(contentSize: contentSize, viewSize: viewSize)
        zoomScale = zoomLimits.minimum
        contentOffset = .zero
        contentOffset = boundedOffset(contentOffset)
    }

    /// The part of the content the view shows, in content points. It reaches past the content where the content is
    /// smaller than the view (centred), and is clipped by whoever draws.
    public var visibleRect: Rect2D {
        Rect2D(
            x: contentOffset.x / zoomScale, y: contentOffset.y / zoomScale,
            width: viewSize.width / zoomScale, height: viewSize.height / zoomScale
        )
    }

    /// Zooms to `zoomScale` (clamped to the limits) keeping the content under `focalPoint` (view points) fixed on
    /// screen, as a pinch does, unless the pan bounds forbid it.
    public mutating func zoom(to zoomScale: Double, around focalPoint: Point2D) {
        let anchor = contentPoint(atViewPoint: focalPoint)
        self.zoomScale = zoomLimits.clamp(zoomScale)
        contentOffset = boundedOffset(Point2D(
            x: anchor.x * self.zoomScale - focalPoint.x,
            y: anchor.y * self.zoomScale - focalPoint.y
        ))
    }

    /// Zooms to `zoomScale` (clamped) around the centre of the view.
    public mutating func zoom(to zoomScale: Double) {
        zoom(to: zoomScale, around: Point2D(x: viewSize.width / 2, y: viewSize.height / 2))
    }

    /// Scrolls so that the view's top-left corner is at `offset` in zoomed content (screen points), within bounds.
    public mutating func scroll(to offset: Point2D) {
        contentOffset = boundedOffset(offset)
    }

    /// Pans by `delta` screen points (a drag moves the offset the other way round), within bounds.
    public mutating func pan(by delta: Point2D) {
        scroll(to: Point2D(x: contentOffset.x + delta.x, y: contentOffset.y + delta.y))
    }

    /// Scrolls as little as possible to bring `rect` (content points) into view; a rect larger than the view
    /// aligns its top-left corner with the view's, as UIScrollView does.
    public mutating func scrollRectToVisible(_ rect: Rect2D) {
        func axis(_ offset: Double, _ start: Double, _ end: Double, _ view: Double) -> Double {
            let (start, end) = (start * zoomScale, end * zoomScale)
            if end - start >= view || start < offset { return start }
            if end > offset + view { return end - view }
            return offset
        }
        scroll(to: Point2D(
            x: axis(contentOffset.x, rect.minX, rect.maxX, viewSize.width),
            y: axis(contentOffset.y, rect.minY, rect.maxY, viewSize.height)
        ))
    }

    /// Changes the view's size (a rotation, a window resize) keeping the content at the view's centre and the zoom,
    /// as far as the new limits and bounds allow.
    public mutating func resize(to viewSize: Size2D) {
        let centre = contentPoint(atViewPoint: Point2D(x: self.viewSize.width / 2, y: self.viewSize.height / 2))
        self.viewSize = viewSize
        zoomLimits = ZoomLimits(contentSize: contentSize, viewSize: viewSize)
        zoomScale = zoomLimits.clamp(zoomScale)
        contentOffset = boundedOffset(Point2D(
            x: centre.x * zoomScale - viewSize.width / 2,
            y: centre.y * zoomScale - viewSize.height / 2
        ))
    }

    /// The content point (content points) under `viewPoint` (view points).
    public func contentPoint(atViewPoint viewPoint: Point2D) -> Point2D {
        Point2D(x: (contentOffset.x + viewPoint.x) / zoomScale, y: (contentOffset.y + viewPoint.y) / zoomScale)
    }

    /// `offset` held within the content along each axis, or centring the content where it is smaller than the view.
    private func boundedOffset(_ offset: Point2D) -> Point2D {
        func axis(_ offset: Double, content: Int, view: Double) -> Double {
            let zoomed = Double(content) * zoomScale
            if zoomed <= view { return -(view - zoomed) / 2 }
            return min(max(offset, 0), zoomed - view)
        }
        return Point2D(
            x: axis(offset.x, content: contentSize.width, view: viewSize.width),
            y: axis(offset.y, content: contentSize.height, view: viewSize.height)
        )
    }
}
