/// A source of pixels top to bottom, one strip at a time: the one streaming model every stage shares
/// (decoders, format conversion, shrinking, resampling). Memory is bounded by the strip, never the image.
public protocol ImageReader: AnyObject {
    /// The size of the image this reader produces, in pixels.
    var size: Size { get }
    /// The layout of the pixels it produces.
    var format: PixelFormat { get }
    /// The index of the next row `read(into:maxRows:)` will produce.
    var nextRow: Int { get }
    /// Fills `strip` with the next rows, at most `maxRows`, reusing its storage.
    /// Returns false, leaving `strip` empty, once every row has been read.
    func read(into strip: inout Strip, maxRows: Int) throws -> Bool
    /// Whether the reader decodes ahead of its consumer on threads of its own (a large JPEG on every core), so
    /// that one more thread reading it ahead (`readingAhead()`) would add only a copy and its hand-offs. Default:
    /// false.
    var decodesAhead: Bool { get }
}

extension ImageReader {
    public var decodesAhead: Bool { false }

    /// This reader, read ahead of its consumer on a thread of its own (`PrefetchingReader`) so that decoding
    /// overlaps the stages after it, unless it decodes ahead already. A 100 MP thumbnail decoded on every core
    /// spent 30 ms of CPU and 470 context switches in the extra thread.
    public func readingAhead() -> any ImageReader { decodesAhead ? self : PrefetchingReader(source: self) }

    /// A strip sized for this reader, to pass to `read(into:maxRows:)`.
    public func makeStrip() -> Strip { Strip(width: size.width, format: format) }

    /// Reads every remaining row into one buffer; for images known to be small (tiles, thumbnails).
    public func readAll(budget: MemoryBudget = .default, name: String = "image") throws -> ImageBuffer {
        try budget.checkRows(width: size.width, rows: size.height - nextRow, format: format,
                             for: "the whole image", path: name)
        var image = ImageBuffer(width: size.width, height: size.height - nextRow, format: format)
        var strip = makeStrip()
        let first = nextRow
        while try read(into: &strip, maxRows: 64) {
            let start = image.offset(ofRow: strip.y - first), count = strip.height * strip.pixels.bytesPerRow
            image.bytes.withUnsafeMutableBytes { target in
                strip.pixels.bytes.withUnsafeBytes { source in
                    target.baseAddress!.advanced(by: start).copyMemory(from: source.baseAddress!, byteCount: count)
                }
            }
        }
        return image
    }
}

extension Strip {
    /// Makes the strip hold `rows` rows starting at row `y`, with the given width and format.
    mutating func prepare(y: Int, rows: Int, width: Int, format: PixelFormat) {
        if pixels.width != width || pixels.format != format {
            pixels = ImageBuffer(width: width, height: 0, format: format)
        }
        self.y = y
        pixels.setHeight(rows)
    }
}
