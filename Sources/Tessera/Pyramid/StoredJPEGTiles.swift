/// A pyramid's tiles stored as complete JPEG files, square, at power-of-two reductions: what a server can send as
/// it is, with no decoding and no encoding. Pyramidal TIFFs of JPEG tiles (`StoredTileReader`) and Deep Zoom or
/// IIIF level-0 folders of JPEG tiles without overlap have them.
public protocol StoredJPEGTiles: Sendable {
    /// The tile side in pixels, the same on every level.
    var tileSize: Int { get }
    /// The JPEG of the tile covering full-resolution pixels `(column * tileSize * scale, row * tileSize * scale)` at
    /// reduction `scale`, when its size within that level is within a pixel or two of `size` (a tile at the right
    /// or bottom edge is narrower, a level halved rounding down a pixel shorter still, and viewers round the other
    /// way): as stored, or cut to `size` in its coefficients, its last column and row repeated where `size` is
    /// larger (`JPEGCoefficientCrop`); nil when the pyramid has no such stored tile or it is not near that size.
    func jpeg(scale: Int, column: Int, row: Int, size: Size) throws -> [UInt8]?
    /// The tile as stored (in a pyramidal TIFF a whole tile, padded past the level's edge) and the size of its
    /// real pixels; nil when the pyramid has no such stored tile.
    func storedJPEG(scale: Int, column: Int, row: Int) throws -> (jpeg: [UInt8], content: Size)?
    /// The size of the level stored at reduction `scale` (1, 2, 4, ...), as stored; nil when no level is.
    func storedLevelSize(scale: Int) -> Size?
    /// The memory the tile index holds, in bytes, for callers that keep many open.
    var indexByteCount: Int { get }
}

extension StoredJPEGTiles {
    /// The size of the real pixels of the tile at (`column`, `row`) of the level stored at reduction `scale` (the
    /// level's right and bottom edges cut its last column and row), from the level's size alone; nil when no level
    /// is stored there or it has no such tile.
    public func storedContent(scale: Int, column: Int, row: Int) -> Size? {
        guard let level = storedLevelSize(scale: scale), column >= 0, row >= 0, column * tileSize < level.width,
              row * tileSize < level.height else { return nil }
        return Size(width: min(tileSize, level.width - column * tileSize),
                    height: min(tileSize, level.height - row * tileSize))
    }

    /// Whether `jpeg(scale:column:row:size:)` answers with a stored tile, as stored or cut or stretched in its
    /// coefficients, told from the level's size alone (nothing read).
    public func answers(scale: Int, column: Int, row: Int, size: Size) -> Bool {
        storedContent(scale: scale, column: column, row: row).map { JPEGCoefficientCrop.reaches(size, from: $0) } ?? false
    }
}

extension StoredTileReader: StoredJPEGTiles {}

/// A pyramidal TIFF's stored tiles are what its `ImageSource` keeps: read while its directories are walked for
/// its properties, so that they are not opened twice.
extension StoredTileReader: SharedDecoderState {
    var heldByteLimit: Int { indexByteCount }
}

extension ImageSource {
    /// The image's stored JPEG tiles, when it is a tiled pyramid that has them; nil otherwise.
    public func storedJPEGTiles() throws -> (any StoredJPEGTiles)? {
        switch properties.format {
        case .tiff: return shared as? StoredTileReader
        case .deepZoom, .iiif:
            guard let pyramid = (shared as? OpenedTileFolder)?.pyramid else { return nil }
            return pyramid.storesJPEGTiles ? pyramid : nil
        default: return nil
        }
    }
}
