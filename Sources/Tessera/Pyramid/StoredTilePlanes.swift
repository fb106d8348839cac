extension JPEGPlanes {
    /// The most stored tiles `stored(_:scale:region:budget:name:)` lays side by side: 3 x 3, about 880 KB of 4:2:0
    /// planes at 256 x 256. A larger read goes through pixels, a strip at a time.
    public static let maxStoredTiles = 9

    /// The planes of the stored JPEG tiles of the level at reduction `scale` that `region` (in that level's pixels,
    /// inside it) lies across, each tile decoded with no row below the region (and only the region's columns, when
    /// they are a narrow part of it: `JPEGPlaneDecoder.cropShare`) straight into its place, and the part
    /// of the level they cover (whole tiles, from the first one's origin, or for one column of tiles the columns
    /// their decodes write; as many rows as the region reaches). A
    /// render across a few stored tiles (a region off the tile grid) is then resampled in the tiles' own YCbCr
    /// planes, as one stored tile is, rather than decoded to RGB, converted back and encoded: a sliver's column of
    /// four tiles cost 0.66 ms of a server's CPU through pixels and 0.50 in planes, 16 rows across three tiles 1.44
    /// and 0.79. Nil when the region lies across more than `maxStoredTiles`, when a tile is not a
    /// YCbCr or gray JPEG of at most a tile's side and at least the region's part of it (a tile folder's edge tiles
    /// are stored cut), or when the tiles' chroma sampling differs or does not divide the tile side into whole
    /// samples and iMCU rows.
    public static func stored(_ tiles: any StoredJPEGTiles, scale: Int, region: Rect, budget: MemoryBudget,
                              name: String) throws -> (planes: JPEGPlanes, covered: Rect)? {
        let side = tiles.tileSize
        guard let (columns, rows) = storedTiles(covering: region, side: side) else { return nil }
        var covered = Rect(x: columns.lowerBound * side, y: rows.lowerBound * side, width: columns.count * side,
                           height: region.maxY - rows.lowerBound * side)
        var canvas: JPEGPlanes?
        for row in rows {
            let rowsAsked = min(side, region.maxY - row * side)
            for column in columns {
                CooperativeYield.point()
                let columnsAsked = max(0, region.x - column * side)..<min(side, region.maxX - column * side)
                guard let (jpeg, _) = try tiles.storedJPEG(scale: scale, column: column, row: row),
                      let tile = try JPEGPlaneDecoder(input: .bytes(jpeg, name: name), scale: 1, rows: rowsAsked,
                                                      columns: columnsAsked, budget: budget),
                      tile.size.width >= columnsAsked.upperBound, tile.size.height >= rowsAsked
                else { return nil }
                if canvas == nil {
                    if columns.count == 1 {
                        // One column of tiles (a sliver's): only the columns their decodes write are laid out.
                        let written = tile.columnsWritten.clamped(to: 0..<side)
                        covered = Rect(x: covered.x + written.lowerBound, y: covered.y, width: written.count,
                                       height: covered.height)
                    }
                    canvas = try laidOut(like: tile.planes, covering: covered, side: side, budget: budget, name: name)
                }
                guard let places = canvas?.places(for: tile, at: column * side - covered.x, row * side - covered.y,
                                                  side: side) else { return nil }
                try canvas!.samples.withUnsafeMutableBufferPointer {
                    try tile.decode(into: $0.baseAddress!, planes: places)
                }
            }
        }
        return canvas.map { ($0, covered) }
    }

    /// The columns and rows of `side`-pixel tiles that `region` (in a level's pixels, inside it) lies across, when
    /// `stored` lays them side by side: at most `maxStoredTiles` of them; nil otherwise.
    public static func storedTiles(covering region: Rect, side: Int) -> (columns: ClosedRange<Int>, rows: ClosedRange<Int>)? {
        guard side > 0, !region.isEmpty, region.x >= 0, region.y >= 0 else { return nil }
        let columns = region.x / side...(region.maxX - 1) / side, rows = region.y / side...(region.maxY - 1) / side
        guard columns.count * rows.count <= maxStoredTiles else { return nil }
        return (columns, rows)
    }

    /// Empty planes of `covered.size` pixels with a tile's components and sampling (`tile`, its planes), as many
    /// samples across as the pixels need and down as whole iMCU rows of the tile's need (what its decode writes);
    /// nil when a tile's side, or the part covered, is not a whole number of some plane's samples, or a tile's side
    /// not of iMCU rows.
    private static func laidOut(like tile: [Plane], covering covered: Rect, side: Int, budget: MemoryBudget,
                                name: String) throws -> JPEGPlanes? {
        // Pixels per iMCU row: 8 samples of the plane with the most pixels per sample down.
        let lines = Int(8 * (tile.map(\.pixelsPerSample.y).max() ?? 1))
        guard side % lines == 0 else { return nil }
        var planes: [Plane] = []
        for plane in tile {
            let across = plane.pixelsPerSample.x, down = plane.pixelsPerSample.y
            guard [Double(side) / across, Double(side) / down, Double(covered.x) / across, Double(covered.width) / across]
                .allSatisfy({ $0 == $0.rounded() }) else { return nil }
            let width = Int(Double(covered.width) / across)
            let height = Int((Double(covered.height) / down).rounded(.up))
            let rows = Int((Double((covered.height + lines - 1) / lines * lines) / down).rounded(.up))
            planes.append(Plane(width: width, height: height, stride: width, rows: rows,
                                offset: planes.last?.end ?? 0, pixelsPerSample: plane.pixelsPerSample))
        }
        try budget.check(planes.last?.end ?? 0, for: "laying a region's stored tiles side by side", path: name)
        return JPEGPlanes(size: covered.size, planes: planes)
    }

    /// Where `tile`'s decode goes in these planes when its top left pixel is at (`x`, `y`) of them (left of them
    /// for a sliver's tile, whose columns laid out start inside it): each of its planes moved to its place, as
    /// many rows as it has there. Nil when its components or sampling are not these planes', or when the columns
    /// its decode writes leave its part of these planes (`side` pixels across from `x`), or its rows those left
    /// below `y`: libjpeg writes whole blocks, which would land on its neighbours' samples.
    private func places(for tile: JPEGPlaneDecoder, at x: Int, _ y: Int, side: Int) -> [Plane]? {
        let written = tile.columnsWritten
        guard tile.planes.count == planes.count, x + written.lowerBound >= max(0, x),
              x + written.upperBound <= min(x + side, size.width) else { return nil }
        var places: [Plane] = []
        for (from, to) in zip(tile.planes, planes) {
            guard from.pixelsPerSample == to.pixelsPerSample else { return nil }
            let column = Int(Double(x) / to.pixelsPerSample.x), first = Int(Double(y) / to.pixelsPerSample.y)
            guard from.rows <= to.rows - first else { return nil }
            places.append(Plane(width: from.width, height: from.height, stride: to.stride, rows: from.rows,
                                offset: to.offset + first * to.stride + column, pixelsPerSample: from.pixelsPerSample))
        }
        return places
    }
}
