/// The image format of a pyramid's tiles.
public enum TileFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp

    /// The extension tile files take in most layouts (`jpg`; Deep Zoom, as libvips writes it, uses `jpeg`).
    var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The tiles' media type: `image/jpeg`, `image/png`, `image/webp`.
    public var mediaType: String { "image/" + rawValue }

    /// The format ImageWriter encodes.
    var imageFormat: ImageFormat {
        switch self {
        case .jpeg: return .jpeg
        case .png: return .png
        case .webp: return .webp
        }
    }
}

/// Where a `PyramidBuilder` puts encoded tiles: a layout in a container, or a pyramidal TIFF. Called from the
/// builder's encoding threads at once, so implementations are thread-safe.
public protocol TileSink: AnyObject, Sendable {
    /// Whether edge tiles must be padded to the full tile size (with the background colour).
    var padsEdgeTiles: Bool { get }
    /// Whether an earlier, interrupted build already stored this tile completely (`--resume`).
    func hasTile(_ tile: TileAddress) -> Bool
    /// Encodes one tile as the sink stores it; `options` are the builder's.
    func encode(_ tile: ImageBuffer, options: PyramidBuilder.Options) throws -> [UInt8]
    /// Stores one encoded tile.
    func write(_ bytes: [UInt8], for tile: TileAddress) throws
    /// Writes the metadata, listing the tiles left out as blank, and makes the pyramid visible under its name.
    func finish(blankTiles: [TileAddress]) throws
}

extension TileSink {
    /// Tiles as image files in the builder's tile format.
    public func encode(_ tile: ImageBuffer, options: PyramidBuilder.Options) throws -> [UInt8] {
        try ImageWriter.encode(tile, as: options.tileFormat.imageFormat, options: options.encoding)
    }
}

/// Maps tiles to file paths and writes the metadata files of one directory layout (Deep Zoom, Zoomify, ...).
/// Paths are relative to the folder the output goes in, so a layout decides whether it makes one folder
/// (`name/...`) or several entries (`name.dzi` beside `name_files/`).
public protocol PyramidLayout: Sendable {
    /// The geometry the tiles follow.
    var plan: PyramidPlan { get }
    /// Whether edge tiles are padded to the full tile size.
    var padsEdgeTiles: Bool { get }
    /// The path of a tile's file.
    func path(of tile: TileAddress) -> String
    /// The metadata files, written when every tile is done; `blankTiles` were left out by `--skip-blank`.
    func metadataFiles(blankTiles: [TileAddress]) -> [(path: String, bytes: [UInt8])]
    /// The top-level entries the layout creates (moved into place when the build completes).
    var topLevelEntries: [String] { get }
}

/// A `TileSink` writing one `PyramidLayout` into a `PyramidContainer` (a folder or a zip file).
public final class LayoutSink: TileSink {
    public let layout: any PyramidLayout
    public let container: any PyramidContainer

    public init(layout: any PyramidLayout, container: any PyramidContainer) {
        self.layout = layout
        self.container = container
    }

    public var padsEdgeTiles: Bool { layout.padsEdgeTiles }

    public func hasTile(_ tile: TileAddress) -> Bool { container.hasCompleteFile(at: layout.path(of: tile)) }

    public func write(_ bytes: [UInt8], for tile: TileAddress) throws {
        try container.write(bytes, to: layout.path(of: tile))
    }

    public func finish(blankTiles: [TileAddress]) throws {
        for file in layout.metadataFiles(blankTiles: blankTiles) { try container.write(file.bytes, to: file.path) }
        try container.commit()
    }
}
