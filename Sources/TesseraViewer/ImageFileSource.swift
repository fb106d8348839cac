import Foundation
import Synchronization
import Tessera
import TesseraTiling

/// Tiles read from an image file through `ImageSource`'s region reads at reduced scale: a pyramidal TIFF or a Deep
/// Zoom or IIIF level-0 folder from its levels (a tile folder's own tile size, so that each tile is one file), a
/// JPEG with DCT scaling, anything else by averaging.
///
/// A large image that is not a pyramid is slow to read by regions (a JPEG decodes every row above the region),
/// so, given a `PyramidCache`, the source asks it for a pyramidal TIFF of the image, as `tessera serve` does: the
/// cache builds one in the background, and once it is there tiles are read from it instead. A plain JPEG's tiles
/// are read through its entropy index in the cache meanwhile (or always, in `PyramidCache.Mode.index`).
public final class ImageFileSource: TileSource {
    public let name: String
    public let contentSize: PixelSize
    public let tileSize: PixelSize
    public let depthCount: Int
    private let pyramids: PyramidCache?
    /// What the pyramid cache knows the image by (`ImageInput.cacheIdentity`).
    private let fileIdentity: (key: String, modified: Date, size: Int)
    /// What tiles are read from now: the image itself, then the cached pyramid once it is built.
    private let current: Mutex<PyramidCache.CachedSource>

    /// Opens `path`; `pyramids`, when given, builds a pyramidal TIFF of a large plain image to read from. Tiles are
    /// `tileSize` pixels, by default a tile folder's own or 256.
    public init(path: String, tileSize: Int? = nil, pyramids: PyramidCache? = nil, budget: MemoryBudget = .default)
        throws
    {
        let source = try ImageSource(path: path, budget: budget)
        let tileSize = tileSize ?? source.properties.tileSize.map { max($0.width, $0.height) } ?? 256
        name = path
        contentSize = PixelSize(width: source.properties.width, height: source.properties.height)
        self.tileSize = PixelSize(width: tileSize, height: tileSize)
        depthCount = Self.depthsToOneTile(contentSize: contentSize, tileSize: self.tileSize)
        self.pyramids = pyramids
        fileIdentity = source.input.cacheIdentity
        current = Mutex(PyramidCache.CachedSource(file: source))
    }

    /// Whether tiles now come from a pyramid built in the cache.
    public var readsCachedPyramid: Bool { current.withLock { $0.isCachedPyramid } }

    public func pixels(depth: Int, region: Rect) throws -> ImageBuffer {
        let factor = 1 << depth
        let full = Rect(x: region.x * factor, y: region.y * factor,
                        width: min(region.width * factor, contentSize.width - region.x * factor),
                        height: min(region.height * factor, contentSize.height - region.y * factor))
        // A plain JPEG's entropy index, which the cache builds before any pyramid, serves its regions meanwhile.
        let reader = try source().makeReader(ReadOptions(region: full, scale: factor, entropyIndexFolder: pyramids?.folder))
        return try reader.readAll(name: name)
    }

    /// The file to read: the cached pyramid if it is built (starting its build if not), else the image.
    private func source() throws -> ImageSource {
        let last = current.withLock { $0 }
        guard let pyramids else { return last.source }
        let now = pyramids.source(for: last.file, path: fileIdentity.key, modified: fileIdentity.modified, size: fileIdentity.size,
                                  current: last)
        current.withLock { $0 = now }
        return now.source
    }
}
