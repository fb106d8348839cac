import CCodecShims
import CPNG

/// Encodes PNG through libpng from strips: gray, gray+alpha, RGB or RGBA at 8 or 16 bits, deflate level 0-9.
final class PNGEncoder: FormatEncoder {
    private let png: OpaquePointer
    private let file: AtomicFile
    private let target: EncodeTarget
    private var rowPointers: [UnsafeMutablePointer<UInt8>?] = []
    private var rowsWritten = 0

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        format.with(bitDepth: options.bitDepth ?? format.bitDepth)
    }

    init(target: EncodeTarget) throws {
        guard target.size.width > 0, target.size.height > 0,
              target.size.width < Int(Int32.max), target.size.height < Int(Int32.max) else {
            throw TesseraError.invalidArgument("\(target.path): cannot write a \(target.size) PNG")
        }
        self.target = target
        file = try AtomicFile(path: target.path)
        guard let png = tessera_png_writer_create(file.handle) else {
            throw TesseraError.io(path: target.path, detail: "cannot create a PNG encoder")
        }
        self.png = png
        let colorType: Int32
        switch target.format.channels {
        case .gray: colorType = PNG_COLOR_TYPE_GRAY
        case .grayAlpha: colorType = PNG_COLOR_TYPE_GRAY_ALPHA
        case .rgb: colorType = PNG_COLOR_TYPE_RGB
        case .rgba: colorType = PNG_COLOR_TYPE_RGB_ALPHA
        }
        try check(tessera_png_write_header(png, png_uint_32(target.size.width), png_uint_32(target.size.height),
                                           Int32(target.format.bitDepth), colorType,
                                           Int32(min(9, max(0, target.options.compressionLevel)))))
    }

    deinit { tessera_png_destroy(png) }

    func write(_ strip: Strip) throws {
        precondition(strip.format == target.format && strip.width == target.size.width, "strip does not match the encoder")
        rowPointers.removeAll(keepingCapacity: true)
        let stride = strip.pixels.bytesPerRow
        try strip.pixels.bytes.withUnsafeBytes { raw in
            // libpng takes mutable row pointers but only reads through them.
            let base = UnsafeMutableRawPointer(mutating: raw.baseAddress!)
            for row in 0..<strip.height {
                rowPointers.append(base.advanced(by: row * stride).assumingMemoryBound(to: UInt8.self))
            }
            try rowPointers.withUnsafeMutableBufferPointer { pointers in
                try check(tessera_png_write_rows(png, pointers.baseAddress, png_uint_32(strip.height)))
            }
        }
        rowsWritten += strip.height
    }

    func finish() throws {
        guard rowsWritten == target.size.height else {
            throw TesseraError.invalidArgument("\(target.path): \(rowsWritten) of \(target.size.height) rows written")
        }
        try check(tessera_png_write_end(png))
        try file.commit()
    }

    private func check(_ status: Int32) throws {
        guard status == 0 else { return }
        throw TesseraError.io(path: target.path, detail: String(cString: tessera_png_message(png)))
    }
}
