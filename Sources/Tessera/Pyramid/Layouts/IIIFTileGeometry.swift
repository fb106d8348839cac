/// How IIIF Image API clients address an image's tiles, the one statement of it for the IIIF level-0 layout, the
/// tile-folder reader, the server and the native viewer (`Web/js/iiif.js` mirrors it; both pass
/// `Tests/Vectors/iiif.json`).
///
/// The level at power-of-two reduction `scale` is the image divided by `scale`, rounded up. Pixels `rect` of that
/// level are the full-resolution region from `(rect.x * scale, rect.y * scale)`, `rect.width * scale` by
/// `rect.height * scale` pixels cut by the image's edge, asked for at `rect`'s size:
/// `{region}/{size}/0/default.{format}`, with the region `full` when it is the whole image and the size `max` when
/// it is the image's full size (as OpenSeadragon and other viewers ask, and a static folder stores). Tile
/// (`column`, `row`) is the level's cell of `tileWidth` x `tileHeight` pixels there, cut by the level's edge.
public struct IIIFTileGeometry: Sendable, Hashable {
    /// The tile side to assume when an info.json lists no tiles, in pixels.
    public static let defaultTileSize = 512

    /// The full-resolution size, in pixels.
    public let imageSize: Size
    /// The tile size in pixels of the reduced level (not of the full-resolution region a tile covers).
    public let tileWidth: Int
    public let tileHeight: Int

    /// The geometry of `imageSize` cut in `tileWidth` x `tileHeight` tiles (each at least 1).
    public init(imageSize: Size, tileWidth: Int, tileHeight: Int) {
        precondition(tileWidth >= 1 && tileHeight >= 1, "a IIIF tile is at least 1 x 1 pixel")
        self.imageSize = imageSize
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
    }

    /// The size of the level at reduction `scale`, in pixels.
    public func levelSize(scale: Int) -> Size {
        Size(width: (imageSize.width + scale - 1) / scale, height: (imageSize.height + scale - 1) / scale)
    }

    /// The pixels of the level at reduction `scale` that tile (`column`, `row`) holds.
    public func tileRect(scale: Int, column: Int, row: Int) -> Rect {
        let level = levelSize(scale: scale), x = column * tileWidth, y = row * tileHeight
        return Rect(x: x, y: y, width: min(tileWidth, level.width - x), height: min(tileHeight, level.height - y))
    }

    /// The full-resolution pixels that `rect` of the level at reduction `scale` covers.
    public func region(scale: Int, levelRect rect: Rect) -> Rect {
        let x = rect.x * scale, y = rect.y * scale
        return Rect(x: x, y: y, width: min(rect.width * scale, imageSize.width - x),
                    height: min(rect.height * scale, imageSize.height - y))
    }

    /// The request for `rect` of the level at reduction `scale`, below the image's base URI, as viewers ask.
    public func path(scale: Int, levelRect rect: Rect, format: String = "jpg") -> String {
        storedPaths(scale: scale, levelRect: rect, format: format)[0]
    }

    /// The request for tile (`column`, `row`) at reduction `scale`, below the image's base URI.
    public func path(scale: Int, column: Int, row: Int, format: String = "jpg") -> String {
        path(scale: scale, levelRect: tileRect(scale: scale, column: column, row: row), format: format)
    }

    /// The names a static folder may store a tile under, the one `path` gives first: writers differ on the
    /// canonical forms (`w,h` or `w,` for the size, `max` or `full` at full size, `full` or the pixels as region).
    public func storedPaths(scale: Int, column: Int, row: Int, format: String = "jpg") -> [String] {
        storedPaths(scale: scale, levelRect: tileRect(scale: scale, column: column, row: row), format: format)
    }

