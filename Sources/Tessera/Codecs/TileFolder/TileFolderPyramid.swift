import Foundation

/// A pyramid stored as one image file per tile, read through its descriptor: a Deep Zoom `NAME.dzi` beside its
/// `NAME_files/{level}/{column}_{row}.{format}`, or a IIIF level-0 folder's `info.json` beside its
/// `{region}/{size}/0/default.{format}` files (as Tessera, libvips and other static tilers write them).
/// Levels are power-of-two reductions of the full image, sizes rounded up; a tile left out of the folder (a blank
/// tile skipped when it was written) reads as white.
struct TileFolderPyramid: Sendable {
    enum Layout: Sendable {
        /// Deep Zoom: the `_files` folder and the number of its largest level.
        case deepZoom(files: String, topLevel: Int)
        /// IIIF level 0: the folder that holds `info.json`.
        case iiif(folder: String)
    }

    let layout: Layout
    /// The full-resolution size in pixels.
    let imageSize: Size
    /// The tile size in pixels, without overlap.
    let tileWidth: Int
    let tileHeight: Int
    /// Pixels each tile repeats of its neighbours on interior edges (Deep Zoom only).
    let overlap: Int
    /// The tiles' file extension (`jpg`, `png`, ...).
    let tileExtension: String
    /// The reductions that have a level (1, 2, 4, ...), ascending.
    let scaleFactors: [Int]

    /// The largest tile side a descriptor may claim, and the most levels.
    private static let maxTileSide = 1 << 14

    /// Reads the descriptor at `path` (`.dzi` XML or IIIF `info.json`).
    init(path: String, format: ImageFormat) throws {
        // A descriptor is a few hundred bytes; a megabyte is more than any real one.
        let data = try ImageInput.file(path: path).prefix(1 << 20)
        let text = String(decoding: data, as: UTF8.self)
        let parent = (path as NSString).deletingLastPathComponent, folder = parent.isEmpty ? "." : parent
        func corrupt(_ detail: String) -> TesseraError { .corrupt(path: path, detail: detail) }
        switch format {
        case .deepZoom:
            func attribute(_ name: String) -> String? {
                guard let range = text.range(of: "\(name)=\""),
                      let end = text[range.upperBound...].firstIndex(of: "\"") else { return nil }
                return String(text[range.upperBound..<end])
            }
            guard let width = attribute("Width").flatMap(Int.init), let height = attribute("Height").flatMap(Int.init),
                  let tileSize = attribute("TileSize").flatMap(Int.init) else {
                throw corrupt("a .dzi needs Size Width and Height and a TileSize")
            }
            imageSize = Size(width: width, height: height)
            tileWidth = tileSize
            tileHeight = tileSize
            overlap = attribute("Overlap").flatMap(Int.init) ?? 0
            tileExtension = attribute("Format") ?? "jpg"
            var topLevel = 0
            while 1 << topLevel < max(width, height) && topLevel < 62 { topLevel += 1 }
            scaleFactors = (0...topLevel).map { 1 << $0 }
            let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            layout = .deepZoom(files: "\(folder)/\(name)_files", topLevel: topLevel)
        default:
            guard let json = try? JSONSerialization.jsonObject(with: Data(data)) as? [String: Any],
                  let width = json["width"] as? Int, let height = json["height"] as? Int,
                  let tiles = (json["tiles"] as? [[String: Any]])?.first, let tileWidth = tiles["width"] as? Int
            else { throw corrupt("a IIIF info.json needs width, height and tiles") }
            imageSize = Size(width: width, height: height)
            self.tileWidth = tileWidth
            tileHeight = tiles["height"] as? Int ?? tileWidth
            overlap = 0
            tileExtension = (json["preferredFormats"] as? [String])?.first ?? "jpg"
            scaleFactors = ((tiles["scaleFactors"] as? [Int]) ?? [1]).filter { $0 >= 1 && $0 & ($0 - 1) == 0 }.sorted()
            layout = .iiif(folder: folder)
        }
        guard imageSize.width > 0, imageSize.height > 0, (1...Self.maxTileSide).contains(tileWidth),
              (1...Self.maxTileSide).contains(tileHeight), (0..<tileWidth).contains(overlap), scaleFactors.first == 1,
              tileExtension.allSatisfy({ $0.isLetter || $0.isNumber }) else {
            throw corrupt("the pyramid's size, tile size, overlap or levels are out of range")
        }
    }

