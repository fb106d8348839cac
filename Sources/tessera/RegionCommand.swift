import Tessera

/// `tessera region`: writes a rectangle of an image, optionally reduced, decoding only what it covers
/// (JPEG: cropped columns and skipped rows, and DCT scaling for 1/2, 1/4 and 1/8).
enum RegionCommand: Command {
    static let spec = CommandSpec(
        name: "region", usage: "region IN OUT --rect x,y,w,h [--scale 1/N] [options]",
        summary: "extract a rectangle of an image, optionally reduced, decoding only what it needs",
        details: "The rectangle is in full-resolution pixels; --scale 1/N reduces it (N a whole number).",
        options: [
            Option("rect", value: "x,y,w,h", "the rectangle to extract, in pixels (required)"),
            Option("scale", value: "1/N", "reduce by N: 1/2, 1/4 and 1/8 are free for JPEG (default 1)"),
            Option("page", value: "N", "TIFF: the page to read (default 0)"),
            Option("partial", "with a truncated input, write what decodes instead of failing"),
        ] + EncodeFlags.options)

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        guard let rectText = arguments.value("rect") else { throw UsageError("--rect x,y,w,h is required") }
        let numbers = rectText.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 4, numbers[0] >= 0, numbers[1] >= 0, numbers[2] > 0, numbers[3] > 0 else {
            throw UsageError("--rect must be x,y,w,h with x, y >= 0 and w, h > 0, not '\(rectText)'")
        }
        let options = try EncodeFlags.parse(arguments)
        let format = try ImageWriter.format(forPath: paths[1])
        let source = try ImageSource(path: paths[0], budget: options.budget)
        let read = ReadOptions(region: Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]),
                               scale: try scale(arguments.value("scale")),
                               page: try arguments.integer("page", in: 0...65_535) ?? 0,
                               allowPartial: arguments.flag("partial"))
        try ConvertCommand.write(try source.makeReader(read), to: paths[1], format: format, options: options)
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
