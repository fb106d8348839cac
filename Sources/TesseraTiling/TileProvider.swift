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
}
