/// Reads an image already in memory as strips, so in-memory images (tiles, thumbnails, test images) go through
/// the same encoders and stages as decoded files.
public final class BufferReader: ImageReader {
    private let image: ImageBuffer
    public private(set) var nextRow = 0

    public init(_ image: ImageBuffer) { self.image = image }

    public var size: Size { image.size }
    public var format: PixelFormat { image.format }

    public func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, image.height - nextRow)
        strip.prepare(y: nextRow, rows: max(rows, 0), width: image.width, format: image.format)
        guard rows > 0 else { return false }
        let start = image.offset(ofRow: nextRow), count = rows * image.bytesPerRow
        strip.pixels.bytes.withUnsafeMutableBytes { target in
            image.bytes.withUnsafeBytes { source in
                target.baseAddress!.copyMemory(from: source.baseAddress!.advanced(by: start), byteCount: count)
            }
        }
        nextRow += rows
        return true
    }
}
