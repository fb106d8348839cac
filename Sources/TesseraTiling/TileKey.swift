/// Identifies one tile: its level of detail and its integer column and row in that level's grid.
public struct TileKey: Hashable, Sendable, CustomStringConvertible {
    /// The level index; see `TiledLayerConfiguration` for how levels map to scales.
    public var level: Int
    public var column: Int
    public var row: Int

    public init(level: Int, column: Int, row: Int) {
        self.level = level
        self.column = column
        self.row = row
    }

    public var description: String { "\(level)/\(column)_\(row)" }
}
