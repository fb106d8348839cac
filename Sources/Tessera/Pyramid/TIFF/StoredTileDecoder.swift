/// Decodes a level of a pyramidal TIFF whose tiles are stored as JPEG from those tiles themselves: each one read
/// with one positioned read (`StoredTileReader`) and decoded by libjpeg over only the columns and rows asked for.
/// libtiff would open the file again and walk its directories for every read (a server's render of a few tiles
/// opened it per request), and decode every tile whole.
final class StoredTileDecoder: TiledRowDecoder {
    let size: Size
    let format: PixelFormat
    let bands: TileBandReader
    private let tiles: StoredTileReader
    private let scale: Int
    private let budget: MemoryBudget

    /// The decoder for `request` when `tiles` stores its level (page 0's levels; not for a partial read, whose
    /// damaged tiles libtiff fills in), gray or RGB as libtiff would give it; nil otherwise.
    init?(tiles: StoredTileReader, properties: ImageProperties, request: DecodeRequest, name: String) {
        guard request.page == 0, !request.allowPartial, properties.bitDepth == 8, !properties.hasAlpha,
              [1, 3].contains(properties.channels), let size = tiles.storedLevelSize(scale: request.scale) else {
            return nil
        }
        self.size = size
        format = properties.channels == 1 ? .gray8 : .rgb8
        self.tiles = tiles
        scale = request.scale
        budget = request.budget
        bands = TileBandReader(grid: TileGrid(imageSize: size, tileSize: Size(width: tiles.tileSize, height: tiles.tileSize)),
                               format: format, cropsWithinTiles: true, budget: request.budget,
                               purpose: "one row of TIFF tiles", name: name)
    }

    func decodeTile(column: Int, row: Int, columns: Range<Int>, into target: UnsafeMutableRawPointer,
                    bytesPerRow: Int) throws {
        let side = tiles.tileSize, rows = bands.grid.pixelRows(ofRow: row)
        guard let (jpeg, _) = try tiles.storedJPEG(scale: scale, column: column, row: row) else {
            throw TesseraError.corrupt(path: bands.name, detail: "tile (\(column), \(row)) of the 1/\(scale) level is not a JPEG")
        }
        try decode(tile: ImageSource(bytes: jpeg, name: bands.name, budget: budget), size: Size(width: side, height: side),
                   part: Rect(x: columns.lowerBound - column * side, y: rows.lowerBound - row * side,
                              width: columns.count, height: rows.count),
                   into: target, bytesPerRow: bytesPerRow)
    }
}
