/// A `RowDecoder` over a grid of tiles: the format decodes one tile into a band, and its `TileBandReader` does
/// the rest (which band is loaded, the tiles a range of columns needs, rows out of the band, skipping).
protocol TiledRowDecoder: RowDecoder {
    /// The reader that holds this decoder's band and position.
    var bands: TileBandReader { get }
    /// Decodes image columns `columns` (inside tile column `column`) of every row of tile (`column`, `row`) into
    /// `target`: the tile's top row at the pixel of column `columns.lowerBound`, rows `bytesPerRow` apart, in
    /// `format`. Tile rows are asked for top to bottom, never one above the last.
    func decodeTile(column: Int, row: Int, columns: Range<Int>, into target: UnsafeMutableRawPointer,
                    bytesPerRow: Int) throws
}

extension TiledRowDecoder {
    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        try checkColumns(columns, name: bands.name)
        return bands.restrictColumns(to: columns)
    }

    func skipRows(_ count: Int) throws {
        bands.skipRows(count)
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        try checkRows(from: bands.nextRow, count: count, name: bands.name)
        try bands.decodeRows(into: rows, bytesPerRow: bytesPerRow, count: count, from: self)
    }
}

extension TiledRowDecoder {
    /// Decodes `part` (in the tile's own pixels) of `tile`, an image of `size` pixels stored on its own (a tile
    /// folder's file, a pyramidal TIFF's JPEG tile), into `target` in the decoder's `format`, rows `bytesPerRow`
    /// apart: a JPEG decodes only the blocks under the part's columns and rows.
    func decode(tile: ImageSource, size: Size, part: Rect, into target: UnsafeMutableRawPointer,
                bytesPerRow: Int) throws {
        let name = tile.input.name
        guard tile.properties.size == size else {
            throw TesseraError.corrupt(path: name, detail: "the tile is \(tile.properties.size), not \(size) as the pyramid says")
        }
        var reader: any ImageReader = try tile.makeReader(ReadOptions(region: part))
        if reader.format != format { reader = FormatConvertingReader(source: reader, format: format) }
        let pixels = try reader.readAll(budget: tile.budget, name: name)
        let rowBytes = part.width * format.bytesPerPixel
        pixels.bytes.withUnsafeBytes { source in
            for line in 0..<part.height {
                (target + line * bytesPerRow).copyMemory(from: source.baseAddress! + line * pixels.bytesPerRow,
                                                         byteCount: rowBytes)
            }
        }
    }
}
