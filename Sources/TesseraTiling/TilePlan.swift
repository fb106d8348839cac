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

/// What one frame needs: the level drawn, the visible tiles ordered from the centre of the view out, and the
/// ring of tiles just around them to prefetch, in the same order.
public struct TilePlan: Hashable, Sendable {
    /// The level drawn, or nil when the layer has no levels.
    public let level: LevelOfDetail?
    /// The tiles on screen, centre first.
    public let visible: [PlannedTile]
    /// The tiles one tile around the visible ones (within the content), centre first.
    public let prefetch: [PlannedTile]

    /// Makes a plan; `TiledLayout.plan(visibleRect:zoomScale:)` is the usual way to get one.
    public init(level: LevelOfDetail?, visible: [PlannedTile], prefetch: [PlannedTile]) {
        self.level = level
        self.visible = visible
        self.prefetch = prefetch
    }

    /// A frame with nothing to draw.
    public static let empty = TilePlan(level: nil, visible: [], prefetch: [])

    /// The keys of every tile this frame wants, visible then prefetch.
    public var wantedKeys: Set<TileKey> {
        Set(visible.map(\.key)).union(prefetch.map(\.key))
    }

    /// Requests for every tile of the plan, visible first, each in centre-out order.
    public var requests: [TileRequest] {
        visible.enumerated().map { TileRequest(key: $1.key, pixelSize: $1.pixelSize, priority: .init(.visible, order: $0)) }
            + prefetch.enumerated().map {
                TileRequest(key: $1.key, pixelSize: $1.pixelSize, priority: .init(.prefetch, order: $0))
            }
    }

    /// The keys `previous` wanted (visible or prefetch) that this plan no longer wants, in `previous`'s order:
    /// what a scheduler may cancel and a cache may unpin.
    public func keysNoLongerNeeded(since previous: TilePlan) -> [TileKey] {
        let wanted = wantedKeys
        return (previous.visible + previous.prefetch).map(\.key).filter { !wanted.contains($0) }
    }
}
