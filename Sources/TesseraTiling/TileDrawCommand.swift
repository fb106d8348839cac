/// One drawing step of a frame: copy `sourceRect` of a cached tile's pixels into `destinationRect` of the content,
/// at `alpha`.
public struct TileDrawCommand<Tile: Sendable>: Sendable {
    /// Why this tile is drawn.
    public enum Role: Hashable, Sendable {
        /// The visible tile itself.
        case exact
        /// A coarser ancestor standing in, cropped and magnified, while the visible tile loads.
        case coarserPlaceholder
        /// One of the finer tiles covering a visible tile that is not loaded, minified.
        case finerPlaceholder
    }

    /// The tile whose pixels are drawn.
    public let key: TileKey
    /// Its pixels.
    public let tile: Tile
    /// The part of the tile to draw, in that tile's pixels (fractional when cropped from a much coarser level).
    public let sourceRect: Rect2D
    /// Where it goes, in content points.
    public let destinationRect: Rect2D
    /// Opacity from 0 to 1: the tile's fade-in progress since it arrived.
    public let alpha: Double
    /// Why it is drawn.
    public let role: Role

    /// Makes a command drawing `sourceRect` (pixels) of `tile` into `destinationRect` (content points).
    public init(
        key: TileKey, tile: Tile, sourceRect: Rect2D, destinationRect: Rect2D, alpha: Double, role: Role
    ) {
        self.key = key
        self.tile = tile
        self.sourceRect = sourceRect
        self.destinationRect = destinationRect
        self.alpha = alpha
        self.role = role
    }
}
