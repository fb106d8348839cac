/// What a tile is wanted for, and how urgently: backstop tiles, then visible ones, then prefetched ones, each in
/// centre-out order.
///
/// Priorities compare by urgency: `a < b` means `a` is served first.
public struct TilePriority: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Why a tile is wanted.
    public enum Purpose: Int, Hashable, Sendable {
        /// The tile is one of the coarsest level's under the view (`TilePlan.backstop`): few and cheap, and what
        /// covers the screen when nothing finer is cached, so it goes first.
        case backstop = -1
        /// The tile is on screen now.
        case visible = 0
        /// The tile is in the ring just outside the screen, wanted before a pan reaches it.
        case prefetch = 1
    }

    /// Why the tile is wanted; backstop tiles always come first, then visible ones.
    public var purpose: Purpose
    /// The tile's place in the frame's centre-out order (0 is the tile nearest the centre of the view).
    public var order: Int

    /// Makes the priority of the `order`-th tile (centre-out) wanted for `purpose`.
    public init(_ purpose: Purpose, order: Int) {
        self.purpose = purpose
        self.order = order
    }

    /// Whether `a` is served before `b`: backstop before visible before prefetch, then the lower order.
    public static func < (a: TilePriority, b: TilePriority) -> Bool {
        (a.purpose.rawValue, a.order) < (b.purpose.rawValue, b.order)
    }

    /// "purpose #order", for messages.
    public var description: String { "\(purpose) #\(order)" }
}

/// A tile to produce: its key, its size in pixels (cut short at the content's edges) and its priority.
public struct TileRequest: Hashable, Sendable {
    /// The tile.
    public var key: TileKey
    /// The pixels the tile holds, in pixels.
    public var pixelSize: PixelSize
    /// How urgently it is wanted.
    public var priority: TilePriority

    /// Makes a request for `key`, of `pixelSize` pixels, at `priority`.
    public init(key: TileKey, pixelSize: PixelSize, priority: TilePriority) {
        self.key = key
        self.pixelSize = pixelSize
        self.priority = priority
    }
}
