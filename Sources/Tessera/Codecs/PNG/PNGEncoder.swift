import CCodecShims
import CPNG

/// Encodes PNG through libpng from strips: gray, gray+alpha, RGB or RGBA at 8 or 16 bits, deflate level 0-9.
/// Writes to a temporary file renamed on `finish()`, or to memory for tiles (`encode(_:options:)`).
final class PNGEncoder: MemoryEncoder {
    private let png: OpaquePointer
    private let file: AtomicFile?
    /// What is written; `path` is the file, or "tile" when encoding to memory.
    private let target: EncodeTarget
    private var rowsWritten = 0

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        format.with(bitDepth: options.bitDepth ?? format.bitDepth)
    }

    convenience init(target: EncodeTarget) throws {
        try self.init(target: target, file: AtomicFile(path: target.path))
    }

    static func encode(_ image: ImageBuffer, options: EncodeOptions) throws -> [UInt8] {
        let target = EncodeTarget(path: "tile", size: image.size, format: image.format, options: options)
        let encoder = try PNGEncoder(target: target, file: nil)
        try encoder.write(Strip(y: 0, pixels: image))
        try encoder.complete()
        var count = 0
        let bytes = tessera_png_writer_output(encoder.png, &count)
        return Array(UnsafeBufferPointer(start: bytes, count: count))
    }

    /// `file` nil encodes to memory.
    private init(target: EncodeTarget, file: AtomicFile?) throws {
        let size = target.size, format = target.format, options = target.options, name = target.path
        guard size.width > 0, size.height > 0, size.width < Int(Int32.max), size.height < Int(Int32.max) else {
            throw TesseraError.unsupported(path: name, feature: "a \(size) PNG (at most 2,147,483,646 pixels a side)")
        }
        guard let png = tessera_png_writer_create(file?.handle) else {
            throw TesseraError.io(path: name, detail: "cannot create a PNG encoder")
        }
        self.png = png
        self.file = file
        self.target = target
        let colorType: Int32
        switch format.channels {
        case .gray: colorType = PNG_COLOR_TYPE_GRAY
        case .grayAlpha: colorType = PNG_COLOR_TYPE_GRAY_ALPHA
        case .rgb: colorType = PNG_COLOR_TYPE_RGB
        case .rgba: colorType = PNG_COLOR_TYPE_RGB_ALPHA
        }
        try check(tessera_png_write_header(png, png_uint_32(size.width), png_uint_32(size.height),
                                           Int32(format.bitDepth), colorType,
                                           Int32(min(9, max(0, options.compressionLevel)))))
    }

    deinit { tessera_png_destroy(png) }

    func write(_ strip: Strip) throws {
        try target.checkStrip(strip, nextRow: rowsWritten)
        try strip.withRowPointers { rows in
            try check(tessera_png_write_rows(png, rows, png_uint_32(strip.height)))
        }
        rowsWritten += strip.height
    }

    func finish() throws {
        try complete()
        try file?.commit()
    }

    private func complete() throws {
        try target.checkComplete(rowsWritten: rowsWritten)
        try check(tessera_png_write_end(png))
    }

    private func check(_ status: Int32) throws {
        guard status == 0 else { return }
        throw TesseraError.io(path: target.path, detail: String(cString: tessera_png_message(png)))
    }
}
