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
        var object: [String: JSONValue] = [
            "@context": .string(Self.context),
            "id": .string(id),
            "type": .string("ImageService3"),
            "protocol": .string("http://iiif.io/api/image"),
            "profile": .string("level2"),
            "width": .number(size.width),
            "height": .number(size.height),
            "tiles": .array([.object(["width": .number(tileSize), "height": .number(tileSize),
                                      "scaleFactors": .array(scaleFactors(of: levels).map(JSONValue.number))])]),
            "sizes": .array(sizes(of: levels).map { .object(["width": .number($0.width), "height": .number($0.height)]) }),
            "extraFormats": .strings(["webp", "jp2"]),
            "extraQualities": .strings(["color", "gray", "bitonal"]),
            "extraFeatures": .strings(["mirroring", "sizeUpscaling", "canonicalLinkHeader", "profileLinkHeader"]),
        ]
        if let maxArea = limits.maxArea { object["maxArea"] = .number(maxArea) }
        if let maxWidth = limits.maxWidth { object["maxWidth"] = .number(maxWidth) }
        if let maxHeight = limits.maxHeight { object["maxHeight"] = .number(maxHeight) }
        var text = ""
        JSONValue.object(object).write(into: &text, indent: "")
        return Array((text + "\n").utf8)
    }
}

/// The values info.json holds, written as JSON.
private enum JSONValue {
    case string(String)
    case number(Int)
    case array([JSONValue])
    case object([String: JSONValue])

    static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    /// Appends the value, pretty-printed at `indent` (keys sorted by their UTF-8 bytes, slashes unescaped).
    func write(into text: inout String, indent: String) {
        let inner = indent + "  "
        switch self {
        case let .string(value): Self.quote(value, into: &text)
        case let .number(value): text += String(value)
        case let .array(values):
            guard !values.isEmpty else { text += "[]"; return }
            text += "[\n"
            for (index, value) in values.enumerated() {
                text += inner
                value.write(into: &text, indent: inner)
                text += index == values.count - 1 ? "\n" : ",\n"
            }
            text += indent + "]"
        case let .object(members):
            guard !members.isEmpty else { text += "{}"; return }
            text += "{\n"
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                text += inner
                Self.quote(key, into: &text)
                text += " : "
                members[key]!.write(into: &text, indent: inner)
                text += index == keys.count - 1 ? "\n" : ",\n"
            }
            text += indent + "}"
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    private static func quote(_ value: String, into text: inout String) {
        text += "\""
        // Most strings (keys, URLs) need no escape: appended whole, not a scalar at a time.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += value
            text += "\""
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
