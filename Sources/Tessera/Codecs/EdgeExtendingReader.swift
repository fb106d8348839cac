/// Grows another reader's image to a larger size by repeating its last column and last row. Pyramid writers
/// halve sizes rounding down (libvips) or up (Deep Zoom, Tessera); a level one pixel short of the rounded-up size
/// is still the right level to read, and this makes up the difference.
final class EdgeExtendingReader: ImageReader {
    private let source: any ImageReader
    private var input: Strip
    /// The source's last row, repeated below it.
    private var lastRow: [UInt8] = []
    let size: Size
    private(set) var nextRow = 0

    /// `size` must be at least the source's in both directions.
    init(source: any ImageReader, size: Size) {
        precondition(size.width >= source.size.width && size.height >= source.size.height, "cannot shrink")
        self.source = source
        self.size = size
        input = source.makeStrip()
    }

    var format: PixelFormat { source.format }
    var decodesAhead: Bool { source.decodesAhead }

    func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, size.height - nextRow)
        strip.prepare(y: nextRow, rows: max(rows, 0), width: size.width, format: format)
        guard rows > 0 else { return false }
        let pixel = format.bytesPerPixel, sourceRowBytes = source.size.width * pixel
        var filled = 0
        if nextRow < source.size.height, try source.read(into: &input, maxRows: rows) {
            filled = input.height
            for row in 0..<filled {
                let start = row * input.pixels.bytesPerRow
                widen(Array(input.pixels.bytes[start..<start + sourceRowBytes]), into: &strip.pixels, row: row)
            }
            let lastStart = (filled - 1) * input.pixels.bytesPerRow
            lastRow = Array(input.pixels.bytes[lastStart..<lastStart + sourceRowBytes])
        }
        for row in filled..<rows { widen(lastRow, into: &strip.pixels, row: row) }
        nextRow += rows
        return true
    }

    /// Copies a source row into `row` of `buffer`, repeating its last pixel to the full width.
    private func widen(_ sourceRow: [UInt8], into buffer: inout ImageBuffer, row: Int) {
        let pixel = format.bytesPerPixel, start = buffer.offset(ofRow: row)
        buffer.bytes.replaceSubrange(start..<start + sourceRow.count, with: sourceRow)
        let last = Array(sourceRow.suffix(pixel))
        for x in source.size.width..<size.width {
            buffer.bytes.replaceSubrange(start + x * pixel..<start + (x + 1) * pixel, with: last)
        }
    }
}
