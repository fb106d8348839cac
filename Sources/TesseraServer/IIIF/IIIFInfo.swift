import Foundation
import Tessera

/// The IIIF Image API 3.0 information document (`info.json`) for one image served at level 2.
struct IIIFInfo {
    static let context = "http://iiif.io/api/image/3/context.json"
    /// The content type info.json is served with.
    static let contentType = "application/ld+json;profile=\"\(context)\""
    static let profileURI = "http://iiif.io/api/image/3/level2.json"

    let id: String
    let size: Tessera.Size
    let tileSize: Int
    let limits: IIIFLimits

    /// Scale factors 1, 2, 4, ... down to the one at which the image fits in one tile.
    var scaleFactors: [Int] {
        var factors = [1]
        while (size.width + factors.last! - 1) / factors.last! > tileSize
            || (size.height + factors.last! - 1) / factors.last! > tileSize {
            factors.append(factors.last! * 2)
        }
        return factors
    }

    /// Whole-image sizes a viewer can ask for first: each scale factor's size up to 1/2 of full, smallest first.
    var sizes: [Tessera.Size] {
        scaleFactors.dropFirst().reversed().map {
            Tessera.Size(width: (size.width + $0 - 1) / $0, height: (size.height + $0 - 1) / $0)
        }
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
            "extraFormats": ["webp"],
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
