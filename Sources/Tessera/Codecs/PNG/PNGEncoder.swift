import CCodecShims
import CPNG

/// Encodes PNG through libpng from strips: gray, gray+alpha, RGB or RGBA at 8 or 16 bits, deflate level 0-9.
/// Writes to a temporary file renamed on `finish()`, or to memory for tiles (`encode(_:options:)`).
final class PNGEncoder: RowPointerEncoder {
    private let png: OpaquePointer
    let file: AtomicFile?
    let target: EncodeTarget
    var rowsWritten = 0

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        format.with(bitDepth: options.bitDepth ?? format.bitDepth)
    }

    init(target: EncodeTarget, file: AtomicFile?) throws {
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

    func compressRows(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) -> Int32 {
        tessera_png_write_rows(png, rows, png_uint_32(count))
    }

    func endStream() -> Int32 { tessera_png_write_end(png) }

    var libraryMessage: String { String(cString: tessera_png_message(png)) }

    func memoryOutput() -> [UInt8] {
        var count = 0
        let bytes = tessera_png_writer_output(png, &count)
        return Array(UnsafeBufferPointer(start: bytes, count: count))
    }
}
