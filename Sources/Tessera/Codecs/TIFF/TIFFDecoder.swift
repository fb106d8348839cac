import CTIFF

/// Decodes a TIFF page (or pyramid level) through libtiff, one row of strips or tiles at a time: memory is
/// bounded by the restricted width times the strip or tile height, and only the strips and tiles that intersect
/// the rows and columns asked for are read.
final class TIFFDecoder: ImageDecoder {
    let size: Size
    let format: PixelFormat
    private let file: TIFFFile
    private let layout: TIFFLayout
    private let converter: TIFFSampleConverter
    private let request: DecodeRequest
    private var columns: Range<Int>
    private var nextRow = 0
    /// The decoded rows of one row of blocks (strip or tiles), restricted columns only, in `format`.
    private var band: [UInt8] = []
    private var bandIndex: Int?
    /// One block as libtiff decodes it.
    private var block: [UInt8] = []
    /// The bytes of one decoded row of a block.
    private let blockRowBytes: Int

    // MARK: - Properties

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        let file = try TIFFFile(reading: input, budget: .default)
        let pageCount = file.directoryCount
        let pyramid = try TIFFPyramid(file, pageCount: pageCount)
        let layout = try TIFFLayout(file)
        return ImageProperties(format: .tiff, width: layout.width, height: layout.height,
                               channels: layout.samplesPerPixel, bitDepth: layout.bitsPerSample,
                               colorModel: layout.colorModel, hasAlpha: layout.alphaSample != nil,
                               orientation: layout.orientation, hasICCProfile: file.hasICCProfile,
                               pageCount: max(1, pageCount), levels: pyramid.levels.map(\.size),
                               fileSize: file.byteCount)
    }

    static func nativeScales(for properties: ImageProperties) -> [Int] {
        TIFFPyramid.scales(full: properties.size, levels: properties.levels)
    }

    // MARK: - Opening

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        let file = try TIFFFile(reading: input, budget: request.budget)
        let name = input.name
        if request.scale == 1 {
            try file.selectPage(request.page)
        } else {
            let wanted = reducedSize(properties.size, by: request.scale)
            let pyramid = try TIFFPyramid(file, pageCount: file.directoryCount)
            guard request.page == 0, let level = pyramid.levels.first(where: { $0.size == wanted }) else {
                throw TesseraError.invalidArgument("\(name): no pyramid level at 1/\(request.scale) scale")
            }
            switch level.location {
            case let .page(index): try file.selectPage(index)
            case let .subIFD(offset): try file.selectSubIFD(at: offset)
            }
        }
        let layout = try TIFFLayout(file)
        if layout.planarSeparate && layout.samplesPerPixel > 1 {
            throw TesseraError.unsupported(path: name, feature: "planar-separate TIFF (one plane per channel);"
                                           + " rewrite it contiguous, e.g. `tiffcp -p contig`")
        }
        if layout.photometric == .ycbcr {
            // libtiff's JPEG codec converts YCbCr to RGB itself; other YCbCr storage is subsampled raw data.
            guard Int32(layout.compression) == COMPRESSION_JPEG else {
                throw TesseraError.unsupported(path: name, feature: "YCbCr TIFF without JPEG compression")
            }
            try file.set(TIFFTAG_JPEGCOLORMODE, Int(JPEGCOLORMODE_RGB))
        }
        let format = layout.outputFormat
        let converter = try TIFFSampleConverter(layout: layout, colorMap: file.colorMap(entries: 1 << layout.bitsPerSample),
                                                name: name)
        let blockBytes = layout.isTiled ? TIFFTileSize64(file.handle) : TIFFStripSize64(file.handle)
        let rowBytes = layout.isTiled ? TIFFTileRowSize64(file.handle) : TIFFScanlineSize64(file.handle)
        guard blockBytes > 0, rowBytes > 0, blockBytes <= UInt64(Int.max), rowBytes <= blockBytes else {
            throw file.failure("invalid strip or tile size")
        }
        // The rows libtiff decodes must hold the pixels the layout says they do.
        let (rowBits, overflow) = layout.blockWidth.multipliedReportingOverflow(
            by: layout.samplesPerPixel * layout.bitsPerSample)
        guard !overflow, Int(rowBytes) >= (rowBits + 7) / 8,
              Int(blockBytes) / Int(rowBytes) >= layout.blockHeight else {
            throw TesseraError.corrupt(path: name, detail: "strip or tile size does not match the image layout")
        }
        try request.budget.check(Int(blockBytes), for: "one TIFF strip or tile", path: name)
        try request.budget.checkRows(width: layout.width, rows: layout.blockHeight, format: format,
                                     for: "one row of TIFF strips or tiles", path: name)
        self.file = file
        self.layout = layout
        self.format = format
        self.converter = converter
        self.request = request
        self.size = layout.size
        self.columns = 0..<layout.width
        self.blockRowBytes = Int(rowBytes)
        self.block = [UInt8](repeating: 0, count: Int(blockBytes))
    }

    // MARK: - Rows

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        guard columns.lowerBound >= 0, columns.upperBound <= size.width, !columns.isEmpty else {
            throw TesseraError.invalidArgument("\(file.name): columns \(columns) outside the \(size.width)-pixel width")
        }
        self.columns = columns
        band = []
        bandIndex = nil
        return columns
    }

    func skipRows(_ count: Int) throws {
        // Rows are addressed by block, so skipping is only moving the position: nothing above is decoded.
        nextRow = min(size.height, nextRow + max(0, count))
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        guard count >= 0, nextRow + count <= size.height else {
            throw TesseraError.invalidArgument("\(file.name): rows past the bottom of the image")
        }
        let rowBytes = columns.count * format.bytesPerPixel
        var done = 0
        while done < count {
            let index = nextRow / layout.blockHeight
            if bandIndex != index { try loadBand(index) }
            let top = index * layout.blockHeight
            let available = min(count - done, top + layout.blockHeight - nextRow)
            band.withUnsafeBytes { band in
                for row in 0..<available {
                    rows.advanced(by: (done + row) * bytesPerRow)
                        .copyMemory(from: band.baseAddress! + (nextRow - top + row) * rowBytes, byteCount: rowBytes)
                }
            }
            done += available
            nextRow += available
        }
    }

    /// Decodes the blocks of block row `index` that intersect the restricted columns into `band`.
    private func loadBand(_ index: Int) throws {
        let top = index * layout.blockHeight
        let rows = min(layout.blockHeight, size.height - top)
        let pixelBytes = format.bytesPerPixel, bandRowBytes = columns.count * pixelBytes
        if band.count != bandRowBytes * layout.blockHeight {
            band = [UInt8](repeating: 0, count: bandRowBytes * layout.blockHeight)
        }
        bandIndex = nil
        var left = columns.lowerBound / layout.blockWidth * layout.blockWidth
        while left < columns.upperBound {
            let blockNumber = layout.isTiled
                ? TIFFComputeTile(file.handle, UInt32(left), UInt32(top), 0, 0)
                : TIFFComputeStrip(file.handle, UInt32(top), 0)
            try readBlock(blockNumber, firstRow: top)
            let from = max(left, columns.lowerBound), to = min(left + layout.blockWidth, columns.upperBound)
            block.withUnsafeBytes { block in
                band.withUnsafeMutableBytes { band in
                    for row in 0..<rows {
                        converter.convert(block.baseAddress! + row * blockRowBytes, first: from - left, count: to - from,
                                          into: band.baseAddress! + row * bandRowBytes + (from - columns.lowerBound) * pixelBytes)
                    }
                }
            }
            left += layout.blockWidth
        }
        bandIndex = index
    }

    /// Reads strip or tile `number` into `block`; a truncated block is zero-filled when partial results are allowed.
    private func readBlock(_ number: UInt32, firstRow: Int) throws {
        let context = "at row \(firstRow.grouped) of \(size.height.grouped)"
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
        if request.allowPartial { block.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let count = tmsize_t(block.count)
        let result = block.withUnsafeMutableBytes { buffer in
            layout.isTiled
                ? TIFFReadEncodedTile(file.handle, number, buffer.baseAddress, count)
                : TIFFReadEncodedStrip(file.handle, number, buffer.baseAddress, count)
        }
        if result < 0 && !(truncated && request.allowPartial) {
            throw file.failure(context, truncated: truncated)
        }
    }
}
