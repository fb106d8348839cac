/// One level of detail over a given content: its pixel density and its grid of tiles, with tile rectangles in
/// content coordinates (points) clipped at the content's edges.
public struct LevelOfDetail: Hashable, Sendable, CustomStringConvertible {
    /// The level `j`: this level draws at `contentsScale * 2^j` pixels per point.
    public let level: Int
    /// The pixel density of this level, in pixels per point (the scale a drawing callback sees).
    public let pixelsPerPoint: Double
    /// The size of a full tile, in pixels.
    public let tileSize: PixelSize
    /// The content's size, in points.
    public let contentSize: PixelSize

    /// Makes level `level` of `configuration` over content of `contentSize` points.
    public init(level: Int, configuration: TiledLayerConfiguration, contentSize: PixelSize) {
        self.level = level
        pixelsPerPoint = configuration.pixelsPerPoint(atLevel: level)
        tileSize = configuration.tileSize
        self.contentSize = contentSize
    }

    /// The size of a full tile, in points: `tileSize / pixelsPerPoint`.
    public var tileSizeInPoints: Size2D {
        Size2D(width: Double(tileSize.width) / pixelsPerPoint, height: Double(tileSize.height) / pixelsPerPoint)
    }

    /// The whole content at this level, in pixels (rounded up: a partial pixel still needs drawing).
    public var levelSizeInPixels: PixelSize {
        PixelSize(
            width: Int((Double(contentSize.width) * pixelsPerPoint).rounded(.up)),
            height: Int((Double(contentSize.height) * pixelsPerPoint).rounded(.up))
        )
    }

    /// How many tile columns and rows cover the content at this level.
    public var gridSize: (columns: Int, rows: Int) {
        let pixels = levelSizeInPixels
        return (ceilDiv(pixels.width, tileSize.width), ceilDiv(pixels.height, tileSize.height))
    }

    /// Whether `key` names a tile of this level's grid.
    public func contains(_ key: TileKey) -> Bool {
        let grid = gridSize
        return key.level == level && (0..<grid.columns).contains(key.column) && (0..<grid.rows).contains(key.row)
    }

    /// The part of the content that tile (`column`, `row`) covers, in content points, clipped at the content's edges.
    public func rect(column: Int, row: Int) -> Rect2D {
        let x = Double(column * tileSize.width) / pixelsPerPoint
        let y = Double(row * tileSize.height) / pixelsPerPoint
        let size = tileSizeInPoints
        return Rect2D(
            x: x, y: y,
            width: min(size.width, Double(contentSize.width) - x),
            height: min(size.height, Double(contentSize.height) - y)
        )
    }

    /// The pixels tile (`column`, `row`) holds: `tileSize`, cut short at the right and bottom edges.
    public func pixelSize(column: Int, row: Int) -> PixelSize {
        let pixels = levelSizeInPixels
        return PixelSize(
            width: min(tileSize.width, pixels.width - column * tileSize.width),
            height: min(tileSize.height, pixels.height - row * tileSize.height)
        )
    }

    /// The columns and rows of the tiles that meet `rect` (content points), or nil when `rect` misses the content.
    public func tileRange(covering rect: Rect2D) -> (columns: ClosedRange<Int>, rows: ClosedRange<Int>)? {
        let content = Rect2D(x: 0, y: 0, width: Double(contentSize.width), height: Double(contentSize.height))
        guard let clipped = rect.intersection(content) else { return nil }
        let grid = gridSize
        let columns = Self.indices(
            from: clipped.minX, to: clipped.maxX, tileExtent: tileSize.width, scale: pixelsPerPoint, count: grid.columns)
        let rows = Self.indices(
            from: clipped.minY, to: clipped.maxY, tileExtent: tileSize.height, scale: pixelsPerPoint, count: grid.rows)
        return (columns, rows)
    }

    /// "level j at s px/pt", for messages.
    public var description: String { "level \(level) at \(pixelsPerPoint) px/pt" }

    /// The tile indices meeting the half-open span [`start`, `end`) of points along one axis. Working in pixels
    /// (points times scale over whole tile sizes) keeps spans that end exactly on a tile edge from taking the next one.
    private static func indices(from start: Double, to end: Double, tileExtent: Int, scale: Double, count: Int)
        -> ClosedRange<Int>
    {
        let first = Int((start * scale / Double(tileExtent)).rounded(.down))
        let last = Int((end * scale / Double(tileExtent)).rounded(.up)) - 1
        return max(0, first)...min(count - 1, max(first, last))
    }

    private func ceilDiv(_ a: Int, _ b: Int) -> Int { (a + b - 1) / b }
}
