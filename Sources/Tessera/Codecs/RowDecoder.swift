/// What each format's decoder provides: rows of its image (at the scale it was opened at) top to bottom,
/// with optional shortcuts to skip rows and to decode only some columns. `RegionReader` turns it into strips.
protocol RowDecoder: AnyObject {
    /// The decoded image's size in pixels (after any scaling done by the codec).
    var size: Size { get }
    var format: PixelFormat { get }
    /// Asks to decode only `columns`, before the first row; returns the columns that will actually be
    /// decoded, which contain `columns` (codecs crop at block boundaries). Default: all columns.
    func restrictColumns(to columns: Range<Int>) throws -> Range<Int>
    /// Tells the decoder, before the first row, that only `rows` will be read (after skipping to their first), so
    /// a codec that decodes areas (JPEG 2000) decodes no rows below them. Default: nothing.
    func restrictRows(to rows: Range<Int>)
    /// Skips rows without returning them; codecs that can, do so without decoding them. Default: `discardRows`.
    func skipRows(_ count: Int) throws
    /// Decodes the next `count` rows in full and keeps none: what checking a file needs, where `skipRows` may leave
    /// what it skips undecoded. Default: each row decoded into one scratch row.
    func discardRows(_ count: Int) throws
    /// Decodes the next `count` rows of the restricted columns into `rows`, `bytesPerRow` apart.
    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws
    /// Whether rows are decoded ahead of the calls asking for them, on threads of the decoder's own. Default: false.
    var decodesAhead: Bool { get }
}

extension RowDecoder {
    var decodesAhead: Bool { false }

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> { 0..<size.width }

    func restrictRows(to rows: Range<Int>) {}

    func skipRows(_ count: Int) throws { try discardRows(count) }

    func discardRows(_ count: Int) throws {
        guard count > 0 else { return }
        var row = [UInt8](repeating: 0, count: size.width * format.bytesPerPixel)
        for _ in 0..<count {
            try row.withUnsafeMutableBytes { try decodeRows(into: $0.baseAddress!, bytesPerRow: $0.count, count: 1) }
        }
    }
}

/// Reads a rectangle of a `RowDecoder`'s image as strips: skips the rows above it (cheaply where the codec
/// can), decodes only its columns where the codec can, and stops after its last row.
final class RegionReader: ImageReader {
    private let decoder: RowDecoder
    private let region: Rect
    private let budget: MemoryBudget
    private let name: String
    private var columns: Range<Int>?
    private var scratch: [UInt8] = []
    private(set) var nextRow = 0

    /// `region` is in the decoder's pixel coordinates and must lie inside its image; strips are sized to fit
    /// `budget` before they are allocated (a hostile width must not allocate first and fail later).
    init(decoder: RowDecoder, region: Rect, budget: MemoryBudget, name: String) {
        precondition(Rect(decoder.size).intersection(region) == region, "region outside the image")
        self.decoder = decoder
        self.region = region
        self.budget = budget
        self.name = name
    }

    var size: Size { region.size }
    var format: PixelFormat { decoder.format }
    var decodesAhead: Bool { decoder.decodesAhead }

    func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        var rows = min(maxRows, region.height - nextRow)
        guard rows > 0 else {
            strip.prepare(y: nextRow, rows: 0, width: region.width, format: format)
            return false
        }
        let decoded = try startIfNeeded()
        // A strip is the window streaming may always hold, but it is still allocated: one row must fit the budget
        // (a hostile width fails here, before allocating), and a strip holds no more rows than fit.
        try budget.checkRows(width: decoded.count, rows: 1, format: format, for: "a row of pixels", path: name)
        rows = max(1, min(rows, budget.limit / max(1, decoded.count * format.bytesPerPixel)))
        strip.prepare(y: nextRow, rows: rows, width: region.width, format: format)
        let bytesPerPixel = format.bytesPerPixel
        if decoded == region.x..<region.maxX {
            let stride = strip.pixels.bytesPerRow
            try strip.pixels.bytes.withUnsafeMutableBytes {
                try decoder.decodeRows(into: $0.baseAddress!, bytesPerRow: stride, count: rows)
            }
        } else {
            let stride = decoded.count * bytesPerPixel
            if scratch.count < stride * rows {
                // Left uninitialised: every row is decoded into before it is copied out.
                scratch = [UInt8](unsafeUninitializedCapacity: stride * rows) { $1 = stride * rows }
            }
            try scratch.withUnsafeMutableBytes {
                try decoder.decodeRows(into: $0.baseAddress!, bytesPerRow: stride, count: rows)
            }
            let skip = (region.x - decoded.lowerBound) * bytesPerPixel, rowBytes = strip.pixels.bytesPerRow
            strip.pixels.bytes.withUnsafeMutableBytes { target in
                scratch.withUnsafeBytes { source in
                    for row in 0..<rows {
                        target.baseAddress!.advanced(by: row * rowBytes)
                            .copyMemory(from: source.baseAddress!.advanced(by: row * stride + skip), byteCount: rowBytes)
                    }
                }
            }
        }
        nextRow += rows
        return true
    }

    private func startIfNeeded() throws -> Range<Int> {
        if let columns { return columns }
        let decoded = try decoder.restrictColumns(to: region.x..<region.maxX)
        decoder.restrictRows(to: region.y..<region.maxY)
        try decoder.skipRows(region.y)
        columns = decoded
        return decoded
    }
}
