/// Grows another reader's image to a larger size by repeating its last column and last row. Pyramid writers
/// halve sizes rounding down (libvips) or up (Deep Zoom, Tessera); a level one pixel short of the rounded-up size
/// is still the right level to read, and this makes up the difference.
public final class EdgeExtendingReader: ImageReader {
    private let source: any ImageReader
    private var input: Strip
    /// The source's last row, repeated below it.
    private var lastRow: [UInt8] = []
    /// The grown size in pixels.
    public let size: Size
    public private(set) var nextRow = 0

    /// Grows `source` to `size` pixels, which must be at least the source's in both directions.
    public init(source: any ImageReader, size: Size) {
        precondition(size.width >= source.size.width && size.height >= source.size.height, "cannot shrink")
        self.source = source
        self.size = size
        input = source.makeStrip()
    }

    public var format: PixelFormat { source.format }
    public var decodesAhead: Bool { source.decodesAhead }

    public func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, size.height - nextRow)
        strip.prepare(y: nextRow, rows: max(rows, 0), width: size.width, format: format)
        guard rows > 0 else { return false }
        let pixel = format.bytesPerPixel, sourceRowBytes = source.size.width * pixel
        var filled = 0
        if nextRow < source.size.height, try source.read(into: &input, maxRows: rows) {
            filled = input.height
            lastRow.removeAll(keepingCapacity: true)
            let lastStart = (filled - 1) * input.pixels.bytesPerRow
            lastRow.append(contentsOf: input.pixels.bytes[lastStart..<lastStart + sourceRowBytes])
        }
        let sourceBytesPerRow = input.pixels.bytesPerRow, targetBytesPerRow = strip.pixels.bytesPerRow
        input.pixels.bytes.withUnsafeBytes { decoded in
            lastRow.withUnsafeBytes { last in
                strip.pixels.bytes.withUnsafeMutableBytes { target in
                    for row in 0..<rows {
                        let from = row < filled ? decoded.baseAddress! + row * sourceBytesPerRow : last.baseAddress!
                        widen(from, into: target.baseAddress! + row * targetBytesPerRow, sourceRowBytes: sourceRowBytes)
                    }
                }
            }
        }
        nextRow += rows
        return true
    }

    /// Copies a source row of `sourceRowBytes` into `target`, repeating its last pixel to the full width.
    private func widen(_ sourceRow: UnsafeRawPointer, into target: UnsafeMutableRawPointer, sourceRowBytes: Int) {
        let pixel = format.bytesPerPixel
        target.copyMemory(from: sourceRow, byteCount: sourceRowBytes)
        let last = sourceRow + sourceRowBytes - pixel
        for x in source.size.width..<size.width { (target + x * pixel).copyMemory(from: last, byteCount: pixel) }
    }
}
