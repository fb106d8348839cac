import Foundation

/// A pyramid stored as one image file per tile, read through its descriptor: a Deep Zoom `NAME.dzi` beside its
/// `NAME_files/{level}/{column}_{row}.{format}`, or a IIIF level-0 folder's `info.json` beside its
/// `{region}/{size}/0/default.{format}` files (as Tessera, libvips and other static tilers write them), in a
/// folder, on a web server, or packed in one zip file (`tile --container zip`, or any zip of such a folder).
/// Levels are power-of-two reductions of the full image, sizes rounded up; a tile left out of the folder (a blank
/// tile skipped when it was written) reads as white.
struct TileFolderPyramid: Sendable {
    enum Layout: Sendable {
        /// Deep Zoom: the folder of `name.dzi` and the number of its largest level.
        case deepZoom(folder: String, name: String, topLevel: Int)
        /// IIIF level 0: the folder that holds `info.json`, and how its tiles are named.
        case iiif(folder: String, geometry: IIIFTileGeometry)
    }

    /// Whether the folder is on a web server (its tiles fetched by URL, a tile the server has not read as blank).
    let remote: Bool
    /// The zip the pyramid is packed in, when it is: its folders are then paths inside it ("" for its top).
    let archive: ZipArchive?

    let layout: Layout
    /// The full-resolution size in pixels.
    let imageSize: Size
    /// The tile size in pixels, without overlap.
    let tileWidth: Int
    let tileHeight: Int
    /// Pixels each tile repeats of its neighbours on interior edges (Deep Zoom only).
    let overlap: Int
    /// What errors call the descriptor: its path, or the zip's and its path inside.
    let descriptorName: String
    /// The descriptor's path inside the zip (`archive`); nil for a folder.
    let zippedDescriptor: String?
    /// The tiles' file extension (`jpg`, `png`, ...).
    let tileExtension: String
    /// The reductions that have a level (1, 2, 4, ...), ascending.
    let scaleFactors: [Int]

    /// The largest tile side a descriptor may claim, and the most levels.
    private static let maxTileSide = 1 << 14
    /// The most bytes a descriptor is read of: a few hundred is usual, a megabyte is more than any real one.
    private static let maxDescriptorBytes = 1 << 20

    /// Reads the descriptor `input` (`.dzi` XML or IIIF `info.json`, a file or a URL), or the zip `input` whose
    /// descriptor is the one nearest its top, its directory and each tile read from it within `budget`; the
    /// descriptor's content tells which layout (Deep Zoom unless it reads as IIIF's).
    init(input: ImageInput, budget: MemoryBudget) throws {
        let data: [UInt8], path: String, format: ImageFormat
        // The first bytes tell a zip, and hold a descriptor of their size or less whole.
        let head = try input.prefix(ImageFormat.headerLength)
        if ZipArchive.starts(head) {
            let archive = try ZipArchive(input: input, budget: budget)
            path = try Self.descriptor(in: archive)
            descriptorName = input.name + "/" + path
            data = Array(try archive.data(of: path)!.prefix(Self.maxDescriptorBytes))
            guard let inner = ImageFormat.detect(data), inner.isTileFolder else {
                throw TesseraError.corrupt(path: descriptorName, detail: "not a Deep Zoom or IIIF descriptor")
            }
            (self.archive, zippedDescriptor, format) = (archive, path, inner)
        } else {
            data = head.count < ImageFormat.headerLength ? head : try input.prefix(Self.maxDescriptorBytes)
            (path, self.archive, zippedDescriptor) = (input.name, nil, nil)
            format = ImageFormat.detect(data) ?? .deepZoom
            descriptorName = path
        }
        let folder = archive == nil ? RemoteFile.split(path).parent
            : path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        if case .remote = input { remote = true } else { remote = false }
        switch format {
        case .deepZoom:
            let descriptor = try DeepZoomLayout.Descriptor(xml: data, path: descriptorName)
            imageSize = descriptor.imageSize
            tileWidth = descriptor.tileSize
            tileHeight = descriptor.tileSize
            overlap = descriptor.overlap
            tileExtension = descriptor.format
            let topLevel = DeepZoomLayout.topLevel(of: imageSize)
            scaleFactors = (0...topLevel).map { 1 << $0 }
            let name = (RemoteFile.split(path).name as NSString).deletingPathExtension
            layout = .deepZoom(folder: folder, name: name, topLevel: topLevel)
        default:
            let info = try IIIFLayout.Info(json: data, path: descriptorName)
            imageSize = info.geometry.imageSize
            tileWidth = info.geometry.tileWidth
            tileHeight = info.geometry.tileHeight
            overlap = 0
            tileExtension = info.format
            scaleFactors = info.scaleFactors
            layout = .iiif(folder: folder, geometry: info.geometry)
        }
        guard imageSize.width > 0, imageSize.height > 0, (1...Self.maxTileSide).contains(tileWidth),
              (1...Self.maxTileSide).contains(tileHeight), (0..<tileWidth).contains(overlap), scaleFactors.first == 1,
              tileExtension.allSatisfy({ $0.isLetter || $0.isNumber }) else {
            throw TesseraError.corrupt(path: descriptorName,
                                       detail: "the pyramid's size, tile size, overlap or levels are out of range")
        }
    }

