import Foundation

/// IIIF Image API 3.0 level 0, static: `NAME/info.json` and a `{region}/{size}/0/default.{ext}` file per tile,
/// named canonically (region `full` when a tile covers the whole image, size `max` at full size), which are the
/// URLs OpenSeadragon and other viewers ask for, so any static web server is a IIIF level-0 server. Beside them,
/// `NAME/manifest.json`, the image's Presentation 3.0 Manifest, for the viewers that open manifests (Mirador, the
/// Universal Viewer). The tiles are named by `IIIFTileGeometry`; `Info(json:path:)` reads such a folder's
/// info.json back.
public struct IIIFLayout: PyramidLayout {
    public let plan: PyramidPlan
    public let name: String
    public let tileFormat: TileFormat
    /// The URL the folder will be served at, for info.json's `id`.
    public let baseURI: String

    public static let defaultTileSize = IIIFTileGeometry.defaultTileSize

    public init(plan: PyramidPlan, name: String, tileFormat: TileFormat, baseURI: String) {
        self.plan = plan
        self.name = name
        self.tileFormat = tileFormat
        self.baseURI = baseURI
    }

    public var padsEdgeTiles: Bool { false }
    public var topLevelEntries: [String] { [name] }

    /// How IIIF clients address the pyramid's tiles, which the files are named for.
    private var geometry: IIIFTileGeometry {
        IIIFTileGeometry(imageSize: plan.imageSize, tileWidth: plan.tileSize, tileHeight: plan.tileSize)
    }

    public func path(of tile: TileAddress) -> String {
        "\(name)/" + geometry.path(scale: plan.levels[tile.depth].scaleFactor, column: tile.column, row: tile.row,
                                   format: tileFormat.fileExtension)
    }

    public func metadataFiles(blankTiles: [TileAddress]) -> [(path: String, bytes: [UInt8])] {
        let scaleFactors = plan.levels.map { String($0.scaleFactor) }.joined(separator: ", ")
        let sizes = plan.levels.filter { $0.tileCount == 1 }.reversed()
            .map { "    { \"width\": \($0.size.width), \"height\": \($0.size.height) }" }
        let extra = tileFormat == .jpeg ? "" : "\n  \"preferredFormats\": [\"\(tileFormat.rawValue)\"],"
        let json = """
            {
              "@context": "http://iiif.io/api/image/3/context.json",
              "id": "\(baseURI)",
              "type": "ImageService3",
              "protocol": "http://iiif.io/api/image",
              "profile": "level0",\(extra)
              "width": \(plan.imageSize.width),
              "height": \(plan.imageSize.height),
              "tiles": [
                { "width": \(plan.tileSize), "height": \(plan.tileSize), "scaleFactors": [\(scaleFactors)] }
              ],
              "sizes": [
            \(sizes.joined(separator: ",\n"))
              ]
            }

            """
        return [("\(name)/info.json", Array(json.utf8))]
            + (manifest.map { [("\(name)/\(IIIFPresentation.manifestName)", $0)] } ?? [])
            + blankTileList(blankTiles, in: name) { [$0.depth, $0.column, $0.row] }
    }

    /// The image's Manifest, its Canvas painted by the largest level that is one tile (a file of the folder, and
    /// its thumbnail too, at most a tile's size); nil when no level is one tile (a pyramid of full resolution
    /// only), as then no file holds the whole image.
    private var manifest: [UInt8]? {
        guard let whole = plan.levels.first(where: { $0.tileCount == 1 }) else { return nil }
        let resource = IIIFPresentation.ContentResource(
            request: geometry.path(scale: whole.scaleFactor, column: 0, row: 0, format: tileFormat.fileExtension),
            size: whole.size, format: tileFormat)
        return IIIFPresentation.manifest(service: baseURI, profile: "level0", label: name, size: plan.imageSize,
                                         body: resource, thumbnail: resource)
    }

    /// What a IIIF level-0 folder's info.json says that reading its tiles needs: the image's size, the tile
    /// geometry, the reductions stored (powers of two, ascending) and the tiles' file extension.
    public struct Info: Sendable, Equatable {
        public let geometry: IIIFTileGeometry
        public let scaleFactors: [Int]
        public let format: String

        /// Parses an info.json (version 2 or 3: `width`, `height`, the first `tiles` entry, `preferredFormats`);
        /// `path` names the file in errors.
        public init(json: [UInt8], path: String) throws {
            guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
                  let width = object["width"] as? Int, let height = object["height"] as? Int,
                  let tiles = (object["tiles"] as? [[String: Any]])?.first, let tileWidth = tiles["width"] as? Int
            else { throw TesseraError.corrupt(path: path, detail: "a IIIF info.json needs width, height and tiles") }
            let tileHeight = tiles["height"] as? Int ?? tileWidth
            guard tileWidth >= 1, tileHeight >= 1 else {
                throw TesseraError.corrupt(path: path, detail: "the tiles of a IIIF info.json are \(tileWidth)x\(tileHeight)")
            }
            geometry = IIIFTileGeometry(imageSize: Size(width: width, height: height), tileWidth: tileWidth,
                                        tileHeight: tileHeight)
            scaleFactors = ((tiles["scaleFactors"] as? [Int]) ?? [1]).filter { $0 >= 1 && $0 & ($0 - 1) == 0 }.sorted()
            format = (object["preferredFormats"] as? [String])?.first ?? "jpg"
        }
    }
}
