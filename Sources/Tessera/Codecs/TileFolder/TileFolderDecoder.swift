/// Reads a tile-folder pyramid (Deep Zoom or IIIF level 0) as an image: its levels are the native scales, and a
/// level's rows come from one row of tiles at a time, each tile decoded on demand, its overlap cut off, and only the
/// tiles under the requested columns read; skipped rows cost nothing, as tiles are separate files.
final class TileFolderDecoder: ImageDecoder {
    let size: Size
    let format: PixelFormat
    private let pyramid: TileFolderPyramid
    private let scale: Int
    private let budget: MemoryBudget
    private let name: String
    private var columns: Range<Int>
    private var nextRow = 0
    /// The decoded band of one tile row over `columns`, and the tile row it holds.
    private var band: [UInt8] = []
    private var bandRow = -1

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        let kind = try detectedFormat(input)
        let pyramid = try open(input, format: kind)
        let sample = try ImageSource(path: try pyramid.sampleTilePath()).properties
        let format = pixelFormat(sample)
        var properties = ImageProperties(format: kind, width: pyramid.imageSize.width,
                                         height: pyramid.imageSize.height, channels: format.channelCount, bitDepth: 8,
                                         colorModel: format.isColor ? .rgb : .gray, hasAlpha: format.hasAlpha,
                                         hasICCProfile: sample.hasICCProfile,
                                         levels: pyramid.scaleFactors.map { pyramid.levelSize(scale: $0) })
        properties.tileSize = Size(width: pyramid.tileWidth, height: pyramid.tileHeight)
        return properties
    }

    static func nativeScales(for properties: ImageProperties) -> [Int] {
        properties.levels.indices.map { 1 << $0 }
    }

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        pyramid = try Self.open(input, format: properties.format)
        guard pyramid.scaleFactors.contains(request.scale) else {
            throw TesseraError.invalidArgument("\(input.name): the pyramid has no level at 1/\(request.scale)")
        }
        scale = request.scale
        size = pyramid.levelSize(scale: scale)
        format = Self.pixelFormat(properties)
        budget = request.budget
        name = input.name
        columns = 0..<size.width
    }

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        self.columns = columns
        return columns
    }

    func skipRows(_ count: Int) throws {
        nextRow += count
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        let rowBytes = columns.count * format.bytesPerPixel
        for index in 0..<count {
            let tileRow = (nextRow + index) / pyramid.tileHeight
            if tileRow != bandRow { try loadBand(tileRow) }
            let line = (nextRow + index) - tileRow * pyramid.tileHeight
            band.withUnsafeBytes { source in
                rows.advanced(by: index * bytesPerRow)
                    .copyMemory(from: source.baseAddress!.advanced(by: line * rowBytes), byteCount: rowBytes)
            }
        }
        nextRow += count
    }

    /// Decodes tile row `row` over `columns` into `band`: white where a tile is missing, transparent with alpha.
    private func loadBand(_ row: Int) throws {
        let bytesPerPixel = format.bytesPerPixel, rowBytes = columns.count * bytesPerPixel
        let height = min(pyramid.tileHeight, size.height - row * pyramid.tileHeight)
        try budget.checkRows(width: columns.count, rows: pyramid.tileHeight, format: format, for: "a row of tiles",
                             path: name)
        var blank = format.pixel(fromRGB: [255, 255, 255])
        if format.hasAlpha { blank[blank.count - 1] = 0 }
        band = [UInt8](repeating: 0, count: rowBytes * height)
        for offset in stride(from: 0, to: band.count, by: bytesPerPixel) {
            for channel in 0..<bytesPerPixel { band[offset + channel] = blank[channel] }
        }
        let firstColumn = columns.lowerBound / pyramid.tileWidth, lastColumn = (columns.upperBound - 1) / pyramid.tileWidth
        for column in firstColumn...lastColumn {
            guard let path = pyramid.tilePath(scale: scale, column: column, row: row) else { continue }
            let stored = pyramid.tileRect(scale: scale, column: column, row: row)
            var reader: any ImageReader = try ImageSource(path: path, budget: budget).makeReader()
            guard reader.size == stored.size else {
                throw TesseraError.corrupt(path: path, detail: "the tile is \(reader.size), not \(stored.size) as the pyramid says")
            }
            if reader.format != format { reader = FormatConvertingReader(source: reader, format: format) }
            let tile = try reader.readAll(budget: budget, name: path)
            // The part of the tile inside this band and the requested columns, without overlap.
            let left = max(columns.lowerBound, column * pyramid.tileWidth)
            let right = min(columns.upperBound, (column + 1) * pyramid.tileWidth, size.width)
            let top = row * pyramid.tileHeight
            guard right > left else { continue }
            tile.bytes.withUnsafeBytes { source in
                band.withUnsafeMutableBytes { target in
                    for line in 0..<height {
                        let from = (top + line - stored.y) * tile.bytesPerRow + (left - stored.x) * bytesPerPixel
                        let to = line * rowBytes + (left - columns.lowerBound) * bytesPerPixel
                        target.baseAddress!.advanced(by: to)
                            .copyMemory(from: source.baseAddress!.advanced(by: from), byteCount: (right - left) * bytesPerPixel)
                    }
                }
            }
        }
        bandRow = row
    }

    private static func open(_ input: ImageInput, format: ImageFormat) throws -> TileFolderPyramid {
        guard case let .file(path) = input else {
            throw TesseraError.unsupported(path: input.name, feature: "a tile pyramid is read from its descriptor file, not from bytes")
        }
        return try TileFolderPyramid(path: path, format: format)
    }

    /// 8-bit gray or RGB, with alpha when the tiles have it: what every tile is converted to.
    private static func pixelFormat(_ properties: ImageProperties) -> PixelFormat {
        PixelFormat(properties.colorModel == .gray ? (properties.hasAlpha ? .grayAlpha : .gray)
                                                   : (properties.hasAlpha ? .rgba : .rgb))
    }

    private static func detectedFormat(_ input: ImageInput) throws -> ImageFormat {
        try ImageFormat.detect(input.prefix(ImageFormat.headerLength)) ?? .deepZoom
    }
}
