import Tessera

/// The IIIF Image API 3.0 information document (`info.json`) for one image served at level 2.
struct IIIFInfo {
    static let context = "http://iiif.io/api/image/3/context.json"
    /// The content type info.json is served with.
    static let contentType = "application/ld+json;profile=\"\(context)\""
    static let profileURI = "http://iiif.io/api/image/3/level2.json"

    let id: String
    /// The image's size and its stored levels.
    let properties: ImageProperties
    let tileSize: Int
    let limits: IIIFLimits
    /// Scale factors the image decodes natively beyond the pyramid's (a JPEG 2000's resolution levels).
    var nativeScaleFactors: [Int] = []

    private var size: Tessera.Size { properties.size }

    /// The pyramid a viewer walks: levels halving down to the one that fits in one tile.
    private var levels: [PyramidPlan.LevelPlan] {
        (try? PyramidPlan(imageSize: size, tileSize: tileSize, depth: .oneTile))?.levels ?? []
    }

    /// Scale factors 1, 2, 4, ... down to the one at which the image fits in one tile, and the native ones.
    private func scaleFactors(of levels: [PyramidPlan.LevelPlan]) -> [Int] {
        Array(Set(levels.map(\.scaleFactor) + nativeScaleFactors)).sorted()
    }

    /// Whole-image sizes a viewer can ask for first, smallest first: each reduced level's size as stored (a level
    /// halved rounding down is a pixel short of the rounded-up size), so that asking for one reads that level as it
    /// is.
    private func sizes(of levels: [PyramidPlan.LevelPlan]) -> [Tessera.Size] {
        levels.dropFirst().reversed().map { properties.storedLevel(scale: $0.scaleFactor) ?? $0.size }
    }

    /// The document, as JSONSerialization writes it pretty-printed with sorted keys (two-space indents,
    /// `"key" : value`), written directly: the document is the first request of every image a viewer opens, and
    /// Foundation's writer (an `Any` tree, keys sorted through ICU) cost more than sending a stored tile.
    var json: [UInt8] {
        let levels = levels
        var object: [(String, JSONValue)] = [
            ("@context", .string(Self.context)),
            ("id", .string(id)),
            ("type", .string("ImageService3")),
            ("protocol", .string("http://iiif.io/api/image")),
            ("profile", .string("level2")),
            ("width", .number(size.width)),
            ("height", .number(size.height)),
            ("tiles", .array([.object([("width", .number(tileSize)), ("height", .number(tileSize)),
                                       ("scaleFactors", .array(scaleFactors(of: levels).map(JSONValue.number)))])])),
            ("sizes", .array(sizes(of: levels).map { .object([("width", .number($0.width)), ("height", .number($0.height))]) })),
            ("extraFormats", .strings(["webp", "jp2"])),
            ("extraQualities", .strings(["color", "gray", "bitonal"])),
            ("extraFeatures", .strings(["mirroring", "sizeUpscaling", "canonicalLinkHeader", "profileLinkHeader"])),
        ]
        if let maxArea = limits.maxArea { object.append(("maxArea", .number(maxArea))) }
        if let maxWidth = limits.maxWidth { object.append(("maxWidth", .number(maxWidth))) }
        if let maxHeight = limits.maxHeight { object.append(("maxHeight", .number(maxHeight))) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2048)
        JSONValue.object(object).write(into: &bytes, indent: 0)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

/// The values info.json holds, written as JSON.
private enum JSONValue {
    case string(String)
    case number(Int)
    case array([JSONValue])
    /// Members with distinct ASCII keys, in any order: written sorted (as their bytes are).
    case object([(String, JSONValue)])

    static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    /// Appends the value's UTF-8, pretty-printed `indent` spaces in (keys sorted by their UTF-8 bytes, slashes
    /// unescaped). Bytes, not a String: info.json is the first request of every image a viewer opens, and growing a
    /// String a piece at a time cost most of its writing.
    func write(into bytes: inout [UInt8], indent: Int) {
        switch self {
        case let .string(value): Self.quote(value, into: &bytes)
        case let .number(value): Self.append(value, to: &bytes)
        case let .array(values):
            Self.container("[", "]", count: values.count, indent: indent, into: &bytes) { index, bytes in
                values[index].write(into: &bytes, indent: indent + 2)
            }
        case let .object(members):
            let sorted = members.sorted { $0.0 < $1.0 }
            Self.container("{", "}", count: sorted.count, indent: indent, into: &bytes) { index, bytes in
                Self.quote(sorted[index].0, into: &bytes)
                Self.append(" : ", to: &bytes)
                sorted[index].1.write(into: &bytes, indent: indent + 2)
            }
        }
    }

    /// An array's or object's `count` items between `open` and `close`, one a line `indent + 2` spaces in and
    /// comma-separated (`item` writes item `index`), the close `indent` spaces in; `[]` or `{}` when there are none.
    private static func container(_ open: Unicode.Scalar, _ close: Unicode.Scalar, count: Int, indent: Int,
                                  into bytes: inout [UInt8], item: (_ index: Int, _ bytes: inout [UInt8]) -> Void) {
        bytes.append(UInt8(ascii: open))
        guard count > 0 else { return bytes.append(UInt8(ascii: close)) }
        bytes.append(UInt8(ascii: "\n"))
        for index in 0..<count {
            for _ in 0..<indent + 2 { bytes.append(UInt8(ascii: " ")) }
            item(index, &bytes)
            if index < count - 1 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\n"))
        }
        for _ in 0..<indent { bytes.append(UInt8(ascii: " ")) }
        bytes.append(UInt8(ascii: close))
    }

    /// Appends `text`'s UTF-8 at once from its contiguous storage (a native string's), as a copy rather than a
    /// byte at a time.
    private static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` in decimal digits, with no string made for it.
    private static func append(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude, unit: UInt = 1
        while rest / unit >= 10 { unit *= 10 }
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / unit))
            rest %= unit
            unit /= 10
        } while unit > 0
    }

    /// A JSON string: quotes, backslashes and control characters escaped (a string with none, as info.json's keys
    /// and URLs are, appended whole).
    private static func quote(_ value: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        defer { bytes.append(UInt8(ascii: "\"")) }
        var value = value
        guard value.withUTF8({ $0.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } }) else {
            return append(value, to: &bytes)
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += "\\\"".utf8
            case UInt8(ascii: "\\"): bytes += "\\\\".utf8
            case UInt8(ascii: "\n"): bytes += "\\n".utf8
            case UInt8(ascii: "\r"): bytes += "\\r".utf8
            case UInt8(ascii: "\t"): bytes += "\\t".utf8
            case ..<0x20:
                let hex = String(byte, radix: 16)
                bytes += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
            default: bytes.append(byte)
            }
        }
    }
}
