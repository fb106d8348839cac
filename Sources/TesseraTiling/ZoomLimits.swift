/// The zoom range of a scroll view showing an image, as Apple's PhotoScroller sets it (docs/ARCHITECTURE.md,
/// section 3): the minimum fits the whole image in the view; the maximum is one power of two past 1:1,
/// `2^(ceil(log2(1 / imageScale)) + 1)` with `imageScale = viewWidth / imageWidth`.
///
/// Zoom scales are screen points per content point (one content point per image pixel). PhotoScroller's content
/// is the image already scaled to fit, so its maximum is relative to the fit; here it is multiplied by
/// `imageScale` to be relative to the image's pixels: about 2, one level past 1:1.
public struct ZoomLimits: Hashable, Sendable {
    /// The smallest zoom: the whole content fits in the view.
    public let minimum: Double
    /// The largest zoom, never below `minimum`.
    public let maximum: Double

    /// The limits for content of `contentSize` points in a view of `viewSize` points.
    public init(contentSize: PixelSize, viewSize: Size2D) {
        precondition(contentSize.width > 0 && contentSize.height > 0, "content must not be empty, got \(contentSize)")
        precondition(viewSize.width > 0 && viewSize.height > 0, "view must not be empty, got \(viewSize)")
        let fit = min(viewSize.width / Double(contentSize.width), viewSize.height / Double(contentSize.height))
        let imageScale = viewSize.width / Double(contentSize.width)
        let maximum = PowerOfTwo.value(PowerOfTwo.ceilLog2(1 / imageScale) + 1) * imageScale
        self.minimum = fit
        self.maximum = max(fit, maximum)
    }

    /// `zoomScale` clamped to the limits.
    public func clamp(_ zoomScale: Double) -> Double {
        min(max(zoomScale, minimum), maximum)
    }
}
