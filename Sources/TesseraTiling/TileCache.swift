/// A tile held by a `TileCache`: its payload, what it costs and when it arrived.
public struct CachedTile<Tile: Sendable>: Sendable {
    /// The tile's pixels, in whatever form the provider made them.
    public var tile: Tile
    /// What the tile costs, in bytes.
    public var cost: Int
    /// When the tile arrived, in seconds on the caller's clock; fades are measured from it.
    public var arrivalTime: Double
}

/// A memory cache of tiles with a byte budget: least recently used tiles are evicted first, and pinned tiles
/// (the visible ones) are never evicted, so the screen never loses what it shows even when that exceeds the budget.
///
/// Thread-safe: tiles arrive from background tasks while the drawing code reads, so all state sits behind one
/// `Mutex` (wrapped in `Locked` so ThreadSanitizer can check it).
public final class TileCache<Tile: Sendable>: Sendable {
    /// What the cache has done since it was made.
    public struct Statistics: Hashable, Sendable {
        /// Lookups through `tile(for:)` that found the tile.
        public var hits = 0
        /// Lookups through `tile(for:)` that did not.
        public var misses = 0
        /// Tiles removed to stay within the budget.
        public var evictions = 0
        /// Bytes held now.
        public var bytes = 0
        /// The most bytes held at the end of any operation.
        public var peakBytes = 0
        /// Tiles held now.
        public var count = 0
        /// Bytes reserved now for tiles being made (`reserve(_:)`), counted against the budget.
        public var reservedBytes = 0
    }

    private struct State {
        var tiles = LRUList<TileKey, CachedTile<Tile>>()
        var pinned: Set<TileKey> = []
        var statistics = Statistics()

        /// Evicts unpinned tiles, least recently used first, until the bytes and the reservations fit the budget.
        mutating func trim(to budget: Int) {
            var bytes = statistics.bytes
            let reserved = statistics.reservedBytes
            var evictions = 0
            tiles.evictOldest(keeping: pinned, while: { bytes + reserved > budget }) { _, evicted in
                bytes -= evicted.cost
                evictions += 1
            }
            statistics.bytes = bytes
            statistics.evictions += evictions
            statistics.count = tiles.count
            statistics.peakBytes = max(statistics.peakBytes, bytes)
        }
    }

    /// The most bytes the unpinned tiles may bring the cache to.
    public let byteBudget: Int
    private let state = Locked(State())

    /// Makes an empty cache that holds up to `byteBudget` bytes (more only while pinned tiles need it).
    public init(byteBudget: Int) {
        precondition(byteBudget >= 0, "byteBudget cannot be negative, got \(byteBudget)")
        self.byteBudget = byteBudget
    }

    /// Stores `tile` for `key` at `cost` bytes, arrived at `arrivalTime` seconds, replacing any tile held for
    /// `key`, then evicts down to the budget (the new tile too, if it alone is over budget and not pinned).
    /// `releasing` hands back the reservation made for the tile while it was made, in the same step, so the
    /// tile is never counted twice.
    public func insert(_ tile: Tile, for key: TileKey, cost: Int, arrivalTime: Double, releasing reservation: Int = 0) {
        precondition(cost >= 0, "a tile's cost cannot be negative, got \(cost)")
        state.withLock { state in
            let replaced = state.tiles.set(CachedTile(tile: tile, cost: cost, arrivalTime: arrivalTime), for: key)
            state.statistics.bytes += cost - (replaced?.cost ?? 0)
            state.statistics.reservedBytes -= reservation
            state.trim(to: byteBudget)
        }
    }

    /// Sets `bytes` of the budget aside for a tile being made, evicting unpinned tiles to make room, so that the
    /// cache and the tiles in flight together stay within the budget. Give them back with `release(_:)`, or with
    /// `insert(_:for:cost:arrivalTime:releasing:)` when the tile arrives.
    public func reserve(_ bytes: Int) {
        precondition(bytes >= 0, "a reservation cannot be negative, got \(bytes)")
        state.withLock { state in
            state.statistics.reservedBytes += bytes
            state.trim(to: byteBudget)
        }
    }

    /// Gives back `bytes` reserved for a tile that will not arrive (it failed, or was made stale).
    public func release(_ bytes: Int) {
        state.withLock { $0.statistics.reservedBytes -= bytes }
    }

    /// The tile for `key`, marked as just used; counts a hit or a miss.
    public func tile(for key: TileKey) -> CachedTile<Tile>? {
        state.withLock { state in
            let found = state.tiles.use(key)
            if found == nil { state.statistics.misses += 1 } else { state.statistics.hits += 1 }
            return found
        }
    }

    /// The tile for `key`, marked as just used, without counting a hit or a miss: for looking for placeholders,
    /// whose absence is no miss.
    public func probe(_ key: TileKey) -> CachedTile<Tile>? {
        state.withLock { $0.tiles.use(key) }
    }

    /// Whether a tile for `key` is held; changes neither the order nor the statistics.
    public func contains(_ key: TileKey) -> Bool {
        state.withLock { $0.tiles.peek(key) != nil }
    }

    /// Makes `keys` the pinned set, replacing the previous one, then evicts tiles no longer pinned if over budget.
    /// Keys not yet cached stay pinned for when they arrive.
    public func setPinned(_ keys: Set<TileKey>) {
        state.withLock { state in
            state.pinned = keys
            state.trim(to: byteBudget)
        }
    }

    /// Adds `keys` to the pinned set.
    public func pin(_ keys: some Sequence<TileKey>) {
        state.withLock { $0.pinned.formUnion(keys) }
    }

    /// Removes `keys` from the pinned set, then evicts if over budget.
    public func unpin(_ keys: some Sequence<TileKey>) {
        state.withLock { state in
            state.pinned.subtract(keys)
            state.trim(to: byteBudget)
        }
    }

    /// Drops the tile for `key`, pinned or not (its content changed).
    public func remove(_ key: TileKey) {
        state.withLock { state in
            if let removed = state.tiles.remove(key) {
                state.statistics.bytes -= removed.cost
                state.statistics.count = state.tiles.count
            }
        }
    }

    /// Drops every tile, pinned or not (the whole content changed); keeps the pinned set and the counters.
    public func removeAll() {
        state.withLock { state in
            state.tiles.removeAll()
            state.statistics.bytes = 0
            state.statistics.count = 0
        }
    }

    /// The counters and occupancy now.
    public var statistics: Statistics {
        state.withLock { $0.statistics }
    }
}
