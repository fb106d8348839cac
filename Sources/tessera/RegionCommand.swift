import Foundation
import Tessera

/// `tessera region`: writes a rectangle of an image, optionally reduced, decoding only what it covers
/// (JPEG: cropped columns and skipped rows, and DCT scaling for 1/2, 1/4 and 1/8).
enum RegionCommand: Command {
    static let name = "region"
    static let spec = CommandSpec(
        name: name, usage: "region IN OUT --rect x,y,w,h [--scale 1/N] [options]",
        summary: "extract a rectangle of an image, optionally reduced, decoding only what it needs",
        details: "The rectangle is in full-resolution pixels; --scale 1/N reduces it (N a whole number).\n"
            + StandardStreams.help,
        options: [rect] + ReadingOptions.all + [StandardStreams.format] + EncodingOptions.standard.allWithTIFF)

    static let rect = Option("rect", .rect, default: .required, "the rectangle to extract, in pixels")

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        let options = EncodingOptions.standard.read(arguments)
        let read = ReadingOptions.read(arguments, region: arguments[rect])
        let output = try StandardStreams.Output(paths[1], arguments)
        let source = try StandardStreams.source(paths[0], budget: options.budget)
        let reader = try source.makeReader(read)
        try output.write(reader, options: options)
    }
}

extension ValueKind where Value == Rect {
    /// A rectangle in pixels written `x,y,w,h`, with x, y >= 0 and w, h > 0.
    static var rect: Self {
        ValueKind(placeholder: "x,y,w,h", requirement: "be x,y,w,h with x, y >= 0 and w, h > 0", read: { text in
            // Spaces around each number are allowed; split in Swift, not by Foundation's trimming (which bridges
            // each field to an NSString, a tenth of a millisecond of every region's start).
            let numbers = text.split(separator: ",").compactMap { field -> Int? in
                let words = field.split(whereSeparator: \.isWhitespace)
                return words.count == 1 ? Int(words[0]) : nil
            }
            guard numbers.count == 4, numbers[0] >= 0, numbers[1] >= 0, numbers[2] > 0, numbers[3] > 0 else { return nil }
            return Rect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
        }, show: { "\($0.x),\($0.y),\($0.width),\($0.height)" })
    }
}
