/// Deep Zoom: `NAME.dzi` (XML: TileSize, Overlap, Format, Size) beside `NAME_files/{level}/{column}_{row}.{ext}`,
/// level 0 the smallest; by default 254-pixel tiles with a 1-pixel overlap, down to 1 x 1, as libvips writes.
public struct DeepZoomLayout: PyramidLayout {
    public let plan: PyramidPlan
    public let name: String
    public let tileFormat: TileFormat

    public static let defaultTileSize = 254
    public static let defaultOverlap = 1

    public init(plan: PyramidPlan, name: String, tileFormat: TileFormat) {
        self.plan = plan
        self.name = name
        self.tileFormat = tileFormat
    }

    public var padsEdgeTiles: Bool { false }
    public var topLevelEntries: [String] { ["\(name)_files", "\(name).dzi"] }

    public func path(of tile: TileAddress) -> String {
        "\(name)_files/\(plan.levelNumber(ofDepth: tile.depth))/\(tile.column)_\(tile.row).\(tileFormat.rawValue)"
    }

    public func metadataFiles(blankTiles: [TileAddress]) -> [(path: String, bytes: [UInt8])] {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <Image xmlns="http://schemas.microsoft.com/deepzoom/2008" Format="\(tileFormat.rawValue)" \
            Overlap="\(plan.overlap)" TileSize="\(plan.tileSize)">
              <Size Width="\(plan.imageSize.width)" Height="\(plan.imageSize.height)"/>
            </Image>

            """
        return [("\(name).dzi", Array(xml.utf8))]
            + blankTileList(blankTiles, in: "\(name)_files") { [plan.levelNumber(ofDepth: $0.depth), $0.column, $0.row] }
    }
}

/// The record of tiles `--skip-blank` left out: `blank-tiles.json` in the layout's folder, a JSON array of
/// `[level, column, row]` in the layout's own level numbering; nothing when no tile was left out.
func blankTileList(_ tiles: [TileAddress], in folder: String, address: (TileAddress) -> [Int])
    -> [(path: String, bytes: [UInt8])] {
    guard !tiles.isEmpty else { return [] }
    let entries = tiles.map(address).sorted { $0.lexicographicallyPrecedes($1) }
        .map { "[" + $0.map(String.init).joined(separator: ",") + "]" }
    return [("\(folder)/blank-tiles.json", Array(("[\n" + entries.joined(separator: ",\n") + "\n]\n").utf8))]
}
