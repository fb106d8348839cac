/// The classic tile cutter: one level, `NAME/{NAME}_{column}_{row}.{ext}`, no overlap, edge tiles as they fall.
public struct GridLayout: PyramidLayout {
    public let plan: PyramidPlan
    public let name: String
    public let tileFormat: TileFormat

    public static let defaultTileSize = 256

    public init(plan: PyramidPlan, name: String, tileFormat: TileFormat) {
        self.plan = plan
        self.name = name
        self.tileFormat = tileFormat
    }

    public var padsEdgeTiles: Bool { false }
    public var topLevelEntries: [String] { [name] }

    public func path(of tile: TileAddress) -> String {
        "\(name)/\(name)_\(tile.column)_\(tile.row).\(tileFormat.fileExtension)"
    }

    public func metadataFiles(blankTiles: [TileAddress]) -> [(path: String, bytes: [UInt8])] {
        blankTileList(blankTiles, in: name) { [$0.column, $0.row] }
    }
}
