/// Whole tiles of tiled codestreams, decoded at a reduction and converted to pixels, kept between reads so that
/// the many small reads falling in one tile (a server's 256-pixel IIIF tiles in a 1024-pixel JPEG 2000 tile)
/// cost one decode, and concurrent reads of one tile wait for that decode. Bounded in bytes, the least recently
/// used dropped first. Given to reads through `ReadOptions.tileCache`; reads without one decode only what they ask.
public final class DecodedTileCache: Sendable {
    /// A tile: which opened file, which tile of its codestream, at which reduction.
    struct Key: Hashable, Sendable {
        var source: Int
        var tile: Int
        var reduction: Int
    }

    /// A decoded tile: where it lies in the reduced image (component 0's absolute coordinates at the reduction)
    /// and its pixels, row after row.
    struct Tile: Sendable {
        var rect: Rect
        var format: PixelFormat
        var pixels: [UInt8]
    }

    private let tiles: SharedCache<Key, Tile>

    /// A cache holding at most `byteLimit` bytes of pixels.
    public init(byteLimit: Int) {
        tiles = SharedCache(byteLimit: byteLimit) { _, tile in tile.pixels.count + 64 }
    }

    /// The most memory the tiles may hold, in bytes.
    public var byteLimit: Int { tiles.byteLimit }

    /// How many tiles are held, and their bytes.
    public var usage: (count: Int, bytes: Int) { tiles.usage }

    /// How reads found their tiles since the start: held, decoded for another read at the same time (waited for),
    /// or decoded by the read.
    public var lookups: CacheLookups { tiles.lookups }

    /// The tile for `key`, held or decoded now by `decode` (once, however many ask at the same time).
    func tile(for key: Key, decode: () throws -> Tile) throws -> Tile {
        try tiles.value(for: key, make: decode)
    }
}
