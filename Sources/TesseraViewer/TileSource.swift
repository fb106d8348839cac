import Tessera
import TesseraTiling

/// A pyramid the viewer reads tiles from: a plain or pyramidal image, a Deep Zoom folder, a IIIF server.
///
/// Depth 0 is full resolution and each depth halves it (a level `d` is `ceil(size / 2^d)` pixels), as in
/// `PyramidPlan`. The viewer cuts its levels with the source's tile size, so that one engine tile is one stored
/// tile wherever the source stores tiles.
public protocol TileSource: Sendable {
    /// The path or URL, for messages.
    var name: String { get }
    /// The full-resolution size, in pixels (one content point per pixel).
    var contentSize: PixelSize { get }
    /// The size of the source's tiles, in pixels.
    var tileSize: PixelSize { get }
    /// How many depths can be read, full resolution included.
    var depthCount: Int { get }
    /// The pixels of `region` (in pixels of depth `depth`), in any 8- or 16-bit format. Called from background
    /// tasks, concurrently.
    func pixels(depth: Int, region: Rect) throws -> ImageBuffer
}

extension TileSource {
    /// Depths from full resolution down to the first that fits in one tile: the levels a viewer needs.
    static func depthsToOneTile(contentSize: PixelSize, tileSize: PixelSize) -> Int {
        var depth = 0
        while (contentSize.width - 1) >> depth >= tileSize.width || (contentSize.height - 1) >> depth >= tileSize.height {
            depth += 1
        }
        return depth + 1
    }
}

/// Where an engine tile's pixels lie in a source pyramid: the depth read, the rectangle of that depth's pixels
/// read, and how many times the result is magnified to the tile's size.
///
/// Engine level `j` draws at `2^shift` pixels per image pixel, `shift = j + log2(contentsScale)`. At or below
/// full resolution (`shift <= 0`) the tile is the stored tile of the same column and row at depth `-shift`;
/// above it (a 2x display at zoom 1), it is part of a full-resolution tile, magnified `2^shift` times.
public struct SourceTile: Hashable, Sendable, CustomStringConvertible {
    /// The pyramid depth read: 0 is full resolution.
    public let depth: Int
    /// The rectangle read, in pixels of `depth`.
    public let region: Rect
    /// How many times the region is magnified to fill the tile: 1 at or below full resolution.
    public let magnification: Int

    /// Locates tile `key` of `pixelSize` pixels, of a grid of `tileSize` tiles at `2^shift` pixels per image pixel.
    public init(key: TileKey, pixelSize: PixelSize, tileSize: PixelSize, shift: Int) {
        let x = key.column * tileSize.width, y = key.row * tileSize.height
        if shift <= 0 {
            depth = -shift
            region = Rect(x: x, y: y, width: pixelSize.width, height: pixelSize.height)
            magnification = 1
        } else {
            let factor = 1 << shift
            let left = x / factor, top = y / factor
            let right = (x + pixelSize.width + factor - 1) / factor, bottom = (y + pixelSize.height + factor - 1) / factor
            depth = 0
            region = Rect(x: left, y: top, width: right - left, height: bottom - top)
            magnification = factor
        }
    }

    /// "depth d, x,y,w,h", for messages.
    public var description: String { "depth \(depth), \(region)" + (magnification > 1 ? " x\(magnification)" : "") }
}
