/// Zoomify: `NAME/ImageProperties.xml` and `NAME/TileGroup{n}/{tier}-{column}-{row}.jpg`, tier 0 the level that
/// fits in one tile, tiles numbered from tier 0 row by row and grouped 256 to a folder.
public struct ZoomifyLayout: PyramidLayout {
    public let plan: PyramidPlan
    public let name: String
    public let tileFormat: TileFormat
    /// The number of tiles in all tiers below each tier, indexed by tier.
    private let tilesBefore: [Int]

    public static let defaultTileSize = 256

    public init(plan: PyramidPlan, name: String, tileFormat: TileFormat) {
        self.plan = plan
        self.name = name
        self.tileFormat = tileFormat
        var counts: [Int] = [], total = 0
        for level in plan.levels.reversed() {
            counts.append(total)
            total += level.tileCount
        }
        tilesBefore = counts
    }

    public var padsEdgeTiles: Bool { false }
    public var topLevelEntries: [String] { [name] }

    public func path(of tile: TileAddress) -> String {
        let tier = plan.levelNumber(ofDepth: tile.depth)
        let index = tilesBefore[tier] + tile.row * plan.levels[tile.depth].columns + tile.column
        return "\(name)/TileGroup\(index / 256)/\(tier)-\(tile.column)-\(tile.row).\(tileFormat.fileExtension)"
    }

    public func metadataFiles(blankTiles: [TileAddress]) -> [(path: String, bytes: [UInt8])] {
        let xml = "<IMAGE_PROPERTIES WIDTH=\"\(plan.imageSize.width)\" HEIGHT=\"\(plan.imageSize.height)\" "
            + "NUMTILES=\"\(plan.tileCount)\" NUMIMAGES=\"1\" VERSION=\"1.8\" TILESIZE=\"\(plan.tileSize)\" />\n"
        return [("\(name)/ImageProperties.xml", Array(xml.utf8))]
            + blankTileList(blankTiles, in: name) { [plan.levelNumber(ofDepth: $0.depth), $0.column, $0.row] }
    }
}
