import Foundation
import Tessera
import TesseraTiling

/// What a IIIF Image API info.json says that the viewer needs: the image's base URI, size and tile size.
public struct IIIFInfo: Hashable, Sendable {
    /// The base URI of the image (`id` in version 3, `@id` in version 2), without a trailing slash.
    public let id: String
    /// The full-resolution size, in pixels.
    public let size: PixelSize
    /// The server's preferred tile size (the first `tiles` entry), or `IIIFTileGeometry.defaultTileSize` when it
    /// gives none.
    public let tileSize: PixelSize

    /// Reads an info.json document; `url` is used in errors.
    public init(json: [UInt8], url: String) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
            throw ViewerError.http(url: url, detail: "info.json is not a JSON object")
        }
        guard let id = (object["id"] ?? object["@id"]) as? String,
            let width = object["width"] as? Int, let height = object["height"] as? Int, width > 0, height > 0
        else { throw ViewerError.http(url: url, detail: "info.json lacks id, width or height") }
        self.id = id.hasSuffix("/") ? String(id.dropLast()) : id
        size = PixelSize(width: width, height: height)
        let tiles = (object["tiles"] as? [[String: Any]])?.first
        let tileWidth = tiles?["width"] as? Int ?? IIIFTileGeometry.defaultTileSize
        let tileHeight = tiles?["height"] as? Int ?? tileWidth
        tileSize = PixelSize(width: max(1, tileWidth), height: max(1, tileHeight))
    }

    /// How the server's tiles are addressed.
    public var geometry: IIIFTileGeometry {
        IIIFTileGeometry(imageSize: Tessera.Size(width: size.width, height: size.height), tileWidth: tileSize.width,
                         tileHeight: tileSize.height)
    }

    /// The request for `region` of depth `depth` (pixels of that depth), as a JPEG of exactly its size.
    public func url(depth: Int, region: Rect) -> String {
        "\(id)/" + geometry.path(scale: 1 << depth, levelRect: region)
    }
}

/// Tiles fetched from a IIIF Image API server over HTTP or HTTPS (Tessera's `HTTPClient`), one region request
/// per tile, decoded as JPEG.
public struct IIIFSource: TileSource {
    public let name: String
    public let info: IIIFInfo

    /// Reads the info.json at `url` (or at `url/info.json` when `url` is the image's base URI).
    public init(url: String) throws {
        let infoURL = url.hasSuffix("info.json") ? url : (url.hasSuffix("/") ? url : url + "/") + "info.json"
        let response = try HTTPClient.shared.get(infoURL)
        name = url
        info = try IIIFInfo(json: response.body, url: infoURL)
    }

    public var contentSize: PixelSize { info.size }
    public var tileSize: PixelSize { info.tileSize }
    public var depthCount: Int { Self.depthsToOneTile(contentSize: info.size, tileSize: info.tileSize) }

    public func pixels(depth: Int, region: Rect) throws -> ImageBuffer {
        let url = info.url(depth: depth, region: region)
        let response = try HTTPClient.shared.get(url)
        let image = try ImageSource(bytes: response.body, name: url).makeReader().readAll(name: url)
        guard image.width == region.width, image.height == region.height else {
            throw ViewerError.http(url: url, detail: "the server sent \(image.size), not \(region.width)x\(region.height)")
        }
        return image
    }
}
