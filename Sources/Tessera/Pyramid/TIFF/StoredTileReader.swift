import CTIFF
import Foundation

/// Reads a pyramidal TIFF's JPEG tiles as they are stored, each as a complete JPEG file (the shared JPEGTables
/// spliced in where the TIFF keeps them apart), so a server can send a tile without decoding and re-encoding it.
/// Every tile's place in the file is read once, up front (kept as stored, each read when its tile is); a tile is then
/// one positioned read, from any thread.
public final class StoredTileReader: Sendable {
    /// One level whose tiles are stored as JPEG.
    struct Level: Sendable {
        /// The level's reduction from full resolution (1, 2, 4, ...).
        let scale: Int
        let size: Size
        let columns: Int
        let offsets: TIFFDirectoryReader.Integers
        let byteCounts: TIFFDirectoryReader.Integers
        /// The shared tables, without their end-of-image marker; empty when every tile carries its own.
        let tables: [UInt8]
    }

    /// The tile side in pixels, the same on every level.
    public let tileSize: Int
    let levels: [Level]

    /// The memory the tiles' offsets, byte counts and shared tables hold, in bytes.
    public var indexByteCount: Int {
        levels.reduce(0) { $0 + $1.offsets.bytes.count + $1.byteCounts.bytes.count + $1.tables.count }
    }
    /// The TIFF, open for positioned reads.
    private let file: PositionedInput

    /// What a walk of a TIFF's directories learns of its JPEG-tiled levels: each level's field values read from
    /// the directory `TIFFPyramid` visits it with, so that the pyramid's properties and its stored tiles come from
    /// one opening of the file and one walk of its directories.
    struct Index {
        /// A level's stored tiles, and their side (each level's own; the reader keeps those of one side).
        private var found: [(level: Level, side: Int)] = []
        private var full: Size?

        /// Reads the tiles' places of `level` from its directory's `fields` when it stores 8-bit gray or YCbCr
        /// JPEG tiles, square, each holding every sample (not a plane apiece), at a power-of-two reduction of the
        /// first level visited (full resolution).
        mutating func visit(_ level: TIFFPyramid.Level, fields: TIFFDirectoryReader.Fields) {
            let full = self.full ?? level.size
            self.full = full
            guard fields.integer(TIFFTAG_COMPRESSION) == 7,
                  let photometric = fields.integer(TIFFTAG_PHOTOMETRIC), [1, 6].contains(photometric),
                  fields.integer(TIFFTAG_BITSPERSAMPLE) ?? 1 == 8,
                  fields.integer(TIFFTAG_PLANARCONFIG) ?? 1 == UInt64(PLANARCONFIG_CONTIG),
                  let width = fields.integer(TIFFTAG_TILEWIDTH), let height = fields.integer(TIFFTAG_TILELENGTH),
                  width == height, width > 0, width <= 1 << 16 else { return }
            // A level halved rounding up is not the full width divided by its own (7001 / 3501 is 1).
            guard let scale = (0..<31).lazy.map({ 1 << $0 })
                .first(where: { TIFFPyramid.matches(level.size, full: full, factor: $0) }) else { return }
            let side = Int(width)
            let columns = (level.size.width + side - 1) / side
            let rows = (level.size.height + side - 1) / side
            // A claimed size's tiles may be more than an Int counts; the reader refuses more than the budget holds.
            let (tiles, overflow) = columns.multipliedReportingOverflow(by: rows)
            guard !overflow, let offsets = fields.storedIntegers(TIFFTAG_TILEOFFSETS, count: tiles),
                  let byteCounts = fields.storedIntegers(TIFFTAG_TILEBYTECOUNTS, count: tiles) else { return }
            // The shared tables, less their end-of-image marker.
            let tables = fields.bytes(TIFFTAG_JPEGTABLES).map { $0.count > 4 ? Array($0.dropLast(2)) : [] } ?? []
            found.append((Level(scale: scale, size: level.size, columns: columns, offsets: offsets,
                                byteCounts: byteCounts, tables: tables), side))
        }

        /// The levels in `pyramid`'s order (largest first) whose tiles have the side of the first of them.
        func levels(in pyramid: TIFFPyramid) -> (side: Int, levels: [Level])? {
            let ordered = pyramid.levels.compactMap { level in found.first { $0.level.size == level.size } }
            guard let side = ordered.first?.side else { return nil }
            return (side, ordered.filter { $0.side == side }.map(\.level))
        }
    }

    /// The stored tiles of `input`, a TIFF whose directories `index` was filled from as `pyramid` walked them; nil
    /// when no level stores JPEG tiles (or a local file cannot be opened again for positioned reads).
    init?(input: ImageInput, index: Index, pyramid: TIFFPyramid) {
        guard let (side, levels) = index.levels(in: pyramid), let file = try? PositionedInput(input) else { return nil }
        tileSize = side
        self.levels = levels
        self.file = file
    }

    /// The size of the level whose JPEG tiles are stored at reduction `scale`, or nil.
    public func storedLevelSize(scale: Int) -> Size? { levels.first { $0.scale == scale }?.size }

    /// The JPEG of the tile covering full-resolution pixels `(column * tileSize * scale, row * tileSize * scale)` at
    /// reduction `scale`, when its size within the level as stored (rounded either way) is within a pixel or two
    /// of `size`: the stored bytes, or the stored (padded) tile cut to `size` in its coefficients, its last real
    /// column and row repeated where `size` reaches past them (`JPEGCoefficientCrop`); nil when the pyramid stores
    /// no such JPEG tile or it is not near that size.
    public func jpeg(scale: Int, column: Int, row: Int, size: Size) throws -> [UInt8]? {
        guard answers(scale: scale, column: column, row: row, size: size),
              let (jpeg, content) = try storedJPEG(scale: scale, column: column, row: row) else { return nil }
        guard size != Size(width: tileSize, height: tileSize) || content != size else { return jpeg }
        return try JPEGCoefficientCrop.topLeft(of: jpeg, size: size, content: content, name: file.input.name)
    }

    /// The tile at (`column`, `row`) of the level at reduction `scale` as stored (a whole tile, padded past the
    /// level's edge) and the size of its real pixels; nil when the pyramid stores no such JPEG tile.
    public func storedJPEG(scale: Int, column: Int, row: Int) throws -> (jpeg: [UInt8], content: Size)? {
        guard let level = levels.first(where: { $0.scale == scale }),
              let content = storedContent(scale: scale, column: column, row: row) else { return nil }
        let index = row * level.columns + column
        let offset = level.offsets[index], count = Int(level.byteCounts[index])
        guard count > 4, count < 64 << 20 else { return nil }
        guard offset <= UInt64(file.byteCount), case let tile = try file.read(at: Int(offset), count: count),
              tile.count == count else {
            throw TesseraError.truncated(path: file.input.name, detail: "in a stored tile")
        }
        guard tile[0] == 0xFF, tile[1] == 0xD8 else { return nil }
        return (level.tables.isEmpty ? tile : level.tables + tile.dropFirst(2), content)
    }
}
