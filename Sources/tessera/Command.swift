import Tessera

/// One `tessera` subcommand: its declared interface and what it does.
protocol Command {
    static var spec: CommandSpec { get }
    /// Runs the command; throws `UsageError` for command-line mistakes and `TesseraError` for failures.
    static func run(_ arguments: Arguments) throws
}

/// Exit statuses: what a script calling `tessera` can rely on.
enum ExitCode: Int32 {
    case success = 0
    /// Bad input, a failed read or write, or a processing error.
    case failure = 1
    /// A mistake on the command line.
    case usage = 2
}

extension Arguments {
    /// The memory budget from `--memory-limit`.
    func budget() throws -> MemoryBudget {
        try byteSize("memory-limit").map(MemoryBudget.init(limit:)) ?? .default
    }
}

/// The encoder options, declared once for every command that writes images.
enum EncodeFlags {
    static let options = [
        Option("quality", short: "Q", value: "N", "JPEG and WebP quality, 1-100 (default 85)"),
        Option("progressive", "write a progressive JPEG"),
        Option("subsampling", value: "444|420", "JPEG chroma subsampling (default 420)"),
        Option("optimize", "JPEG: optimized Huffman tables"),
        Option("level", value: "N", "PNG and TIFF deflate level, 0-9 (default 6)"),
        Option("bit-depth", value: "8|16", "PNG and TIFF bits per sample (default: the input's)"),
        Option("lossless", "WebP: lossless"),
        Option("background", value: "RRGGBB", "colour to flatten alpha onto for JPEG (default ffffff)"),
    ]

    /// The TIFF layout options, for commands that write whole images.
    static let tiffOptions = [
        Option("compression", value: "NAME", "TIFF: none, deflate (default), lzw, jpeg or webp"),
        Option("tile-size", value: "N", "TIFF: write tiles of N x N pixels instead of strips"),
    ]

    static func parse(_ arguments: Arguments) throws -> EncodeOptions {
        var options = EncodeOptions()
        options.budget = try arguments.budget()
        options.quality = try arguments.integer("quality", in: 1...100) ?? options.quality
        options.progressive = arguments.flag("progressive")
        options.optimizeHuffman = arguments.flag("optimize")
        if let subsampling = try arguments.choice("subsampling", from: ["444", "420"]) {
            options.subsampling = EncodeOptions.Subsampling(rawValue: subsampling)!
        }
        options.compressionLevel = try arguments.integer("level", in: 0...9) ?? options.compressionLevel
        if let depth = try arguments.choice("bit-depth", from: ["8", "16"]) { options.bitDepth = Int(depth) }
        options.lossless = arguments.flag("lossless")
        if let text = arguments.value("background") {
            let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
            guard hex.count == 6, let value = Int(hex, radix: 16) else {
                throw UsageError("--background must be a colour as RRGGBB, not '\(text)'")
            }
            options.background = [UInt8(value >> 16), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        return options
    }

    /// The image options and the TIFF layout options, for commands that declare both.
    static func parseWithTIFF(_ arguments: Arguments) throws -> EncodeOptions {
        var options = try parse(arguments)
        if let name = try arguments.choice("compression", from: EncodeOptions.TIFFCompression.allCases.map(\.rawValue)) {
            options.tiffCompression = EncodeOptions.TIFFCompression(rawValue: name)!
        }
        if let tile = try arguments.integer("tile-size", in: 16...8192) {
            guard tile % 16 == 0 else { throw UsageError("--tile-size must be a multiple of 16, not \(tile)") }
            options.tiled = true
            options.tileSize = tile
        }
        return options
    }
}

/// The reading options, declared once for every command that reads one image.
enum ReadFlags {
    static let options = [
        Option("scale", value: "1/N", "reduce by N: 1/2, 1/4 and 1/8 are nearly free for JPEG (default 1)"),
        Option("page", value: "N", "TIFF: the page to read (default 0)"),
        Option("partial", "with a truncated input, write what decodes instead of failing"),
    ]

    static func parse(_ arguments: Arguments, region: Rect? = nil) throws -> ReadOptions {
        ReadOptions(region: region, scale: try scale(arguments.value("scale")),
                    page: try arguments.integer("page", in: 0...65_535) ?? 0,
                    allowPartial: arguments.flag("partial"))
    }

    /// Parses `1/N` (or `N`, or `0.5` for 1/2) into the reduction factor N.
    private static func scale(_ text: String?) throws -> Int {
        guard let text else { return 1 }
        let parts = text.split(separator: "/")
        if parts.count == 2, parts[0] == "1", let factor = Int(parts[1]), factor >= 1 { return factor }
        if let value = Double(text), value > 0, value <= 1, (1 / value).rounded() == 1 / value { return Int(1 / value) }
        throw UsageError("--scale must be 1/N for a whole number N, such as 1/2 or 1/8, not '\(text)'")
    }
}
