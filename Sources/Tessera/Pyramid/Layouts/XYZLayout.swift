/// XYZ (Google Maps / slippy-map style): `NAME/{z}/{y}/{x}.{ext}`, z 0 the level that fits in one tile, every
/// tile the full tile size with edges padded in the background colour.
public struct XYZLayout: PyramidLayout {
    public let plan: PyramidPlan
    public let name: String
    public let tileFormat: TileFormat

    public static let defaultTileSize = 256

    public init(plan: PyramidPlan, name: String, tileFormat: TileFormat) {
        self.plan = plan
        self.name = name
        self.tileFormat = tileFormat
    }

    public var padsEdgeTiles: Bool { true }
    public var topLevelEntries: [String] { [name] }

    public func path(of tile: TileAddress) -> String {
        "\(name)/\(plan.levelNumber(ofDepth: tile.depth))/\(tile.row)/\(tile.column).\(tileFormat.fileExtension)"
    }

    public func metadataFiles(blankTiles: [TileAddress]) -> [(path: String, bytes: [UInt8])] {
        blankTileList(blankTiles, in: name) { [plan.levelNumber(ofDepth: $0.depth), $0.column, $0.row] }
    }
}
