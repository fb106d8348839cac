/// Serves the rows of a tiled image over a range of columns, one band (row of tiles) at a time: it owns the band,
/// asks its `TiledRowDecoder` for each tile under the columns when the rows reach a new band, and copies rows out
/// of it. Memory is one band over the restricted columns; skipped rows cost nothing, as bands are addressed by row.
final class TileBandReader {
    let grid: TileGrid
    let format: PixelFormat
    /// Whether restricted columns are cut inside tiles; otherwise they widen to whole tiles.
    private let cropsWithinTiles: Bool
    private let budget: MemoryBudget
    /// What a band is, for the budget's message, and the file's name.
    private let purpose: String
    let name: String
    /// The image columns decoded, and the next row to hand out.
    private(set) var columns: Range<Int>
    private(set) var nextRow = 0
    /// The decoded rows of tile row `bandRow` over `columns`, in `format`, a whole tile's height allocated.
    private var band: [UInt8] = []
    private var bandRow: Int?

    /// `purpose` names a band in the budget's message (e.g. "a row of tiles"); `name` is the file's.
    init(grid: TileGrid, format: PixelFormat, cropsWithinTiles: Bool, budget: MemoryBudget, purpose: String,
         name: String) {
        self.grid = grid
        self.format = format
        self.cropsWithinTiles = cropsWithinTiles
        self.budget = budget
        self.purpose = purpose
        self.name = name
        columns = 0..<grid.imageSize.width
    }

    /// Decodes only the tiles under `columns` from now on; returns the columns rows will hold.
    func restrictColumns(to columns: Range<Int>) -> Range<Int> {
        let tiles = grid.tileColumns(covering: columns)
        self.columns = cropsWithinTiles ? columns
            : grid.pixelColumns(ofColumn: tiles.lowerBound).lowerBound..<grid.pixelColumns(ofColumn: tiles.upperBound - 1).upperBound
        bandRow = nil
        return self.columns
    }

    /// Moves past `count` rows without decoding them.
    func skipRows(_ count: Int) {
        nextRow = min(grid.imageSize.height, nextRow + max(0, count))
    }

    /// Copies the next `count` rows into `rows`, `bytesPerRow` apart, decoding each band they reach with `tiles`.
    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int,
                    from tiles: some TiledRowDecoder) throws {
        let rowBytes = columns.count * format.bytesPerPixel
        var done = 0
        while done < count {
            let index = nextRow / grid.tileSize.height
            if bandRow != index { try loadBand(index, from: tiles) }
            let top = index * grid.tileSize.height
            let available = min(count - done, top + grid.tileSize.height - nextRow)
            band.withUnsafeBytes { band in
                for row in 0..<available {
                    rows.advanced(by: (done + row) * bytesPerRow)
                        .copyMemory(from: band.baseAddress! + (nextRow - top + row) * rowBytes, byteCount: rowBytes)
                }
            }
            done += available
            nextRow += available
        }
    }

    /// Decodes the tiles of tile row `row` that intersect `columns` into `band`.
    private func loadBand(_ row: Int, from tiles: some TiledRowDecoder) throws {
        let pixelBytes = format.bytesPerPixel, bandRowBytes = columns.count * pixelBytes
        if band.count != bandRowBytes * grid.tileSize.height {
            try budget.checkRows(width: columns.count, rows: grid.tileSize.height, format: format, for: purpose,
                                 path: name)
            band = [UInt8](repeating: 0, count: bandRowBytes * grid.tileSize.height)
        }
        bandRow = nil
        try band.withUnsafeMutableBytes { band in
            for column in grid.tileColumns(covering: columns) {
                let part = grid.pixelColumns(ofColumn: column).clamped(to: columns)
                try tiles.decodeTile(column: column, row: row, columns: part,
                                     into: band.baseAddress! + (part.lowerBound - columns.lowerBound) * pixelBytes,
                                     bytesPerRow: bandRowBytes)
            }
        }
        bandRow = row
    }
}