    /// The size in pixels of the level at reduction `scale`.
    func levelSize(scale: Int) -> Size { reducedSize(imageSize, by: scale) }

    /// Tile columns and rows of the level at reduction `scale`.
    func grid(scale: Int) -> (columns: Int, rows: Int) {
        let size = levelSize(scale: scale)
        return ((size.width + tileWidth - 1) / tileWidth, (size.height + tileHeight - 1) / tileHeight)
    }

    /// The pixels of the level at reduction `scale` that tile `(column, row)`'s file holds, overlap included.
    func tileRect(scale: Int, column: Int, row: Int) -> Rect {
        let size = levelSize(scale: scale)
        let left = max(0, column * tileWidth - overlap), top = max(0, row * tileHeight - overlap)
        let right = min(size.width, (column + 1) * tileWidth + overlap)
        let bottom = min(size.height, (row + 1) * tileHeight + overlap)
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The file of tile `(column, row)` of the level at reduction `scale`, or nil when the folder has none.
    func tilePath(scale: Int, column: Int, row: Int) -> String? {
        switch layout {
        case let .deepZoom(files, topLevel):
            let level = topLevel - scale.trailingZeroBitCount
            let path = "\(files)/\(level)/\(column)_\(row).\(tileExtension)"
            return FileManager.default.fileExists(atPath: path) ? path : nil
        case let .iiif(folder):
            // The region and size as the tile's URL names them; writers differ on the canonical forms.
            let x = column * tileWidth * scale, y = row * tileHeight * scale
            let region = Rect(x: x, y: y, width: min(tileWidth * scale, imageSize.width - x),
                              height: min(tileHeight * scale, imageSize.height - y))
            let size = tileRect(scale: scale, column: column, row: row).size
            var regions = [region.description], sizes = ["\(size.width),\(size.height)", "\(size.width),"]
            if region == Rect(imageSize) { regions.insert("full", at: 0) }
            if size == imageSize { sizes += ["max", "full"] }
            for region in regions {
                for size in sizes {
                    let path = "\(folder)/\(region)/\(size)/0/default.\(tileExtension)"
                    if FileManager.default.fileExists(atPath: path) { return path }
                }
            }
            return nil
        }
    }

    /// The smallest level's first tile: what tells the pyramid's pixel format.
    func sampleTilePath() throws -> String {
        let scale = scaleFactors.last ?? 1
        guard let path = tilePath(scale: scale, column: 0, row: 0) else {
            throw TesseraError.truncated(path: descriptorName, detail: "(the tile of its smallest level is missing)")
        }
        return path
    }

    private var descriptorName: String {
        switch layout {
        case let .deepZoom(files, _): return String(files.dropLast("_files".count)) + ".dzi"
        case let .iiif(folder): return folder + "/info.json"
        }
    }
}

extension TileFolderPyramid: StoredJPEGTiles {
    /// The tile side for clients: the whole tiles are sent as stored only when square, JPEG and without overlap.
    var tileSize: Int { tileWidth }

    /// Whether whole tiles are complete answers to tile requests: square JPEG tiles that repeat no neighbour pixels.
    var storesJPEGTiles: Bool {
        overlap == 0 && tileWidth == tileHeight && ["jpg", "jpeg"].contains(tileExtension.lowercased())
    }

    /// Edge tiles are stored at their size, so every tile is sent as it is.
    func jpeg(scale: Int, column: Int, row: Int) throws -> [UInt8]? {
        guard storesJPEGTiles, scaleFactors.contains(scale), column >= 0, row >= 0 else { return nil }
        let size = levelSize(scale: scale)
        guard column * tileWidth < size.width, row * tileHeight < size.height,
              let path = tilePath(scale: scale, column: column, row: row) else { return nil }
        return try ImageInput.file(path: path).readAll(budget: .default, purpose: "a stored tile")
    }
}
