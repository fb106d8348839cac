/// Identifies one tile: its level of detail and its integer column and row in that level's grid.
public struct TileKey: Hashable, Sendable, CustomStringConvertible {
    /// The level index; see `TiledLayerConfiguration` for how levels map to scales.
    public var level: Int
    /// The column in the level's grid, 0 at the left edge of the content.
    public var column: Int
    /// The row in the level's grid, 0 at the top edge of the content.
    public var row: Int

    /// Makes the key of tile (`column`, `row`) of level `level`.
    public init(level: Int, column: Int, row: Int) {
        self.level = level
        self.column = column
        self.row = row
    }

    /// The tile `levels` levels coarser that covers this one. Each level halves the pixel density with the same
    /// tile size in pixels, so a coarser tile covers 2x2 finer ones: the grid indices halve, rounding down.
    public func ancestor(levelsUp levels: Int) -> TileKey {
        precondition(levels >= 0, "an ancestor is zero or more levels up, got \(levels)")
        return TileKey(level: level - levels, column: column >> levels, row: row >> levels)
    }

    /// The four tiles one level finer that this one covers, row by row; at the content's right and bottom edges
    /// some fall outside the finer grid (`LevelOfDetail.contains(_:)` tells).
    public var children: [TileKey] {
        [(0, 0), (1, 0), (0, 1), (1, 1)].map {
            TileKey(level: level + 1, column: 2 * column + $0.0, row: 2 * row + $0.1)
        }
    }

    /// "level/column_row", as in "2/3_4".
    public var description: String { "\(level)/\(column)_\(row)" }
}
