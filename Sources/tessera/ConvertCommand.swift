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
            """,
        options: ReadingOptions.all + EncodingOptions.standard.allWithTIFF)

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        let options = EncodingOptions.standard.read(arguments)
        let read = ReadingOptions.read(arguments)
        let format = try ImageWriter.format(forPath: paths[1])
        let source = try ImageSource(path: paths[0], budget: options.budget)
        try write(try source.makeReader(read), to: paths[1], format: format, options: options)
    }

    /// Streams a reader into an encoder with a progress line; shared by the commands that write one image.
    static func write(_ reader: any ImageReader, to path: String, format: ImageFormat, options: EncodeOptions) throws {
        let progress = Progress("writing \(path)")
        defer { progress.finish() }
        try ImageWriter.write(reader, to: path, format: format, options: options) { done, total in
            progress.update(done, of: total)
        }
    }
}
