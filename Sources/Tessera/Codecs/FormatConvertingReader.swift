/// Converts another reader's pixels to a target format strip by strip: gray to RGB (replicated) and back
/// (Rec. 601 luma, as Pillow and libjpeg weigh it), alpha added (opaque) or flattened onto a background,
/// 8-bit widened to 16 (`v * 257`) or narrowed with rounding.
public final class FormatConvertingReader: ImageReader {
    private let source: any ImageReader
    private var input: Strip
    public let format: PixelFormat
    private let background: (Int, Int, Int)

    /// `background` is the RGB colour (0-255) that alpha is flattened onto when the target has no alpha.
    public init(source: any ImageReader, format: PixelFormat, background: [UInt8] = [255, 255, 255]) {
        self.source = source
        self.format = format
        self.input = source.makeStrip()
        let scale = format.bitDepth == 16 ? 257 : 1
        self.background = (Int(background[0]) * scale, Int(background[1]) * scale, Int(background[2]) * scale)
    }

    public var size: Size { source.size }
    public var nextRow: Int { source.nextRow }
    public var decodesAhead: Bool { source.decodesAhead }

    public func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        guard try source.read(into: &input, maxRows: maxRows) else {
            strip.prepare(y: input.y, rows: 0, width: size.width, format: format)
            return false
        }
        strip.prepare(y: input.y, rows: input.height, width: size.width, format: format)
        let from = source.format, to = format, width = size.width, rows = input.height
        let inputStride = input.pixels.bytesPerRow, outputStride = strip.pixels.bytesPerRow
        input.pixels.bytes.withUnsafeBytes { raw in
            strip.pixels.bytes.withUnsafeMutableBytes { out in
                for row in 0..<rows {
                    Self.convertRow(raw.baseAddress!.advanced(by: row * inputStride), from: from,
                                    out.baseAddress!.advanced(by: row * outputStride), to: to,
                                    width: width, background: background)
                }
            }
        }
        return true
    }

    /// Converts one row of `width` pixels; samples are handled at the target depth.
    private static func convertRow(_ source: UnsafeRawPointer, from: PixelFormat, _ target: UnsafeMutableRawPointer,
                                   to: PixelFormat, width: Int, background: (Int, Int, Int)) {
        let maxValue = to.bitDepth == 16 ? 65535 : 255
        let inChannels = from.channelCount, outChannels = to.channelCount
        @inline(__always) func load(_ index: Int) -> Int {
            let value = from.bitDepth == 8
                ? Int(source.load(fromByteOffset: index, as: UInt8.self))
                : Int(source.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
            if from.bitDepth == to.bitDepth { return value }
            return to.bitDepth == 16 ? value * 257 : (value + 128) / 257
        }
        @inline(__always) func store(_ value: Int, _ index: Int) {
            if to.bitDepth == 8 {
                target.storeBytes(of: UInt8(value), toByteOffset: index, as: UInt8.self)
            } else {
                target.storeBytes(of: UInt16(value), toByteOffset: 2 * index, as: UInt16.self)
            }
        }
        for x in 0..<width {
            let base = x * inChannels
            var red: Int, green: Int, blue: Int
            if from.isColor {
                red = load(base); green = load(base + 1); blue = load(base + 2)
            } else {
                red = load(base); green = red; blue = red
            }
            let alpha = from.hasAlpha ? load(base + inChannels - 1) : maxValue
            if from.hasAlpha && !to.hasAlpha {
                red = (red * alpha + background.0 * (maxValue - alpha) + maxValue / 2) / maxValue
                green = (green * alpha + background.1 * (maxValue - alpha) + maxValue / 2) / maxValue
                blue = (blue * alpha + background.2 * (maxValue - alpha) + maxValue / 2) / maxValue
            }
            let out = x * outChannels
            if to.isColor {
                store(red, out); store(green, out + 1); store(blue, out + 2)
            } else {
                store(from.isColor ? luma(red, green, blue) : red, out)
            }
            if to.hasAlpha { store(alpha, out + outChannels - 1) }
        }
    }
}
