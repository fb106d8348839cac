/// Shrinks a reader's image by an integer factor, each output pixel the average of a `factor x factor` block
/// (smaller at the right and bottom edges), holding only `factor` rows of the source at a time.
public final class BoxShrinkReader: ImageReader {
    private let source: any ImageReader
    private let factor: Int
    private var input: Strip
    private var sums: [UInt64]
    public private(set) var nextRow = 0
    public let size: Size

    public init(source: any ImageReader, factor: Int) {
        precondition(factor >= 1, "shrink factor must be at least 1")
        self.source = source
        self.factor = factor
        self.size = reducedSize(source.size, by: factor)
        self.input = source.makeStrip()
        self.sums = [UInt64](repeating: 0, count: size.width * source.format.channelCount)
    }

    public var format: PixelFormat { source.format }

    public func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, size.height - nextRow)
        strip.prepare(y: nextRow, rows: max(rows, 0), width: size.width, format: format)
        guard rows > 0 else { return false }
        for row in 0..<rows {
            try shrinkRow(into: &strip.pixels, row: row)
        }
        nextRow += rows
        return true
    }

    /// Averages the next `factor` source rows into row `row` of `output`.
    private func shrinkRow(into output: inout ImageBuffer, row: Int) throws {
        let channels = format.channelCount, width = source.size.width
        let blockRows = min(factor, source.size.height - nextRow * factor - row * factor)
        for index in sums.indices { sums[index] = 0 }
        var remaining = blockRows
        while remaining > 0, try source.read(into: &input, maxRows: remaining) {
            remaining -= input.height
            input.pixels.bytes.withUnsafeBytes { raw in
                sums.withUnsafeMutableBufferPointer { sums in
                    for line in 0..<input.height {
                        let base = raw.baseAddress!.advanced(by: line * input.pixels.bytesPerRow)
                        for x in 0..<width {
                            let target = (x / factor) * channels
                            for channel in 0..<channels {
                                let sample = format.bitDepth == 8
                                    ? UInt64(base.load(fromByteOffset: x * channels + channel, as: UInt8.self))
                                    : UInt64(base.loadUnaligned(fromByteOffset: 2 * (x * channels + channel),
                                                                as: UInt16.self))
                                sums[target + channel] &+= sample
                            }
                        }
                    }
                }
            }
        }
        let bytesPerRow = output.bytesPerRow
        output.bytes.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!.advanced(by: row * bytesPerRow)
            for x in 0..<size.width {
                let count = UInt64(min(factor, width - x * factor) * blockRows)
                for channel in 0..<channels {
                    let mean = (sums[x * channels + channel] + count / 2) / count
                    if format.bitDepth == 8 {
                        base.storeBytes(of: UInt8(mean), toByteOffset: x * channels + channel, as: UInt8.self)
                    } else {
                        base.storeBytes(of: UInt16(mean), toByteOffset: 2 * (x * channels + channel), as: UInt16.self)
                    }
                }
            }
        }
    }
}
