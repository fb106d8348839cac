import Tessera

/// The encoder options, declared once for every command that writes images. Only JPEG and WebP quality's default
/// differs between commands (`tile` writes smaller tiles at 75), so each command holds its own instance.
struct EncodingOptions: Sendable {
    let quality: Option<Int>

    /// The options with the encoder's own default quality.
    static let standard = EncodingOptions(quality: EncodeOptions().quality)

    init(quality: Int) {
        self.quality = Option("quality", short: "Q", .integer(in: 1...100), default: quality, "JPEG, WebP and JPEG 2000 quality")
    }

    private static let defaults = EncodeOptions()
    static let progressive = Option(flag: "progressive", "write a progressive JPEG")
    static let subsampling = Option("subsampling", .choice, default: defaults.subsampling, "JPEG chroma subsampling")
    static let optimize = Option(flag: "optimize", "JPEG: optimized Huffman tables")
    static let level = Option("level", .integer(in: 0...9), default: defaults.compressionLevel,
                              "PNG and TIFF deflate level")
    static let bitDepth = Option("bit-depth", ValueKind.choice([("8", 8), ("16", 16)]).optional,
                                 default: .described("the input's", defaults.bitDepth), "PNG and TIFF bits per sample")
    static let lossless = Option(flag: "lossless", "WebP and JPEG 2000: lossless")
    static let htj2k = Option(flag: "htj2k", "JPEG 2000: write HTJ2K (Part 15, through OpenJPH) to .j2c; .jph always is")
    static let background = Option("background", .colour, default: defaults.background,
                                   "colour to flatten alpha onto for JPEG")

    /// The TIFF layout options, for commands that write whole images.
    static let tiffCompression = Option("compression", .choice, default: defaults.tiffCompression, "TIFF: compression")
    static let tiffTileSize = Option("tile-size", ValueKind.integer(in: 16...8192, multipleOf: 16).optional,
                                     "TIFF: write tiles of N x N pixels instead of strips; JPEG 2000: its tile size")

    /// The image options, in the order help lists them.
    var all: [any OptionDeclaration] {
        [quality, Self.progressive, Self.subsampling, Self.optimize, Self.level, Self.bitDepth, Self.lossless,
         Self.htj2k, Self.background]
    }

    /// The image options and the TIFF layout options.
    var allWithTIFF: [any OptionDeclaration] { all + [Self.tiffCompression, Self.tiffTileSize] }

    /// The encoder options the command line asks for (the TIFF layout ones stay at their defaults unless declared).
    func read(_ arguments: Arguments) -> EncodeOptions {
        var options = EncodeOptions()
        options.budget = arguments.budget
        options.quality = arguments[quality]
        options.progressive = arguments[Self.progressive]
        options.optimizeHuffman = arguments[Self.optimize]
        options.subsampling = arguments[Self.subsampling]
        options.compressionLevel = arguments[Self.level]
        options.bitDepth = arguments[Self.bitDepth]
        options.lossless = arguments[Self.lossless]
        options.highThroughput = arguments[Self.htj2k]
        options.background = arguments[Self.background]
        options.tiffCompression = arguments[Self.tiffCompression]
        if let tile = arguments[Self.tiffTileSize] {
            options.tiled = true
            options.tileSize = tile
        }
        return options
    }
}

extension ValueKind where Value == [UInt8] {
    /// An sRGB colour written RRGGBB in hex, with or without a leading #.
    static var colour: Self {
        ValueKind(placeholder: "RRGGBB", requirement: "be a colour as RRGGBB", read: { text in
            let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
            guard hex.count == 6, let value = Int(hex, radix: 16) else { return nil }
            return [UInt8(value >> 16), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }, show: { bytes in bytes.map { String(repeating: "0", count: $0 < 16 ? 1 : 0) + String($0, radix: 16) }.joined() })
    }
}
