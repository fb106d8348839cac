/// Produces the pixels of tiles, for a `TileScheduler` to call from background tasks (decoding a region of a
/// pyramid, fetching a tile over HTTP, rendering vector content).
public protocol TileProvider: Sendable {
    /// The payload of one tile (a pixel buffer, an image handle, encoded bytes).
    associatedtype Tile: Sendable

    /// Makes the tile `request.key`, of `request.pixelSize` pixels. Called concurrently for different keys; may
    /// throw, and should stop early when its task is cancelled.
    func makeTile(for request: TileRequest) async throws -> Tile

    /// What `tile` costs to keep in memory, in bytes.
    func cost(of tile: Tile) -> Int

    /// The most memory making the tile for `request` holds, in bytes: the scheduler reserves it in the cache's
    /// budget while the tile is made, so tiles in flight never push memory past the budget.
    func estimatedCost(of request: TileRequest) -> Int
}

extension TileProvider {
    /// Reserves nothing: tiles in flight are not counted against the cache's budget.
    public func estimatedCost(of request: TileRequest) -> Int { 0 }
}
