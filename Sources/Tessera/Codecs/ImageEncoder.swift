/// One format's encoder, fed strips top to bottom and writing to a temporary file renamed into place by
/// `finish()`. Encoders accept the pixel formats listed by `acceptedFormat(for:)`; `ImageWriter` converts.
public protocol ImageEncoder: AnyObject {
    /// Appends the next rows of the image; strips must arrive in order and cover every row once.
    func write(_ strip: Strip) throws
    /// Completes the file and renames it to its real name.
    func finish() throws
}

/// Settings for encoders; each format reads the fields that apply to it.
public struct EncodeOptions: Sendable {
    /// Chroma subsampling for JPEG.
    public enum Subsampling: String, Sendable, CaseIterable {
        case s444 = "444", s420 = "420"
    }

    /// Compression for TIFF.
    public enum TIFFCompression: String, Sendable, CaseIterable {
        case none, deflate, lzw, jpeg, webp
    }

    /// JPEG, lossy WebP and lossy JPEG 2000 quality, 1-100.
    public var quality: Int = 85
    /// JPEG: progressive scans (libjpeg then holds the whole image's coefficients, checked against the budget).
    public var progressive = false
    public var subsampling: Subsampling = .s420
    /// JPEG: optimized Huffman tables (a second pass over whole-image coefficients, checked like progressive).
    public var optimizeHuffman = false
    /// PNG and TIFF deflate level, 0-9.
    public var compressionLevel = 6
    /// Output bits per sample, 8 or 16, where the format allows; nil keeps the input's.
    public var bitDepth: Int?
    /// WebP and JPEG 2000: lossless instead of lossy.
    public var lossless = false
    /// JPEG 2000: HTJ2K (High-Throughput, Part 15) through OpenJPH, in a `.jph` file or a `.j2c` codestream; a
    /// `.jph` file always is.
    public var highThroughput = false
    public var tiffCompression: TIFFCompression = .deflate
    /// TIFF: tiles of `tileSize` instead of strips. JPEG 2000 is always tiled, at `tileSize`.
    public var tiled = false
    public var tileSize = 256
    /// The colour (RGB, 0-255) that alpha is flattened onto for formats without alpha, such as JPEG.
    public var background: [UInt8] = [255, 255, 255]
    public var budget: MemoryBudget = .default

    public init() {}
}

/// What an encoder needs to start: the image's size and pixel format, where to write, and the options.
public struct EncodeTarget {
    public var path: String
    public var size: Size
    public var format: PixelFormat
    public var options: EncodeOptions

    public init(path: String, size: Size, format: PixelFormat, options: EncodeOptions) {
        self.path = path
        self.size = size
        self.format = format
        self.options = options
    }
}

extension Strip {
    /// Calls `body` with a pointer per row, for C encoders (libjpeg, libpng) that take row arrays. Their
    /// prototypes want mutable pointers, but they only read through them.
    func withRowPointers<Result>(
        _ body: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) throws -> Result
    ) rethrows -> Result {
        try pixels.bytes.withUnsafeBytes { raw in
            let base = UnsafeMutableRawPointer(mutating: raw.baseAddress!)
            var rows = (0..<height).map { Optional(base.advanced(by: $0 * pixels.bytesPerRow).assumingMemoryBound(to: UInt8.self)) }
            return try rows.withUnsafeMutableBufferPointer { try body($0.baseAddress!) }
        }
    }
}
