/// IIIF Image API 3.0 level 0, static: `NAME/info.json` and a `{region}/{size}/0/default.{ext}` file per tile,
/// named canonically (region `full` when a tile covers the whole image, size `max` at full size), which are the
/// URLs OpenSeadragon and other viewers ask for, so any static web server is a IIIF level-0 server.
public struct IIIFLayout: PyramidLayout {
    public let plan: PyramidPlan
    public let name: String
    public let tileFormat: TileFormat
    /// The URL the folder will be served at, for info.json's `id`.
    public let baseURI: String

    public static let defaultTileSize = 512

    public init(plan: PyramidPlan, name: String, tileFormat: TileFormat, baseURI: String) {
        self.plan = plan
        self.name = name
        self.tileFormat = tileFormat
        self.baseURI = baseURI
    }

    public var padsEdgeTiles: Bool { false }
    public var topLevelEntries: [String] { [name] }

    public func path(of tile: TileAddress) -> String {
        let image = plan.imageSize, level = plan.levels[tile.depth]
        let rect = plan.tileRect(depth: tile.depth, column: tile.column, row: tile.row)
        let scale = level.scaleFactor
        let x = rect.x * scale, y = rect.y * scale
        let region = Rect(x: x, y: y, width: min(rect.width * scale, image.width - x),
                          height: min(rect.height * scale, image.height - y))
        let regionName = region == Rect(image) ? "full" : region.description
        let sizeName = rect.size == image ? "max" : "\(rect.width),\(rect.height)"
        return "\(name)/\(regionName)/\(sizeName)/0/default.\(tileFormat.fileExtension)"
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
            + blankTileList(blankTiles, in: name) { [$0.depth, $0.column, $0.row] }
    }
}
