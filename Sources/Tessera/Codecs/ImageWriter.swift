/// A format's encoder as `ImageWriter` creates it.
protocol FormatEncoder: ImageEncoder {
    /// The pixel format this encoder takes for input in `format` (the nearest it can store).
    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat
    /// Starts writing; `target.format` is one `acceptedFormat` returned.
    init(target: EncodeTarget) throws
}

/// A format's encoder that can also encode a whole image to bytes in memory (tiles, server responses).
protocol MemoryEncoder: FormatEncoder {
    /// Encodes a whole image, in a format `acceptedFormat` returns, to bytes in memory.
    static func encode(_ image: ImageBuffer, options: EncodeOptions) throws -> [UInt8]
    /// Encodes every remaining row of `reader` (in a format `acceptedFormat` returns) to bytes in memory, a strip
    /// of `stripHeight` rows at a time where the format streams; a format that needs the whole image reads it all.
    static func encode(rowsOf reader: any ImageReader, options: EncodeOptions, stripHeight: Int) throws -> [UInt8]
}

extension MemoryEncoder {
    static func encode(rowsOf reader: any ImageReader, options: EncodeOptions, stripHeight: Int) throws -> [UInt8] {
        try encode(reader.readAll(budget: options.budget), options: options)
    }
}

/// Writes a reader's image to a file: picks the encoder from the format (or the file's extension), converts
/// pixels to what the format stores, and streams strips from the reader to the encoder.
public enum ImageWriter {
    /// The formats Tessera writes.
    public static let writableFormats: [ImageFormat] = [.jpeg, .png, .webp, .tiff, .jpeg2000]

    /// The format to write for `path`, from its extension.
    public static func format(forPath path: String) throws -> ImageFormat {
        let fileExtension = path.split(separator: "/").last?.split(separator: ".", omittingEmptySubsequences: false)
        guard let fileExtension, fileExtension.count > 1, let format = ImageFormat(fileExtension: String(fileExtension.last!)),
              writableFormats.contains(format) else {
            throw TesseraError.invalidArgument(
                "\(path): cannot tell the output format from the extension (use .jpg, .png, .webp, .tif, .jp2, .jph or .j2c)")
        }
        return format
    }

    static func encoderType(for format: ImageFormat) -> (any FormatEncoder.Type)? {
        switch format {
        case .jpeg: return JPEGEncoder.self
        case .png: return PNGEncoder.self
        case .tiff: return TIFFEncoder.self
        case .webp: return WebPEncoder.self
        case .jpeg2000: return JPEG2000Encoder.self
        default: return nil
        }
    }

    /// Opens an encoder for an image of `size` whose pixels come in `format`; returns it with the pixel
    /// format it expects, which the caller converts to (see `FormatConvertingReader`).
    public static func makeEncoder(path: String, format fileFormat: ImageFormat? = nil, size: Size,
                                   pixelFormat: PixelFormat, options: EncodeOptions = EncodeOptions())
        throws -> (encoder: any ImageEncoder, pixelFormat: PixelFormat) {
        let type = try encoderType(path: path, format: fileFormat, options: options)
        let accepted = type.acceptedFormat(for: pixelFormat, options: options)
        let encoder = try type.init(target: EncodeTarget(path: path, size: size, format: accepted, options: options))
        return (encoder, accepted)
    }

    /// The encoder for `format`, or for the extension of `path` when `format` is nil.
    /// JPEG 2000 is HTJ2K (OpenJPH) in a `.jph` file or when `options.highThroughput` says so (in `.jph` or `.j2c`
    /// only: a `.jp2` file is classic JPEG 2000), else OpenJPEG's (a `.j2c` as a raw codestream).
    private static func encoderType(path: String, format: ImageFormat?, options: EncodeOptions) throws
        -> any FormatEncoder.Type {
        let fileFormat = try format ?? self.format(forPath: path)
        let lowercased = path.lowercased()
        if fileFormat == .jpeg2000, options.highThroughput || lowercased.hasSuffix(".jph") {
            guard lowercased.hasSuffix(".jph") || lowercased.hasSuffix(".j2c") else {
                throw TesseraError.invalidArgument("\(path): HTJ2K is written as .jph or .j2c, not .jp2")
            }
            return HTJ2KEncoder.self
        }
        guard let type = encoderType(for: fileFormat) else {
            throw TesseraError.unsupported(path: path, feature: "writing \(fileFormat.displayName) files")
        }
        return type
    }

    /// Encodes an in-memory image (a tile, a thumbnail) to bytes, converting its pixels as the format needs.
    public static func encode(_ image: ImageBuffer, as format: ImageFormat, options: EncodeOptions = EncodeOptions())
        throws -> [UInt8] {
        guard let type = encoderType(for: format) as? any MemoryEncoder.Type else {
            throw TesseraError.unsupported(path: "image", feature: "encoding \(format.displayName) in memory")
        }
        let accepted = type.acceptedFormat(for: image.format, options: options)
        let pixels = accepted == image.format ? image
            : try FormatConvertingReader(source: BufferReader(image), format: accepted, background: options.background)
                .readAll(budget: options.budget)
        return try type.encode(pixels, options: options)
    }

    /// Encodes every remaining row of `reader` to bytes in memory, converting its pixels as the format needs, a
    /// strip at a time where the format streams (JPEG, PNG), so memory holds a strip and the output, not the image.
    public static func encode(_ reader: any ImageReader, as format: ImageFormat, options: EncodeOptions = EncodeOptions(),
                              stripHeight: Int = 64) throws -> [UInt8] {
        guard let type = encoderType(for: format) as? any MemoryEncoder.Type else {
            throw TesseraError.unsupported(path: "image", feature: "encoding \(format.displayName) in memory")
        }
        let accepted = type.acceptedFormat(for: reader.format, options: options)
        let source = accepted == reader.format
            ? reader : FormatConvertingReader(source: reader, format: accepted, background: options.background)
        return try type.encode(rowsOf: source, options: options, stripHeight: stripHeight)
    }

    /// Whether `format` is encoded to memory a strip at a time (else its encoder holds the whole image).
    public static func streamsToMemory(_ format: ImageFormat) -> Bool {
        encoderType(for: format) is any RowPointerEncoder.Type
    }

    /// Streams every remaining row of `reader` into a new file at `path`; `progress` is told the rows done.
    public static func write(_ reader: any ImageReader, to path: String, format: ImageFormat? = nil,
                             options: EncodeOptions = EncodeOptions(), stripHeight: Int = 64,
                             progress: ((_ rowsDone: Int, _ rows: Int) -> Void)? = nil) throws {
        let type = try encoderType(path: path, format: format, options: options)
        let accepted = type.acceptedFormat(for: reader.format, options: options)
        let source = accepted == reader.format
            ? reader : FormatConvertingReader(source: reader, format: accepted, background: options.background)
        // The first strip is decoded before the output exists, so an unreadable input fails as the input's error.
        var strip = source.makeStrip()
        var more = try source.read(into: &strip, maxRows: stripHeight)
        let encoder = try type.init(target: EncodeTarget(path: path, size: source.size, format: accepted, options: options))
        while more {
            try encoder.write(strip)
            progress?(strip.y + strip.height, source.size.height)
            more = try source.read(into: &strip, maxRows: stripHeight)
        }
        try encoder.finish()
    }
}
