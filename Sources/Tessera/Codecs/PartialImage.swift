/// An image made from the data an `IncrementalImageSource` has received so far: always the whole frame, with a
/// record of how much of it is decoded.
///
/// - A top-down image (baseline JPEG, plain PNG, WebP, and every format once complete) has its first `validRows`
///   rows decoded; the rows below are zero (transparent where the format has alpha), and `passes` is nil.
/// - A progressive JPEG shows the frame as of its last complete scan, an interlaced PNG as of its last complete
///   Adam7 pass (each pass pixel filling its block): `passes` counts those scans or passes, and every row is
///   valid once the first one is complete.
public struct PartialImage: Sendable {
    /// The pixels, in the decoder's format (as `ImageSource` reads it), at full size or reduced by `makeImage`'s
    /// `maxPixelSize`.
    public var pixels: ImageBuffer
    /// Rows from the top, in `pixels`, that hold decoded data; `pixels.height` when the whole frame is known.
    public var validRows: Int
    /// The complete progressive JPEG scans or interlaced PNG passes shown; nil for images decoded top-down.
    public var passes: Int?
    /// Whether this is the finished image, identical to a one-shot decode.
    public var isComplete: Bool

    /// A frame whose first `validRows` rows (all of them, after `passes` scans or passes) hold decoded pixels.
    public init(pixels: ImageBuffer, validRows: Int, passes: Int?, isComplete: Bool) {
        self.pixels = pixels
        self.validRows = validRows
        self.passes = passes
        self.isComplete = isComplete
    }

    /// The image reduced so its longer side is at most `maxPixelSize` pixels (box shrink, then Lanczos3), or
    /// itself when it fits. `validRows` drops the reduced rows whose kernel window reaches undecoded rows.
    func reduced(toMaxPixelSize maxPixelSize: Int, budget: MemoryBudget) throws -> PartialImage {
        let longer = max(pixels.width, pixels.height)
        guard maxPixelSize > 0, longer > maxPixelSize else { return self }
        let target = ThumbnailSize.maxPixelSize(maxPixelSize).resampledSize(for: pixels.size, covering: false)
        let factor = max(1, min(pixels.width / target.width, pixels.height / target.height) / 2)
        var reader: any ImageReader = BufferReader(pixels)
        if factor > 1 { reader = BoxShrinkReader(source: reader, factor: factor) }
        if reader.size != target { reader = try ResamplingReader(source: reader, size: target) }
        let image = try reader.readAll(budget: budget, name: "the partial image")
        // Lanczos3 reaches three output rows either side at a reduction of 2x or more, the box one more.
        let rows = validRows == pixels.height ? target.height
            : max(0, validRows * target.height / pixels.height - Self.reducedRowMargin)
        return PartialImage(pixels: image, validRows: rows, passes: passes, isComplete: isComplete)
    }

    /// Rows lost at the bottom of the valid part when the image is reduced (see `reduced`).
    static let reducedRowMargin = 4
}
