/// Shrinks a reader's image by an integer factor, each output pixel the exact rounded average of a
/// `factor x factor` block (smaller at the right and bottom edges), holding only one strip of the source at a time.
///
/// Each block row is summed in two steps that keep the hot loop flat: source rows are added sample by sample into
/// one row of column sums (a plain loop over `width * channels` samples the compiler vectorises, widening 8- or
/// 16-bit samples to 32 bits), then each run of `factor` column sums is added up and divided once per output sample.
public final class BoxShrinkReader: ImageReader {
    private let source: any ImageReader
    private let factor: Int
    private var input: Strip
    private var columnSums: [UInt32]
    public private(set) var nextRow = 0
    public let size: Size

    /// Shrinks `source` by `factor` (at most 65,536, so a column's sum of 16-bit samples fits 32 bits);
    /// the output is `ceil(size / factor)` pixels.
    public init(source: any ImageReader, factor: Int) {
        precondition(factor >= 1 && factor <= 65_536, "shrink factor must be from 1 to 65,536")
        self.source = source
        self.factor = factor
        self.size = reducedSize(source.size, by: factor)
        self.input = source.makeStrip()
        self.columnSums = [UInt32](repeating: 0, count: source.size.width * source.format.channelCount)
    }

    public var format: PixelFormat { source.format }
    public var decodesAhead: Bool { source.decodesAhead }

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

    /// Averages the next `factor` source rows (fewer at the bottom edge) into row `row` of `output`.
    private func shrinkRow(into output: inout ImageBuffer, row: Int) throws {
        let blockRows = min(factor, source.size.height - (nextRow + row) * factor)
        let samples = columnSums.count, eightBit = format.bitDepth == 8
        var remaining = blockRows, first = true
        while remaining > 0, try source.read(into: &input, maxRows: remaining) {
            remaining -= input.height
            let stride = input.pixels.bytesPerRow
            input.pixels.bytes.withUnsafeBytes { raw in
                columnSums.withUnsafeMutableBufferPointer { sums in
                    for line in 0..<input.height {
                        let base = raw.baseAddress! + line * stride
                        if eightBit {
                            Self.addRow(base.assumingMemoryBound(to: UInt8.self), count: samples, to: sums, replacing: first)
                        } else {
                            Self.addRow(base.assumingMemoryBound(to: UInt16.self), count: samples, to: sums, replacing: first)
                        }
                        first = false
                    }
                }
            }
        }
        let target = output.offset(ofRow: row)
        output.bytes.withUnsafeMutableBytes { raw in
            columnSums.withUnsafeBufferPointer { sums in
                if eightBit {
                    Self.averageBlocks(sums, channels: format.channelCount, factor: factor, blockRows: blockRows,
                                       into: (raw.baseAddress! + target).assumingMemoryBound(to: UInt8.self))
                } else {
                    Self.averageBlocks(sums, channels: format.channelCount, factor: factor, blockRows: blockRows,
                                       into: (raw.baseAddress! + target).assumingMemoryBound(to: UInt16.self))
                }
            }
        }
    }

    /// `sums[i] += row[i]` (or `=` for a block's first row) for `count` samples.
    static func addRow<Sample: FixedWidthInteger & UnsignedInteger>(_ row: UnsafePointer<Sample>, count: Int,
                                                                      to sums: UnsafeMutableBufferPointer<UInt32>,
                                                                      replacing: Bool) {
        if replacing {
            for i in 0..<count { sums[i] = UInt32(truncatingIfNeeded: row[i]) }
        } else {
            for i in 0..<count { sums[i] &+= UInt32(truncatingIfNeeded: row[i]) }
        }
    }

    /// Adds each run of `factor` pixels' column sums and writes the rounded mean of the block, whose last
    /// column may be narrower.
    static func averageBlocks<Sample: FixedWidthInteger & UnsignedInteger>(
        _ sums: UnsafeBufferPointer<UInt32>, channels: Int, factor: Int, blockRows: Int,
        into output: UnsafeMutablePointer<Sample>) {
        let width = sums.count / channels
        var x = 0, out = 0
        while x < width {
            let columns = min(factor, width - x)
            let count = UInt64(columns * blockRows)
            for channel in 0..<channels {
                var total: UInt64 = 0
                var index = x * channels + channel
                for _ in 0..<columns {
                    total &+= UInt64(sums[index])
                    index += channels
                }
                output[out + channel] = Sample(truncatingIfNeeded: (total + count / 2) / count)
            }
            x += columns
            out += channels
        }
    }
}
