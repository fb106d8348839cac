/// Reads a tile-folder pyramid (Deep Zoom or IIIF level 0) as an image: its levels are the native scales, and a
/// level's rows come from one row of tiles at a time, each tile decoded on demand, its overlap cut off, and only the
/// tiles under the requested columns read; skipped rows cost nothing, as tiles are separate files.
final class TileFolderDecoder: ImageDecoder, TiledRowDecoder {
    let size: Size
    let format: PixelFormat
    /// The level's tiles, and the band of them being read.
    let bands: TileBandReader
    private let pyramid: TileFolderPyramid
    private let scale: Int
    private let budget: MemoryBudget
    /// The pixel where a tile is missing.
    private let blank: [UInt8]

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        try open(input, budget: .default).properties
    }

    /// The properties, and the pyramid opened once for every decoder of the source (`OpenedTileFolder`): its
    /// descriptor read, and a zip's directory.
    static func open(_ input: ImageInput, budget: MemoryBudget) throws
        -> (properties: ImageProperties, shared: (any SharedDecoderState)?) {
        let pyramid = try Self.pyramid(input, budget: budget)
        let sample = try ImageSource(input: try pyramid.sampleTile()).properties
        let format = pixelFormat(sample)
        let kind: ImageFormat
        switch pyramid.layout {
        case .deepZoom: kind = .deepZoom
        case .iiif: kind = .iiif
        }
        var properties = ImageProperties(format: kind, width: pyramid.imageSize.width,
                                         height: pyramid.imageSize.height, channels: format.channelCount, bitDepth: 8,
                                         colorModel: format.isColor ? .rgb : .gray, hasAlpha: format.hasAlpha,
                                         hasICCProfile: sample.hasICCProfile,
                                         levels: pyramid.scaleFactors.map { pyramid.levelSize(scale: $0) })
        properties.tileSize = Size(width: pyramid.tileWidth, height: pyramid.tileHeight)
        properties.zippedDescriptor = pyramid.zippedDescriptor
        return (properties, OpenedTileFolder(pyramid: pyramid))
    }

    static func nativeScales(for properties: ImageProperties) -> [Int] {
        properties.levels.indices.map { 1 << $0 }
    }

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        pyramid = try (request.shared as? OpenedTileFolder)?.pyramid
            ?? Self.pyramid(input, budget: request.budget)
        guard pyramid.scaleFactors.contains(request.scale) else {
            throw TesseraError.invalidArgument("\(input.name): the pyramid has no level at 1/\(request.scale)")
        }
        scale = request.scale
        size = pyramid.levelSize(scale: scale)
        format = Self.pixelFormat(properties)
        budget = request.budget
        var blank = format.pixel(fromRGB: [255, 255, 255])
        if format.hasAlpha { blank[blank.count - 1] = 0 }
        self.blank = blank
        bands = TileBandReader(grid: TileGrid(imageSize: size,
                                              tileSize: Size(width: pyramid.tileWidth, height: pyramid.tileHeight)),
                               format: format, cropsWithinTiles: true, budget: request.budget,
                               purpose: "a row of tiles", name: input.name)
    }

    /// Decodes tile (`column`, `row`) and copies the part under `columns`, without overlap, into `target`: white
    /// where the tile is missing, transparent with alpha.
    func decodeTile(column: Int, row: Int, columns: Range<Int>, into target: UnsafeMutableRawPointer,
                    bytesPerRow: Int) throws {
        let bytesPerPixel = format.bytesPerPixel
        let rows = bands.grid.pixelRows(ofRow: row)
        guard let stored = try pyramid.tile(scale: scale, column: column, row: row) else {
            blank.withUnsafeBytes { blank in
                for line in 0..<rows.count {
                    for x in 0..<columns.count {
                        (target + line * bytesPerRow + x * bytesPerPixel).copyMemory(from: blank.baseAddress!,
                                                                                      byteCount: bytesPerPixel)
                    }
                }
            }
            return
        }
        let storedRect = pyramid.tileRect(scale: scale, column: column, row: row)
        try decode(tile: ImageSource(input: stored, budget: budget), size: storedRect.size,
                   part: Rect(x: columns.lowerBound - storedRect.x, y: rows.lowerBound - storedRect.y,
                              width: columns.count, height: rows.count),
                   into: target, bytesPerRow: bytesPerRow)
    }

    /// The pyramid `input` is the descriptor or zip of.
    private static func pyramid(_ input: ImageInput, budget: MemoryBudget) throws -> TileFolderPyramid {
        if case .bytes = input {
            throw TesseraError.unsupported(path: input.name, feature: "a tile pyramid is read from its descriptor file, not from bytes")
        }
        return try TileFolderPyramid(input: input, budget: budget)
    }

    /// 8-bit gray or RGB, with alpha when the tiles have it: what every tile is converted to.
    private static func pixelFormat(_ properties: ImageProperties) -> PixelFormat {
        PixelFormat(properties.colorModel == .gray ? (properties.hasAlpha ? .grayAlpha : .gray)
                                                   : (properties.hasAlpha ? .rgba : .rgb))
    }
}

/// A tile pyramid as its `ImageSource` keeps it between reads: its descriptor read, and a zip's directory.
final class OpenedTileFolder: SharedDecoderState {
    let pyramid: TileFolderPyramid

    init(pyramid: TileFolderPyramid) { self.pyramid = pyramid }

    /// A zip's directory, read and indexed (`ZipArchive.heldBytes`).
    var heldByteLimit: Int { pyramid.archive?.heldBytes ?? 0 }
}
