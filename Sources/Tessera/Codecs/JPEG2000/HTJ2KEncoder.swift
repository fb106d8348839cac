import CHTJ2KShim
import Foundation

/// Writes HTJ2K (High-Throughput JPEG 2000, Part 15) through OpenJPH, a row at a time (OpenJPH codes a few
/// code-block rows at once, so memory follows the width): a `.jph` file (the codestream in JP2-family boxes of
/// brand `jph `) or a raw `.j2c` codestream. Lossless 5/3 with `lossless`, else the 9/7 quantized from `quality`;
/// untiled, RPCL, 64 x 64 code-blocks, wavelet levels down to one that fits `tileSize`; gray or RGB (with the
/// colour transform), with alpha, 8 or 16 bits.
final class HTJ2KEncoder: FormatEncoder {
    private let target: EncodeTarget
    private let output: AtomicFile
    private let encoder: OpaquePointer
    private var nextRow = 0

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        format.with(bitDepth: options.bitDepth ?? format.bitDepth)
    }

    /// OpenJPH's quantization step for a lossy `quality` (1-100): its own default (1/256) at 85, doubling every
    /// 10 below.
    static func quantizationStep(quality: Int) -> Float { Float(pow(2, Double(85 - quality) / 10)) / 256 }

    init(target: EncodeTarget) throws {
        let size = target.size, path = target.path, format = target.format, options = target.options
        guard size.width > 0, size.height > 0, size.width <= Int(UInt32.max), size.height <= Int(UInt32.max) else {
            throw TesseraError.unsupported(path: path, feature: "a \(size) HTJ2K image")
        }
        self.target = target
        output = try AtomicFile(path: path)
        guard let handle = output.handle else { throw TesseraError.io(path: path, detail: "cannot write the file") }
        if path.lowercased().hasSuffix(".jph") {
            let boxes = Self.boxes(size: size, format: format)
            guard fwrite(boxes, 1, boxes.count, handle) == boxes.count else {
                throw TesseraError.io(path: path, action: "write failed")
            }
        }
        let levels = JPEG2000Encoder.resolutionLevels(size: size, tile: max(16, options.tileSize))
        var error = [CChar](repeating: 0, count: 256)
        guard let encoder = tessera_htj2k_start(
            handle, UInt32(size.width), UInt32(size.height), UInt32(format.channelCount), UInt32(format.bitDepth),
            options.lossless ? 1 : 0, Self.quantizationStep(quality: options.quality), UInt32(levels - 1),
            &error, error.count) else {
            throw TesseraError.io(path: path, detail: "OpenJPH could not start the codestream: \(Self.message(error))")
        }
        self.encoder = encoder
    }

    deinit { tessera_htj2k_destroy(encoder) }

    func write(_ strip: Strip) throws {
        try target.checkStrip(strip, nextRow: nextRow)
        var error = [CChar](repeating: 0, count: 256)
        try strip.pixels.bytes.withUnsafeBytes { pixels in
            for row in 0..<strip.height {
                guard tessera_htj2k_write_row(encoder, pixels.baseAddress! + row * strip.pixels.bytesPerRow,
                                              &error, error.count) != 0 else {
                    throw TesseraError.io(path: target.path, detail: "OpenJPH failed writing row \(nextRow + row):"
                                          + " \(Self.message(error))")
                }
            }
        }
        nextRow += strip.height
    }

    func finish() throws {
        try target.checkComplete(rowsWritten: nextRow)
        var error = [CChar](repeating: 0, count: 256)
        guard tessera_htj2k_finish(encoder, &error, error.count) != 0 else {
            throw TesseraError.io(path: target.path, detail: "OpenJPH failed finishing: \(Self.message(error))")
        }
        try output.commit()
    }

    /// OpenJPH's message in a shim's error buffer.
    private static func message(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The boxes of a `.jph` file before its codestream: the signature, the file type (brand `jph `), the header
    /// (image header, enumerated colour space, and channel definitions when there is alpha) and the codestream
    /// box's header, its length 0: to the end of the file.
    static func boxes(size: Size, format: PixelFormat) -> [UInt8] {
        func u32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        func u16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] { u32(8 + body.count) + Array(type.utf8) + body }
        let channels = format.channelCount
        let header = u32(size.height) + u32(size.width) + u16(channels) + [UInt8(format.bitDepth - 1), 7, 0, 0]
        let colour: [UInt8] = [1, 0, 0] + u32(format.isColor ? 16 : 17)
        var jp2h = box("ihdr", header) + box("colr", colour)
        if format.hasAlpha {
            // Colour channels are colours 1, 2, 3 (or 1); the last is opacity over the whole image.
            var definitions = u16(channels)
            for channel in 0..<channels {
                let isAlpha = channel == channels - 1
                definitions += u16(channel) + u16(isAlpha ? 1 : 0) + u16(isAlpha ? 0 : channel + 1)
            }
            jp2h += box("cdef", definitions)
        }
        return JP2Boxes.signature + box("ftyp", Array("jph ".utf8) + u32(0) + Array("jph ".utf8)) + box("jp2h", jp2h)
            + u32(0) + Array("jp2c".utf8)
    }
}
