/// The geometry of a tile pyramid: its levels (each half the size of the one above, rounding up, as Deep Zoom
/// does), each level's tile grid, and each tile's rectangle with the overlap on interior edges only.
/// Levels are indexed from full resolution (`0`) down; layouts number them their own way (`LevelPlan.name`).
public struct PyramidPlan: Sendable, Hashable {
    /// How far down the pyramid goes.
    public enum Depth: String, Sendable, CaseIterable {
        /// Down to a 1 x 1 level (Deep Zoom's default).
        case onePixel = "onepixel"
        /// Down to the first level that fits in one tile.
        case oneTile = "onetile"
        /// Full resolution only.
        case one
    }

    /// One level: its size in pixels, its reduction from full resolution, and its tile grid.
    public struct LevelPlan: Sendable, Hashable {
        /// 0 for full resolution, 1 for half, ...
        public let depth: Int
        /// The level's size in pixels.
        public let size: Size
        /// Tiles across and down.
        public let columns: Int
        public let rows: Int

        /// The reduction from full resolution, `2^depth`.
        public var scaleFactor: Int { 1 << depth }
        public var tileCount: Int { columns * rows }
    }

    public let imageSize: Size
    /// The tile's side in pixels, not counting overlap.
    public let tileSize: Int
    /// Pixels each tile shares with its neighbours, on interior edges only.
    public let overlap: Int
    /// Full resolution first.
    public let levels: [LevelPlan]

    public init(imageSize: Size, tileSize: Int, overlap: Int = 0, depth: Depth = .onePixel) throws {
        guard imageSize.width > 0, imageSize.height > 0 else {
            throw TesseraError.invalidArgument("cannot tile an image of \(imageSize) pixels")
        }
        guard tileSize >= 1, tileSize <= 8192 else {
            throw TesseraError.invalidArgument("tile size must be 1 to 8192 pixels, not \(tileSize)")
        }
        guard overlap >= 0, overlap <= tileSize / 2 else {
            throw TesseraError.invalidArgument("overlap must be 0 to half the tile size (\(tileSize / 2)), not \(overlap)")
        }
        self.imageSize = imageSize
        self.tileSize = tileSize
        self.overlap = overlap
        var levels: [LevelPlan] = []
        var size = imageSize
        while true {
            levels.append(LevelPlan(depth: levels.count, size: size, columns: (size.width + tileSize - 1) / tileSize,
                                    rows: (size.height + tileSize - 1) / tileSize))
            let done: Bool
            switch depth {
            case .one: done = true
            case .oneTile: done = size.width <= tileSize && size.height <= tileSize
            case .onePixel: done = size.width == 1 && size.height == 1
            }
            if done { break }
            size = Size(width: (size.width + 1) / 2, height: (size.height + 1) / 2)
        }
        self.levels = levels
    }

    /// The pixels of tile (`column`, `row`) of level `depth`, in that level's coordinates: the grid cell grown by
    /// the overlap on every side that has a neighbour, clipped to the level.
    public func tileRect(depth: Int, column: Int, row: Int) -> Rect {
        let level = levels[depth]
        let left = column * tileSize - (column > 0 ? overlap : 0)
        let top = row * tileSize - (row > 0 ? overlap : 0)
        let right = min(level.size.width, (column + 1) * tileSize + overlap)
        let bottom = min(level.size.height, (row + 1) * tileSize + overlap)
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The level's number counted from the smallest (0) up, as Deep Zoom levels, Zoomify tiers and XYZ zooms are.
    public func levelNumber(ofDepth depth: Int) -> Int { levels.count - 1 - depth }

    /// Every tile, level by level from full resolution, row by row.
    public var tileCount: Int { levels.reduce(0) { $0 + $1.tileCount } }
}

/// One tile of a pyramid: the level's depth (0 = full resolution) and its column and row in the level's grid.
public struct TileAddress: Hashable, Sendable, CustomStringConvertible {
    public let depth: Int
    public let column: Int
    public let row: Int

    public init(depth: Int, column: Int, row: Int) {
        self.depth = depth
        self.column = column
        self.row = row
    }

    public var description: String { "level \(depth), column \(column), row \(row)" }
}
