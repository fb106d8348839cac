import Synchronization
import Tessera
import TesseraTiling

/// Makes the engine's tiles from a Deep Zoom pyramid on disk, decoding one JPEG tile file per engine tile with
/// `ImageSource` and `readAll()`.
///
/// Engine level `j` draws at `contentsScale * 2^j` pixels per image pixel, a power of two `2^shift`. With the
/// same tile size and overlap 0, an engine tile below 1:1 (`shift <= 0`) is exactly the Deep Zoom tile of the
/// same column and row `-shift` levels under the top; above 1:1 it is the part of one full-resolution tile
/// (column and row shifted right by `shift`) magnified `2^shift` times, nearest neighbour, as a layer's drawing
/// callback would do.
struct DeepZoomTileProvider: TileProvider {
    /// The folder holding the pyramid.
    let folder: String
    /// The pyramid's geometry and file names.
    let layout: DeepZoomLayout
    /// `log2(contentsScale)`: engine level `j` is `2^(j + scaleShift)` pixels per image pixel.
    let scaleShift: Int
    /// Where decoded bytes are counted until the cache holds them.
    let ledger: MemoryLedger

    /// A tile's pixels and its key, so that pricing it can close its entry in the ledger.
    struct Tile: Sendable {
        let key: TileKey
        let pixels: ImageBuffer
    }

    func makeTile(for request: TileRequest) async throws -> Tile {
        let key = request.key
        let shift = key.level + scaleShift
        let depth = max(0, -shift)
        let magnification = max(0, shift)
        let column = key.column >> magnification, row = key.row >> magnification
        let path = "\(folder)/\(layout.path(of: TileAddress(depth: depth, column: column, row: row)))"
        let decoded = try ImageSource(path: path).makeReader().readAll(name: path)
        ledger.startTile(key, bytes: decoded.bytes.count)
        guard magnification > 0 else {
            precondition(decoded.width == request.pixelSize.width && decoded.height == request.pixelSize.height,
                         "\(path) is \(decoded.size), the engine wants \(request.pixelSize)")
            return Tile(key: key, pixels: decoded)
        }
        let tile = Self.magnify(
            decoded, by: magnification,
            origin: ((key.column - column << magnification) * layout.plan.tileSize,
                     (key.row - row << magnification) * layout.plan.tileSize),
            size: request.pixelSize)
        ledger.startTile(key, bytes: decoded.bytes.count + tile.bytes.count)
        return Tile(key: key, pixels: tile)
    }

    func cost(of tile: Tile) -> Int {
        // The scheduler prices a tile as it puts it in the cache: from then on the cache's statistics count it.
        ledger.finishTile(tile.key)
        return tile.pixels.bytes.count
    }

    /// The tile's RGB pixels, plus the full-resolution tile it is magnified from above 1:1.
    func estimatedCost(of request: TileRequest) -> Int {
        let tileBytes = layout.plan.tileSize * layout.plan.tileSize * 3
        let pixels = request.pixelSize.width * request.pixelSize.height * 3
        return request.key.level + scaleShift > 0 ? pixels + tileBytes : pixels
    }

    /// The `size` pixels of `source` magnified `2^shift` times, nearest neighbour, starting at `origin` in
    /// magnified pixels.
    static func magnify(_ source: ImageBuffer, by shift: Int, origin: (x: Int, y: Int), size: PixelSize)
        -> ImageBuffer
    {
        var tile = ImageBuffer(width: size.width, height: size.height, format: source.format)
        let channels = source.format.bytesPerPixel
        source.bytes.withUnsafeBufferPointer { from in
            tile.bytes.withUnsafeMutableBufferPointer { to in
                for y in 0..<size.height {
                    let sourceRow = source.offset(ofRow: (origin.y + y) >> shift)
                    let targetRow = y * tile.bytesPerRow
                    for x in 0..<size.width {
                        let s = sourceRow + ((origin.x + x) >> shift) * channels
                        let t = targetRow + x * channels
                        for c in 0..<channels { to[t + c] = from[s + c] }
                    }
                }
            }
        }
        return tile
    }
}

/// Counts the bytes of tiles decoded but not yet in the cache (the provider's buffers, held until the scheduler
/// prices the tile to insert it), and the peak of those plus the cache's bytes: the harness's own accounting,
/// apart from the cache's reservations.
final class MemoryLedger: Sendable {
    private struct State {
        var inFlight: [TileKey: Int] = [:]
        var inFlightBytes = 0
        var peakInFlight = 0
        var peakTotal = 0
    }

    private let state = Mutex(State())
    private let cacheBytes: @Sendable () -> Int

    /// A ledger adding the bytes `cacheBytes` reports to its own.
    init(cacheBytes: @escaping @Sendable () -> Int) {
        self.cacheBytes = cacheBytes
    }

    /// `key` now holds `bytes` outside the cache (replacing what it held before).
    func startTile(_ key: TileKey, bytes: Int) {
        let cached = cacheBytes()
        state.withLock { state in
            state.inFlightBytes += bytes - (state.inFlight.updateValue(bytes, forKey: key) ?? 0)
            state.peakInFlight = max(state.peakInFlight, state.inFlightBytes)
            state.peakTotal = max(state.peakTotal, state.inFlightBytes + cached)
        }
    }

    /// `key` is going into the cache: its buffers are no longer in flight.
    func finishTile(_ key: TileKey) {
        state.withLock { state in
            state.inFlightBytes -= state.inFlight.removeValue(forKey: key) ?? 0
        }
    }

    /// Samples the cache's bytes now (once a frame) so the peak sees the cache alone too.
    func sample() {
        let cached = cacheBytes()
        state.withLock { $0.peakTotal = max($0.peakTotal, $0.inFlightBytes + cached) }
    }

    /// The most bytes in flight at once, and the most bytes in flight plus cached.
    var peaks: (inFlight: Int, total: Int) {
        state.withLock { ($0.peakInFlight, $0.peakTotal) }
    }
}
