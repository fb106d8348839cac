import CTIFF

/// Decodes a TIFF page (or pyramid level) through libtiff, one row of strips or tiles at a time: memory is
/// bounded by the restricted width times the strip or tile height, and only the strips and tiles that intersect
/// the rows and columns asked for are read.
final class TIFFDecoder: ImageDecoder, TiledRowDecoder {
    let size: Size
    let format: PixelFormat
    /// The strips (one across) or tiles, and the band of them being read.
    let bands: TileBandReader
    private let file: TIFFFile
    private let layout: TIFFLayout
    private let converter: TIFFSampleConverter
    private let request: DecodeRequest
    /// One block as libtiff decodes it, samples interleaved.
    private var block: [UInt8] = []
    /// The bytes of one decoded row of a block.
    private let blockRowBytes: Int
    /// Planar-separate files store each sample in its own blocks: one plane's block, and its row size in bytes.
    private var plane: [UInt8] = []
    private let planeRowBytes: Int
    /// Whether blocks are read through libtiff's RGBA interface (raw, subsampled YCbCr): 8-bit RGBA words,
    /// each block's rows bottom-up.
    private let usesRGBAInterface: Bool

    // MARK: - Properties

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        try open(input, budget: .default).properties
    }

    /// The properties and, for a pyramid of JPEG tiles, the stored tiles' index (`StoredTileReader`), from one
    /// walk of the file's directories read from its bytes (`TIFFDirectoryReader`), without libtiff: opening the
    /// file through libtiff read its first directory whole, a fifth of a new pyramid's info.json, and a decode
    /// opens the file through libtiff anyway.
    static func open(_ input: ImageInput, budget: MemoryBudget) throws
        -> (properties: ImageProperties, shared: (any SharedDecoderState)?) {
        // Pixels are decoded through libtiff: a machine without it says so when the file is opened.
        try CodecLibrary.tiff.require()
        let name = input.name, limit = budget.limit
        // The file read (whose failure, if a read failed, is the error), its directories and its size in bytes.
        let file: (any RandomAccessFile)?, directories: TIFFDirectoryReader?, byteCount: Int
        switch input {
        case let .file(path):
            let opened = try BlockCachedFile(path: path)
            (file, directories, byteCount) = (opened, TIFFDirectoryReader(file: opened, maxValueBytes: limit), opened.byteCount)
        case let .remote(remote):
            (file, directories, byteCount) = (remote, TIFFDirectoryReader(file: remote, maxValueBytes: limit), remote.byteCount)
        case let .bytes(bytes, _):
            (file, directories, byteCount) = (nil, TIFFDirectoryReader(bytes: bytes, maxValueBytes: limit), bytes.count)
        }
        guard let directories else {
            if let failure = file?.failure { throw failure }
            throw byteCount < 8 ? TesseraError.truncated(path: name, detail: "in the TIFF header")
                : TesseraError.corrupt(path: name, detail: "not a TIFF file (its header is not TIFF's)")
        }
        guard let first = directories.directory(at: directories.firstOffset) else {
            if let failure = file?.failure { throw failure }
            throw directories.firstOffset >= UInt64(byteCount)
                ? TesseraError.truncated(path: name,
                                         detail: "before its first directory (the header places it past the end)")
                : TesseraError.corrupt(path: name, detail: "the first TIFF directory cannot be read")
        }
        let layout = try TIFFLayout(first, name: name)
        var index = StoredTileReader.Index()
        let pyramid = TIFFPyramid(directories, full: layout.size) { index.visit($0, fields: $1) }
        let properties = ImageProperties(format: .tiff, width: layout.width, height: layout.height,
                                         channels: layout.samplesPerPixel, bitDepth: layout.bitsPerSample,
                                         colorModel: layout.colorModel, hasAlpha: layout.alphaSample != nil,
                                         orientation: layout.orientation, hasICCProfile: first.hasICCProfile,
                                         pageCount: max(1, directories.pageCount), levels: pyramid.levels.map(\.size),
                                         fileSize: byteCount)
        return (properties, StoredTileReader(input: input, index: index, pyramid: pyramid))
    }

    static func nativeScales(for properties: ImageProperties) -> [Int] {
        TIFFPyramid.scales(full: properties.size, levels: properties.levels)
    }

    // MARK: - Opening

    /// A level whose JPEG tiles the source keeps the index of is decoded from them (`StoredTileDecoder`); any
    /// other page or level through libtiff.
    static func makeDecoder(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws
        -> any RowDecoder {
        if let tiles = request.shared as? StoredTileReader,
           let decoder = StoredTileDecoder(tiles: tiles, properties: properties, request: request, name: input.name) {
            return decoder
        }
        return try TIFFDecoder(input: input, properties: properties, request: request)
    }

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        let file = try TIFFFile(reading: input, budget: request.budget)
        let name = input.name
        if request.scale == 1 {
            try file.selectPage(request.page)
        } else {
            let pyramid = TIFFPyramid(file.directories, full: properties.size)
            guard request.page == 0, let level = pyramid.levels.first(where: {
                TIFFPyramid.matches($0.size, full: properties.size, factor: request.scale)
            }) else {
                throw TesseraError.invalidArgument("\(name): no pyramid level at 1/\(request.scale) scale")
            }
            switch level.location {
            case let .page(index): try file.selectPage(index)
            case let .subIFD(offset): try file.selectSubIFD(at: offset)
            }
        }
        let layout = try TIFFLayout(file)
        // libtiff's JPEG codec converts YCbCr to RGB itself; other YCbCr storage (raw, old-style JPEG) is
        // subsampled, which libtiff's RGBA interface upsamples and converts.
        usesRGBAInterface = layout.photometric == .ycbcr && Int32(layout.compression) != COMPRESSION_JPEG
        if usesRGBAInterface {
            var reason = [CChar](repeating: 0, count: 1024)
            guard TIFFRGBAImageOK(file.handle, &reason) != 0 else {
                let message = reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
                throw TesseraError.unsupported(path: name, feature: String(decoding: message, as: UTF8.self))
            }
        } else if layout.photometric == .ycbcr {
            try file.set(TIFFTAG_JPEGCOLORMODE, Int(JPEGCOLORMODE_RGB))
        }
        let format = usesRGBAInterface ? .rgb8 : layout.outputFormat
        let converter = try TIFFSampleConverter(layout: layout, colorMap: file.colorMap(entries: 1 << layout.bitsPerSample),
                                                name: name)
        // For planar-separate files libtiff's sizes are those of one sample's plane.
        let planes = layout.planarSeparate ? layout.samplesPerPixel : 1
        let blockBytes = layout.isTiled ? TIFFTileSize64(file.handle) : TIFFStripSize64(file.handle)
        let rowBytes = layout.isTiled ? TIFFTileRowSize64(file.handle) : TIFFScanlineSize64(file.handle)
        guard blockBytes > 0, rowBytes > 0, blockBytes <= UInt64(Int.max / planes), rowBytes <= blockBytes else {
            throw file.readFailure("computing the strip or tile size")
        }
        // The rows libtiff decodes must hold the pixels the layout says they do (subsampled YCbCr rows hold fewer;
        // the RGBA interface sizes its own output).
        let (rowBits, overflow) = layout.blockWidth.multipliedReportingOverflow(
            by: layout.samplesPerPixel / planes * layout.bitsPerSample)
        guard usesRGBAInterface || (!overflow && Int(rowBytes) >= (rowBits + 7) / 8
                                    && Int(blockBytes) / Int(rowBytes) >= layout.blockHeight) else {
            throw TesseraError.corrupt(path: name, detail: "strip or tile size does not match the image layout")
        }
        try request.budget.check(Int(blockBytes) * planes, for: "one TIFF strip or tile", path: name)
        try request.budget.checkRows(width: layout.width, rows: layout.blockHeight, format: format,
                                     for: "one row of TIFF strips or tiles", path: name)
        self.file = file
        self.layout = layout
        self.format = format
        self.converter = converter
        self.request = request
        self.size = layout.size
        bands = TileBandReader(grid: TileGrid(imageSize: layout.size,
                                              tileSize: Size(width: layout.blockWidth, height: layout.blockHeight)),
                               format: format, cropsWithinTiles: true, budget: request.budget,
                               purpose: "one row of TIFF strips or tiles", name: name)
        if usesRGBAInterface {
            blockRowBytes = layout.blockWidth * 4
            planeRowBytes = 0
            try request.budget.checkRows(width: layout.blockWidth, rows: layout.blockHeight, format: .rgba8,
                                         for: "one TIFF strip or tile as RGBA", path: name)
            block = [UInt8](repeating: 0, count: blockRowBytes * layout.blockHeight)
        } else if planes == 1 {
            blockRowBytes = Int(rowBytes)
            planeRowBytes = 0
            block = [UInt8](repeating: 0, count: Int(blockBytes))
        } else {
            // Sub-byte samples come one to a pixel, so planar images here have 8- or 16-bit samples.
            blockRowBytes = layout.blockWidth * layout.samplesPerPixel * layout.bitsPerSample / 8
            planeRowBytes = Int(rowBytes)
            block = [UInt8](repeating: 0, count: blockRowBytes * layout.blockHeight)
            plane = [UInt8](repeating: 0, count: Int(blockBytes))
        }
    }

    // MARK: - Tiles

    /// Decodes the strip or tile (`column`, `row`) and converts the part under `columns` into `target`.
    func decodeTile(column: Int, row: Int, columns: Range<Int>, into target: UnsafeMutableRawPointer,
                    bytesPerRow: Int) throws {
        let left = column * layout.blockWidth, top = row * layout.blockHeight
        let rows = bands.grid.pixelRows(ofRow: row).count
        if usesRGBAInterface {
            try readRGBABlock(at: left, top)
        } else if plane.isEmpty {
            try block.withUnsafeMutableBytes { try readBlock(at: left, top, sample: 0, into: $0) }
        } else {
            for sample in 0..<layout.samplesPerPixel {
                try plane.withUnsafeMutableBytes { try readBlock(at: left, top, sample: sample, into: $0) }
                interleave(sample: sample, rows: rows)
            }
        }
        let first = columns.lowerBound - left
        block.withUnsafeBytes { block in
            for line in 0..<rows {
                let output = target + line * bytesPerRow
                if usesRGBAInterface {
                    // Tiles come full height and strips as many rows as they hold, either bottom-up.
                    let stored = (layout.isTiled ? layout.blockHeight : rows) - 1 - line
                    Self.dropAlpha(block.baseAddress! + stored * blockRowBytes + first * 4, count: columns.count,
                                   into: output)
                } else {
                    converter.convert(block.baseAddress! + line * blockRowBytes, first: first, count: columns.count,
                                      into: output)
                }
            }
        }
    }

    /// Reads the strip or tile holding pixel (`x`, `y`) through libtiff's RGBA interface into `block`.
    private func readRGBABlock(at x: Int, _ y: Int) throws {
        file.clearMessage()
        let result = block.withUnsafeMutableBytes { buffer in
            let raster = buffer.baseAddress!.assumingMemoryBound(to: UInt32.self)
            return layout.isTiled
                ? TIFFReadRGBATileExt(file.handle, UInt32(x), UInt32(y), raster, 1)
                : TIFFReadRGBAStripExt(file.handle, UInt32(y), raster, 1)
        }
        if result == 0 && !request.allowPartial {
            throw file.readFailure("at row \(y.grouped) of \(size.height.grouped)")
        }
    }

    /// Copies the RGB of `count` RGBA pixels.
    private static func dropAlpha(_ source: UnsafeRawPointer, count: Int, into target: UnsafeMutableRawPointer) {
        for index in 0..<count {
            target.advanced(by: 3 * index).copyMemory(from: source.advanced(by: 4 * index), byteCount: 3)
        }
    }

    /// Copies one sample's plane into its place among the interleaved samples of `block`.
    private func interleave(sample: Int, rows: Int) {
        let sampleBytes = layout.bitsPerSample / 8, pixelBytes = layout.samplesPerPixel * sampleBytes
        let width = layout.blockWidth
        plane.withUnsafeBytes { plane in
            block.withUnsafeMutableBytes { block in
                for row in 0..<rows {
                    let source = plane.baseAddress! + row * planeRowBytes
                    let target = block.baseAddress! + row * blockRowBytes + sample * sampleBytes
                    for x in 0..<width {
                        (target + x * pixelBytes).copyMemory(from: source + x * sampleBytes, byteCount: sampleBytes)
                    }
                }
            }
        }
    }

    /// Reads the strip or tile holding pixel (`x`, `y`) of `sample`'s plane (0 unless planar-separate) into
    /// `buffer`; a truncated block is zero-filled when partial results are allowed.
    private func readBlock(at x: Int, _ y: Int, sample: Int, into buffer: UnsafeMutableRawBufferPointer) throws {
        let number = layout.isTiled
            ? TIFFComputeTile(file.handle, UInt32(x), UInt32(y), 0, UInt16(sample))
            : TIFFComputeStrip(file.handle, UInt32(y), UInt16(sample))
        let context = "at row \(y.grouped) of \(size.height.grouped)"
        var truncated = false
        let stored = file.byteRange(ofBlock: number)
        let (end, overflow) = stored.offset.addingReportingOverflow(stored.count)
        if overflow || end > UInt64(file.byteCount) {
            truncated = true
            if !request.allowPartial {
                throw TesseraError.truncated(path: file.name, detail: "\(context) (a strip or tile lies past the end of the file)")
            }
        }
        file.clearMessage()
        if request.allowPartial { _ = buffer.initializeMemory(as: UInt8.self, repeating: 0) }
        let count = tmsize_t(buffer.count)
        let result = layout.isTiled
            ? TIFFReadEncodedTile(file.handle, number, buffer.baseAddress, count)
            : TIFFReadEncodedStrip(file.handle, number, buffer.baseAddress, count)
        if result < 0 && !(truncated && request.allowPartial) {
            throw file.readFailure(context, truncated: truncated)
        }
    }
}