    /// The path in `archive` of the pyramid's descriptor: the `.dzi` or `info.json` nearest its top, when no other
    /// is as near.
    private static func descriptor(in archive: ZipArchive) throws -> String {
        let descriptors = archive.entries.keys.filter(isDescriptor)
        let depth = { (path: String) in path.utf8.filter { $0 == UInt8(ascii: "/") }.count }
        guard let top = descriptors.map(depth).min() else {
            throw TesseraError.unsupported(path: archive.name,
                                           feature: "a zip that holds no Deep Zoom .dzi or IIIF info.json pyramid")
        }
        let nearest = descriptors.filter { depth($0) == top }.sorted()
        guard nearest.count == 1 else {
            throw TesseraError.unsupported(path: archive.name, feature: "a zip of \(nearest.count) pyramids ("
                                           + nearest.prefix(3).joined(separator: ", ") + "): one is read per zip")
        }
        return nearest[0]
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

    /// Tile `(column, row)` of the level at reduction `scale`, or nil when the folder (or the server) has none.
    func tile(scale: Int, column: Int, row: Int) throws -> ImageInput? {
        let candidates: [String]
        switch layout {
        case let .deepZoom(folder, name, topLevel):
            let level = topLevel - scale.trailingZeroBitCount
            candidates = [Self.path(folder, DeepZoomLayout.tilePath(name: name, level: level, column: column, row: row,
                                                                    format: tileExtension))]
        case let .iiif(folder, geometry):
            candidates = geometry.storedPaths(scale: scale, column: column, row: row, format: tileExtension)
                .map { Self.path(folder, $0) }
        }
        for location in candidates {
            if let archive {
                if let bytes = try archive.data(of: location) {
                    return .bytes(bytes, name: archive.name + "/" + location)
                }
            } else if remote {
                if let file = try RemoteFile.existing(url: location) { return .remote(file) }
            } else if FileManager.default.fileExists(atPath: location) {
                return .file(path: location)
            }
        }
        return nil
    }

    /// Whether the path in a zip names a pyramid's descriptor (a `.dzi` or an `info.json`); not a hidden file, nor
    /// one of the resource forks macOS packs into zips (`__MACOSX/`, `._NAME`).
    fileprivate static func isDescriptor(_ path: String) -> Bool {
        let name = RemoteFile.split(path).name
        guard !isHidden(path) else { return false }
        return name == "info.json" || name.lowercased().hasSuffix(".dzi") && name.count > 4
    }

    /// Whether the path in a zip is a hidden file or under macOS's `__MACOSX/`.
    fileprivate static func isHidden(_ path: String) -> Bool {
        RemoteFile.split(path).name.hasPrefix(".") || path.hasPrefix("__MACOSX/")
    }

    /// `relative` in `folder` ("" for the top of a zip).
    private static func path(_ folder: String, _ relative: String) -> String {
        folder.isEmpty ? relative : folder + "/" + relative
    }

    /// The smallest level's first tile: what tells the pyramid's pixel format.
    func sampleTile() throws -> ImageInput {
        let scale = scaleFactors.last ?? 1
        guard let tile = try tile(scale: scale, column: 0, row: 0) else {
            throw TesseraError.truncated(path: descriptorName, detail: "(the tile of its smallest level is missing)")
        }
        return tile
    }
}

extension TileFolderPyramid: StoredJPEGTiles {
    /// The tile side for clients: the whole tiles are sent as stored only when square, JPEG and without overlap.
    var tileSize: Int { tileWidth }

    /// Whether whole tiles are complete answers to tile requests: square JPEG tiles that repeat no neighbour pixels.
    var storesJPEGTiles: Bool {
        overlap == 0 && tileWidth == tileHeight && ["jpg", "jpeg"].contains(tileExtension.lowercased())
    }

    /// A tile folder has no index: tiles are found by name.
    var indexByteCount: Int { 0 }

    /// The size of the level at reduction `scale`, when the folder has it and its tiles are JPEG answers.
    func storedLevelSize(scale: Int) -> Size? {
        storesJPEGTiles && scaleFactors.contains(scale) ? levelSize(scale: scale) : nil
    }

    /// Edge tiles are stored at their size, so a tile asked for at its size is sent as it is; a pixel or two off,
    /// it is cut or stretched in its coefficients (`JPEGCoefficientCrop`).
    func jpeg(scale: Int, column: Int, row: Int, size: Size) throws -> [UInt8]? {
        guard answers(scale: scale, column: column, row: row, size: size),
              let (stored, content) = try storedJPEG(scale: scale, column: column, row: row) else { return nil }
        guard size != content else { return stored }
        return try JPEGCoefficientCrop.topLeft(of: stored, size: size,
                                               name: "the stored tile \(column),\(row) at 1/\(scale)")
    }

    /// The tile's file as stored (edge tiles at their size) and that size.
    func storedJPEG(scale: Int, column: Int, row: Int) throws -> (jpeg: [UInt8], content: Size)? {
        guard let content = storedContent(scale: scale, column: column, row: row),
              let tile = try tile(scale: scale, column: column, row: row) else { return nil }
        return (try tile.readAll(budget: .default, purpose: "a stored tile"), content)
    }
}

extension ImageFormat {
    /// Whether the zip at `path` looks like a Deep Zoom or IIIF pyramid packed whole, told from the names of its
    /// first entries (read from their local headers, not from its directory at the end): a descriptor, a Deep Zoom
    /// `NAME_files/` folder, or a IIIF tile's `.../default.EXT`. What a server lists as an image, where other zips
    /// (archives of anything else) are not; any zip is still read as the pyramid it holds when asked for.
    public static func zipLooksLikePyramid(atPath path: String) -> Bool {
        let entries = (try? ZipArchive.localEntries(of: PositionedInput(.file(path: path)), limit: 8)) ?? []
        return entries.contains { local in
            let entry = String(decoding: local.name, as: UTF8.self)
            return TileFolderPyramid.isDescriptor(entry) || !TileFolderPyramid.isHidden(entry)
                && (entry.contains("_files/") || RemoteFile.split(entry).name.hasPrefix("default."))
        }
    }
}
