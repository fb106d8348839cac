/// What a JP2 file's boxes say beyond the codestream, read before OpenJPEG decodes: the brand (`jp2 `, `jpx `,
/// `jph ` for HTJ2K), the palette's columns and depths, which channels are alpha, and the colour box. A raw
/// codestream has none of them.
struct JP2Boxes: Equatable {
    /// The file type box's brand, e.g. `jp2 `, `jph `.
    var brand: String
    /// The palette box: the bit depth of each of its columns (the channels it makes of one index).
    var paletteDepths: [Int] = []
    /// The channels a channel-definition box marks as opacity (its types 1 and 2).
    var alphaChannels: Int = 0
    /// The colour box's enumerated colour space (16 sRGB, 17 gray, 18 sYCC, ...), nil when it gives an ICC profile.
    var enumeratedColorSpace: Int?
    /// Whether a colour box carries an ICC profile.
    var hasICCProfile = false

    /// The 12-byte JP2 signature box every JP2-family file starts with.
    static let signature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    /// Reads the boxes before the codestream; throws when they are cut short or inconsistent.
    init(reading source: JPEG2000ByteSource) throws {
        brand = ""
        var offset = 0
        while offset < source.length {
            guard let box = try Self.box(at: offset, in: source) else { break }
            switch box.type {
            case "ftyp":
                brand = String(decoding: source.bytes(at: box.content, count: 4), as: UTF8.self)
            case "jp2h":
                var child = box.content
                while child < box.end, let inner = try Self.box(at: child, in: source, within: box.end) {
                    try read(inner, from: source)
                    child = inner.end
                }
            case "jp2c":
                return
            default:
                break
            }
            offset = box.end
        }
        throw TesseraError.corrupt(path: source.name, detail: "the JP2 file has no codestream box")
    }

    /// One box: its type, where its content starts and where it ends.
    private struct Box {
        var type: String
        var content: Int
        var end: Int
    }

    /// The box at `offset`, ending by `limit` (the file's end by default); nil past the end.
    private static func box(at offset: Int, in source: JPEG2000ByteSource, within limit: Int? = nil) throws -> Box? {
        let limit = limit ?? source.length
        let header = source.bytes(at: offset, count: 16)
        guard header.count >= 8 else { return nil }
        func number(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }
        let type = String(decoding: header[4..<8], as: UTF8.self)
        var length = number(header[0..<4]), headerLength = 8
        if length == 1 {
            guard header.count == 16 else { throw truncated(source, type) }
            length = number(header[8..<16])
            headerLength = 16
        } else if length == 0 {
            length = limit - offset
        }
        guard length >= headerLength, length <= limit - offset else {
            if type == "jp2c" && length > limit - offset { throw truncated(source, type) }
            throw TesseraError.corrupt(path: source.name, detail: "the JP2 \(type) box's length \(length) does not fit the file")
        }
        return Box(type: type, content: offset + headerLength, end: offset + length)
    }

    private static func truncated(_ source: JPEG2000ByteSource, _ type: String) -> TesseraError {
        .truncated(path: source.name, detail: "(the JP2 \(type) box ends past the end of the file)")
    }

    /// Takes what the header's child box `box` says.
    private mutating func read(_ box: Box, from source: JPEG2000ByteSource) throws {
        let content = source.bytes(at: box.content, count: min(box.end - box.content, 1 << 16))
        switch box.type {
        case "colr" where content.count >= 3:
            if content[0] == 1 && content.count >= 7 {
                if enumeratedColorSpace == nil && !hasICCProfile {
                    enumeratedColorSpace = content[3..<7].reduce(0) { $0 << 8 | Int($1) }
                }
            } else if content[0] == 2 || content[0] == 3 {
                hasICCProfile = true
            }
        case "pclr" where content.count >= 3:
            let columns = Int(content[2])
            guard content.count >= 3 + columns else {
                throw TesseraError.corrupt(path: source.name, detail: "the JP2 palette box is cut short")
            }
            paletteDepths = content[3..<3 + columns].map { Int($0 & 0x7F) + 1 }
        case "cdef" where content.count >= 2:
            let count = Int(content[0]) << 8 | Int(content[1])
            guard content.count >= 2 + 6 * count else {
                throw TesseraError.corrupt(path: source.name, detail: "the JP2 channel definition box is cut short")
            }
            alphaChannels = (0..<count).filter { index in
                let type = Int(content[2 + 6 * index + 2]) << 8 | Int(content[2 + 6 * index + 3])
                return type == 1 || type == 2
            }.count
        default:
            break
        }
    }
}
