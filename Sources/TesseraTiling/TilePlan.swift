/// One tile placed in a frame: its key, the part of the content it covers and its size in pixels.
public struct PlannedTile: Hashable, Sendable, CustomStringConvertible {
    /// The tile.
    public let key: TileKey
    /// What the tile covers, in content points, clipped at the content's edges (edge tiles are never stretched).
    public let rect: Rect2D
    /// The pixels the tile holds: the tile size, cut short at the right and bottom edges.
    public let pixelSize: PixelSize

    /// Places `key`, covering `rect` (content points) with `pixelSize` pixels.
    public init(key: TileKey, rect: Rect2D, pixelSize: PixelSize) {
        self.key = key
        self.rect = rect
        self.pixelSize = pixelSize
    }

    /// The key and its rect, for messages.
    public var description: String { "\(key) \(rect)" }
}

/// What one frame needs: the level drawn, the visible tiles ordered from the centre of the view out, the ring
/// of tiles just around them to prefetch, in the same order, and the backstop: the coarsest level's tiles under
/// and around the view, the stand-ins of last resort.
public struct TilePlan: Hashable, Sendable {
    /// The level drawn, or nil when the layer has no levels.
    public let level: LevelOfDetail?
    /// The tiles on screen, centre first.
    public let visible: [PlannedTile]
    /// The tiles one tile around the visible ones (within the content), centre first.
    public let prefetch: [PlannedTile]
    /// The tiles of the coarsest level meeting the view and one tile around it, centre first, when that level is
    /// not the one drawn. They are few (about a quarter of a screen's pixels, plus the ring) and cheap, and once
    /// cached they cover the view at any zoom, so the screen is not left blank while finer tiles load, however
    /// fast the user pans or zooms out and however long ago the area was seen.
    public let backstop: [PlannedTile]

    /// Makes a plan; `TiledLayout.plan(visibleRect:zoomScale:)` is the usual way to get one.
    public init(level: LevelOfDetail?, visible: [PlannedTile], prefetch: [PlannedTile], backstop: [PlannedTile] = []) {
        self.level = level
        self.visible = visible
        self.prefetch = prefetch
        self.backstop = backstop
    }

    /// A frame with nothing to draw.
    public static let empty = TilePlan(level: nil, visible: [], prefetch: [])

    /// The keys of every tile this frame wants: backstop, visible and prefetch.
    public var wantedKeys: Set<TileKey> {
        Set(backstop.map(\.key)).union(visible.map(\.key)).union(prefetch.map(\.key))
    }

    /// The keys a cache should keep whatever its budget: the tiles on screen and their backstop.
    public var pinnedKeys: Set<TileKey> {
        Set(visible.map(\.key)).union(backstop.map(\.key))
    }

    /// Requests for every tile of the plan, backstop first, then visible, then prefetch, each in centre-out order.
    public var requests: [TileRequest] {
        func requests(_ tiles: [PlannedTile], _ purpose: TilePriority.Purpose) -> [TileRequest] {
            tiles.enumerated().map {
                TileRequest(key: $1.key, pixelSize: $1.pixelSize, priority: .init(purpose, order: $0))
            }
        }
        return requests(backstop, .backstop) + requests(visible, .visible) + requests(prefetch, .prefetch)
    }

    /// The keys `previous` wanted (backstop, visible or prefetch) that this plan no longer wants, in `previous`'s
    /// order: what a scheduler may cancel and a cache may unpin.
    public func keysNoLongerNeeded(since previous: TilePlan) -> [TileKey] {
        let wanted = wantedKeys
        return (previous.backstop + previous.visible + previous.prefetch).map(\.key).filter { !wanted.contains($0) }
    }
}