    private func storedPaths(scale: Int, levelRect rect: Rect, format: String) -> [String] {
        let region = region(scale: scale, levelRect: rect), size = rect.size
        let regions = (region == Rect(imageSize) ? ["full"] : []) + [region.description]
        let sizes = (size == imageSize ? ["max"] : []) + SizeForm.allCases.map { $0.text(size) }
            + (size == imageSize ? ["full"] : [])
        return regions.flatMap { region in sizes.map { Self.request(region: region, size: $0, format: format) } }
    }

    /// How a request gives a tile's size: `w,h`, IIIF 3's canonical form (which `path` writes, and OpenSeadragon
    /// asks an IIIF 3 server for), or `w,`, IIIF 2's (which OpenSeadragon asks a 2.x server for, and other viewers
    /// any server). Its raw value is never 0.
    public enum SizeForm: UInt8, Sendable, CaseIterable {
        case widthAndHeight = 1, width

        /// `size` written in this form.
        public func text(_ size: Size) -> String {
            self == .width ? "\(size.width)," : "\(size.width),\(size.height)"
        }
    }

    /// The request for tile (`column`, `row`) at reduction `scale` as a viewer asks for a tile of a level of
    /// several: its region in pixels, its size in `form`.
    public func path(scale: Int, column: Int, row: Int, sizeForm form: SizeForm, format: String = "jpg") -> String {
        let rect = tileRect(scale: scale, column: column, row: row)
        return Self.request(region: region(scale: scale, levelRect: rect).description, size: form.text(rect.size),
                            format: format)
    }

    /// The request below the image's base URI for `region` at `size` (both as IIIF writes them), unrotated.
    private static func request(region: String, size: String, format: String) -> String {
        "\(region)/\(size)/0/default.\(format)"
    }

    /// The tiles along the right and bottom edges of each level of more than one and at most `maxTiles` tiles, in
    /// the order a viewer whose window is `view` pixels is likely to ask for them: first the largest level that fits
    /// in the window (its home view), then the finer levels (zooming in), then the coarser ones; each level's right
    /// column top to bottom, then the rest of its bottom row left to right.
    public func edgeTiles(ofLevelsUpTo maxTiles: Int, view: Size) -> [(scale: Int, column: Int, row: Int)] {
        var finer: [[(scale: Int, column: Int, row: Int)]] = [], coarser = finer
        var scale = 1
        while true {
            let level = levelSize(scale: scale)
            let columns = (level.width + tileWidth - 1) / tileWidth, rows = (level.height + tileHeight - 1) / tileHeight
            if columns * rows <= 1 { break }
            if columns * rows <= maxTiles {
                let edge = (0..<rows).map { (scale, columns - 1, $0) } + (0..<columns - 1).map { (scale, $0, rows - 1) }
                if level.width <= view.width && level.height <= view.height { coarser.append(edge) } else { finer.append(edge) }
            }
            scale *= 2
        }
        return (coarser.prefix(1) + finer.reversed() + coarser.dropFirst()).flatMap { $0 }
    }

    /// The tile a request for full-resolution `region` at `size` asks for, when it is one at a power-of-two
    /// reduction (edge tiles cut to the image, as any client asks) and `size` is within `slack` pixels of the
    /// tile's on each axis; nil for any other request. A slack of 1 finds the tiles viewers ask for a pixel off:
    /// a width rounded up, a height rounded from the aspect ratio, a level halved rounding down.
    public func tile(region: Rect, size: Size, slack: Int = 0) -> (scale: Int, column: Int, row: Int)? {
        var scale = 1
        repeat {
            let spanX = tileWidth * scale, spanY = tileHeight * scale
            if region.x >= 0, region.y >= 0, region.x % spanX == 0, region.y % spanY == 0 {
                let column = region.x / spanX, row = region.y / spanY
                let rect = tileRect(scale: scale, column: column, row: row)
                if abs(size.width - rect.width) <= slack, abs(size.height - rect.height) <= slack,
                   region == self.region(scale: scale, levelRect: rect) {
                    return (scale, column, row)
                }
            }
            scale *= 2
        } while tileWidth * scale < 2 * max(imageSize.width, imageSize.height)
        return nil
    }
}
