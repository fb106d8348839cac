import Foundation
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
    var scaleFactors: [Int] { Array(Set(levels.map(\.scaleFactor) + nativeScaleFactors)).sorted() }

    /// Whole-image sizes a viewer can ask for first, smallest first: each reduced level's size as stored (a level
    /// halved rounding down is a pixel short of the rounded-up size), so that asking for one reads that level as it
    /// is.
    var sizes: [Tessera.Size] {
        levels.dropFirst().reversed().map { properties.storedLevel(scale: $0.scaleFactor) ?? $0.size }
    }

    var json: [UInt8] {
        var object: [String: Any] = [
            "@context": Self.context,
            "id": id,
            "type": "ImageService3",
            "protocol": "http://iiif.io/api/image",
            "profile": "level2",
            "width": size.width,
            "height": size.height,
            "tiles": [["width": tileSize, "height": tileSize, "scaleFactors": scaleFactors]],
            "sizes": sizes.map { ["width": $0.width, "height": $0.height] },
            "extraFormats": ["webp", "jp2"],
            "extraQualities": ["color", "gray", "bitonal"],
            "extraFeatures": ["mirroring", "sizeUpscaling", "canonicalLinkHeader", "profileLinkHeader"],
        ]
        if let maxArea = limits.maxArea { object["maxArea"] = maxArea }
        if let maxWidth = limits.maxWidth { object["maxWidth"] = maxWidth }
        if let maxHeight = limits.maxHeight { object["maxHeight"] = maxHeight }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys,
                                                                                  .withoutEscapingSlashes])) ?? Data()
        return Array(data) + [0x0A]
    }
}
