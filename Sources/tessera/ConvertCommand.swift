import Tessera

/// `tessera convert`: re-encodes an image in the format its output name asks for, streaming strips so memory
/// stays bounded by the image's width.
enum ConvertCommand: Command {
    static let name = "convert"
    static let spec = CommandSpec(
        name: name, usage: "convert IN OUT [options]",
        summary: "convert an image to JPEG, PNG, WebP, TIFF or JPEG 2000 (by OUT's extension), streaming, optionally reduced",
        details: """
            OUT's extension names the format: .jpg, .png, .webp, .tif, .jp2 (JPEG 2000), .jph (HTJ2K) or .j2c (a
            bare codestream). The output is written under a temporary name and renamed when complete.
            \(StandardStreams.help)
            """,
        options: ReadingOptions.all + [StandardStreams.format] + EncodingOptions.standard.allWithTIFF)

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        let options = EncodingOptions.standard.read(arguments)
        let read = ReadingOptions.read(arguments)
        let output = try StandardStreams.Output(paths[1], arguments)
        let source = try StandardStreams.source(paths[0], budget: options.budget)
        let reader = try source.makeReader(read)
        try output.write(reader, options: options)
    }
}
