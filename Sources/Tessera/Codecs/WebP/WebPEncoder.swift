import CWebP
import Foundation

/// Writes a WebP, lossy or lossless, alpha kept. libwebp encodes a whole picture at once, so the strips are
/// gathered into one buffer (checked against the budget) and encoded by `finish()`.
final class WebPEncoder: MemoryEncoder {
    /// WebP's largest width or height, in pixels.
    static let maximumDimension = Int(WEBP_MAX_DIMENSION)

    private let target: EncodeTarget
    private let output: AtomicFile
    private var pixels: [UInt8]
    private var nextRow = 0

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        format.hasAlpha ? .rgba8 : .rgb8
    }

    init(target: EncodeTarget) throws {
        let size = target.size, path = target.path
        guard size.width > 0, size.height > 0,
              size.width <= Self.maximumDimension, size.height <= Self.maximumDimension else {
            throw TesseraError.unsupported(path: path, feature: "a \(size) WebP (at most \(Self.maximumDimension) pixels a side)")
        }
        // The gathered rows, and libwebp's own copy of the picture (ARGB or YUVA, at most 4 bytes a pixel).
        let bytes = size.width * size.height * target.format.bytesPerPixel
        try target.options.budget.check(bytes + size.width * size.height * 4, for: "encoding the WebP", path: path)
        pixels = [UInt8](repeating: 0, count: bytes)
        self.target = target
        output = try AtomicFile(path: path)
    }

    func write(_ strip: Strip) throws {
        try target.checkStrip(strip, nextRow: nextRow)
        let rowBytes = strip.pixels.bytesPerRow, start = nextRow * rowBytes
        pixels.replaceSubrange(start..<start + strip.height * rowBytes,
                               with: strip.pixels.bytes[0..<strip.height * rowBytes])
        nextRow += strip.height
    }

    func finish() throws {
        try target.checkComplete(rowsWritten: nextRow)
        let encoded = try Self.encode(pixels, size: target.size, format: target.format, options: target.options,
                                      name: target.path)
        guard let handle = output.handle, fwrite(encoded, 1, encoded.count, handle) == encoded.count else {
            throw TesseraError.io(path: target.path, action: "write failed")
        }
        try output.commit()
    }

    static func encode(_ image: ImageBuffer, options: EncodeOptions) throws -> [UInt8] {
        try encode(image.bytes, size: image.size, format: image.format, options: options, name: "tile")
    }

    /// Encodes whole-image pixels (RGB or RGBA 8-bit, rows packed) to WebP bytes.
    private static func encode(_ pixels: [UInt8], size: Size, format: PixelFormat, options: EncodeOptions,
                               name path: String) throws -> [UInt8] {
        try CodecLibrary.webp.require()
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw TesseraError.unsupported(path: path, feature: "this libwebp version") }
        config.lossless = options.lossless ? 1 : 0
        config.quality = Float(min(100, max(0, options.quality)))
        // Lossless means every pixel, including the colour under transparent ones, which libwebp otherwise drops.
        config.exact = options.lossless ? 1 : 0
        guard WebPValidateConfig(&config) != 0 else {
            throw TesseraError.invalidArgument("\(path): invalid WebP settings")
        }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw TesseraError.unsupported(path: path, feature: "this libwebp version") }
        defer { WebPPictureFree(&picture) }
        picture.width = Int32(size.width)
        picture.height = Int32(size.height)
        picture.use_argb = options.lossless ? 1 : 0
        let stride = Int32(size.width * format.bytesPerPixel)
        let imported = pixels.withUnsafeBufferPointer { buffer in
            format.hasAlpha ? WebPPictureImportRGBA(&picture, buffer.baseAddress, stride)
                : WebPPictureImportRGB(&picture, buffer.baseAddress, stride)
        }
        guard imported != 0 else { throw TesseraError.io(path: path, detail: "out of memory encoding the WebP") }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { writer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writer)
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0 else {
            throw TesseraError.io(path: path, detail: "WebP encoding failed (libwebp error \(picture.error_code.rawValue))")
        }
        return Array(UnsafeBufferPointer(start: writer.mem, count: writer.size))
    }
}
