/// Decides what a frame draws: the level for the zoom and the tiles of that level meeting the visible rectangle,
/// ordered from the centre of the view out, plus a prefetch ring one tile wide and the coarsest level's tiles
/// under the view as a backstop.
public struct TiledLayout: Hashable, Sendable {
    /// How the content is cut into levels and tiles.
    public let configuration: TiledLayerConfiguration
    /// The content's size, in points.
    public let contentSize: PixelSize

    /// A layout of content of `contentSize` points cut as `configuration` says.
    public init(configuration: TiledLayerConfiguration, contentSize: PixelSize) {
        self.configuration = configuration
        self.contentSize = contentSize
    }

    /// Level `level` of this layout (whether or not the configuration makes it available).
    public func level(_ level: Int) -> LevelOfDetail {
        LevelOfDetail(level: level, configuration: configuration, contentSize: contentSize)
    }

    /// The plan for a frame showing `viewport`.
    public func plan(for viewport: ScrollViewport) -> TilePlan {
        plan(visibleRect: viewport.visibleRect, zoomScale: viewport.zoomScale)
    }

    /// The plan for a frame showing `visibleRect` (content points) at `zoomScale` (screen points per content point).
    ///
    /// Tiles are ordered by the squared distance from the centre of their unclipped grid cell to the centre of
    /// `visibleRect`, `dx = (column + 0.5) * tileWidthInPoints - centreX` and likewise `dy`, ties broken by row
    /// and then column; the browser viewer reproduces exactly this order.
    public func plan(visibleRect: Rect2D, zoomScale: Double) -> TilePlan {
        guard let level = configuration.level(forZoom: zoomScale, contentSize: contentSize) else { return .empty }
        guard let range = level.tileRange(covering: visibleRect) else {
            return TilePlan(level: level, visible: [], prefetch: [])
        }
        let grid = level.gridSize
        let ring = (
            columns: max(0, range.columns.lowerBound - 1)...min(grid.columns - 1, range.columns.upperBound + 1),
            rows: max(0, range.rows.lowerBound - 1)...min(grid.rows - 1, range.rows.upperBound + 1)
        )
        var visible: [(column: Int, row: Int)] = []
        var prefetch: [(column: Int, row: Int)] = []
        for row in ring.rows {
            for column in ring.columns {
                if range.columns.contains(column) && range.rows.contains(row) {
                    visible.append((column, row))
                } else {
                    prefetch.append((column, row))
                }
            }
        }
        let centre = visibleRect.center
        return TilePlan(
            level: level,
            visible: Self.centreOut(visible, around: centre, in: level),
            prefetch: Self.centreOut(prefetch, around: centre, in: level),
            backstop: backstop(under: visibleRect, below: level)
        )
    }

    /// The coarsest level's tiles meeting `visibleRect` and one tile around them, centre-out, or none when `drawn`
    /// is the coarsest level. The ring is there because a coarse tile entering the view during a zoom-out or a
    /// pan would otherwise be asked for only in the frame that first shows it, and that frame would have a hole.
    private func backstop(under visibleRect: Rect2D, below drawn: LevelOfDetail) -> [PlannedTile] {
        guard let coarsest = configuration.levelRange(for: contentSize)?.lowerBound, coarsest < drawn.level else {
            return []
        }
        let level = self.level(coarsest)
        guard let range = level.tileRange(covering: visibleRect) else { return [] }
        let grid = level.gridSize
        let rows = max(0, range.rows.lowerBound - 1)...min(grid.rows - 1, range.rows.upperBound + 1)
        let columns = max(0, range.columns.lowerBound - 1)...min(grid.columns - 1, range.columns.upperBound + 1)
        let cells = rows.flatMap { row in columns.map { (column: $0, row: row) } }
        return Self.centreOut(cells, around: visibleRect.center, in: level)
    }

    private static func centreOut(_ cells: [(column: Int, row: Int)], around centre: Point2D, in level: LevelOfDetail)
        -> [PlannedTile]
    {
        let tile = level.tileSizeInPoints
        func distance(_ cell: (column: Int, row: Int)) -> Double {
            let dx = (Double(cell.column) + 0.5) * tile.width - centre.x
            let dy = (Double(cell.row) + 0.5) * tile.height - centre.y
            return dx * dx + dy * dy
        }
        return cells
            .map { (cell: $0, distance: distance($0)) }
            .sorted { ($0.distance, $0.cell.row, $0.cell.column) < ($1.distance, $1.cell.row, $1.cell.column) }
            .map {
                PlannedTile(
                    key: TileKey(level: level.level, column: $0.cell.column, row: $0.cell.row),
                    rect: level.rect(column: $0.cell.column, row: $0.cell.row),
                    pixelSize: level.pixelSize(column: $0.cell.column, row: $0.cell.row)
                )
            }
    }
}
