@testable import Tessera

/// An image in memory served as strips, to feed encoders in tests.
final class BufferReader: ImageReader {
    private let image: ImageBuffer
    private(set) var nextRow = 0

    init(_ image: ImageBuffer) { self.image = image }

    var size: Size { image.size }
    var format: PixelFormat { image.format }

    func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, size.height - nextRow)
        strip.prepare(y: nextRow, rows: max(0, rows), width: size.width, format: format)
        guard rows > 0 else { return false }
        let start = image.offset(ofRow: nextRow), count = rows * image.bytesPerRow
        strip.pixels.bytes.replaceSubrange(0..<count, with: image.bytes[start..<start + count])
        nextRow += rows
        return true
    }
}
