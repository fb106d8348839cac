import COpenJPEG
import Foundation

/// Decodes JPEG 2000 (JP2, JPH and raw codestreams, HTJ2K included) through OpenJPEG, a band of rows at a time:
/// a band is one row of codestream tiles (or, untiled, as many rows as the memory budget allows), decoded with
/// `opj_set_decode_area` over only the columns asked for, so OpenJPEG reads only the tiles and code-blocks that
/// meet them; or, given a `DecodedTileCache`, from whole codestream tiles decoded once and kept there. Native
/// scales are the resolution levels: 1/2^r discards r levels without decoding them.
final class JPEG2000Decoder: ImageDecoder {
    let size: Size
    let format: PixelFormat
    private let codestream: JPEG2000Codestream
    private let layout: JPEG2000Codestream.Layout
    private let reduction: Int
    private let request: DecodeRequest
    /// The decompressor of the area decodes: reused for every band of a single-tile image; other images take a
    /// new one a band.
    private var codec: JPEG2000Codec?
    /// Whether bands are put together from whole tiles in `request.tileCache`.
    private var fromCachedTiles: Bool
    /// Component 0's first column and row at this reduction, in its own reduced coordinates.
    private let origin: (x: Int, y: Int)
    /// The first row of each codestream tile row, then the image's height.
    private var tileRowStarts: [Int] = []
    /// The first row of each band, then the image's height.
    private var bandStarts: [Int] = []
    private var columns: Range<Int>
    /// The rows that will be read: bands are cut to them.
    private var rows: Range<Int>
    private var nextRow = 0
    /// The loaded band: its index and rows, `columns.count` pixels wide in `format`.
    private var band: [UInt8] = []
    private var bandIndex: Int?
    private var started = false
    /// The error a decode failed with: a decompressor that failed is in no state to decode again.
    private var failure: Error?

    static func sharedState(input: ImageInput, properties: ImageProperties) -> (any SharedDecoderState)? {
        JPEG2000Codestream(input: input, properties: properties)
    }

    // MARK: - Properties

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        let source = try JPEG2000ByteSource(input)
        guard let container = JPEG2000Codec.container(of: source.bytes(at: 0, count: 12)) else {
            throw TesseraError.unknownFormat(path: input.name)
        }
        let boxes = container == .jp2 ? try JP2Boxes(reading: source) : nil
        let codec = try JPEG2000Codec(source: source, container: container)
        let image = codec.image.pointee
        let (info, style) = try codec.structure()
        let comps = (0..<Int(image.numcomps)).map { image.comps[$0] }
        let size = Self.reducedSize(image, reduction: 0)
        let levels = (0..<Int(style.numresolutions)).map { Self.reducedSize(image, reduction: $0) }
            .prefix { $0.width > 0 && $0.height > 0 }
        let palette = boxes?.paletteDepths ?? []
        let precisions = palette.isEmpty ? comps.map { Int($0.prec) } : palette
        let alphaCount = boxes?.alphaChannels ?? 0
        let alpha = precisions.indices.map { $0 >= precisions.count - alphaCount }
        let channels = JPEG2000Channels(precisions: precisions, alpha: alpha, sYCC: JPEG2000Channels.impliesYCC(image))
        let progression = ["LRCP", "RLCP", "RPCL", "PCRL", "CPRL"]
        let order = Int(info.m_default_tile_info.prg.rawValue)
        let resolutions = Int(style.numresolutions)
        // Without precincts in the coding style, each resolution is one precinct of the maximum size.
        let definesPrecincts = style.csty & 0x01 != 0
        let precincts = withUnsafeBytes(of: style.prcw) { widths in
            withUnsafeBytes(of: style.prch) { heights in
                (0..<resolutions).map {
                    definesPrecincts
                        ? Size(width: 1 << Int(widths.load(fromByteOffset: $0 * 4, as: UInt32.self)),
                               height: 1 << Int(heights.load(fromByteOffset: $0 * 4, as: UInt32.self)))
                        : Size(width: 1 << 15, height: 1 << 15)
                }
            }
        }
        let hasICC = image.icc_profile_len > 0 || boxes?.hasICCProfile == true
        let structure = JPEG2000Structure(
            container: container == .codestream ? "codestream" : (boxes?.brand ?? "").trimmingCharacters(in: .whitespaces).uppercased(),
            components: comps.count, precision: comps.map { Int($0.prec) }.max() ?? 0,
            isSigned: comps.contains { $0.sgnd != 0 }, resolutionLevels: levels.count,
            tileSize: Size(width: Int(info.tdx), height: Int(info.tdy)), tileColumns: Int(info.tw),
            tileRows: Int(info.th), codeBlockSize: Size(width: 1 << Int(style.cblkw), height: 1 << Int(style.cblkh)),
            precinctSizes: precincts, layers: Int(info.m_default_tile_info.numlayers),
            progressionOrder: progression.indices.contains(order) ? progression[order] : "unknown",
            isReversible: style.qmfbid == 1, isHighThroughput: style.cblksty & 0x40 != 0,
            colorSpace: colorSpaceName(boxes?.enumeratedColorSpace, image.color_space,
                                       hasICC: hasICC && boxes?.enumeratedColorSpace == nil))
        var properties = ImageProperties(
            format: .jpeg2000, width: size.width, height: size.height, channels: comps.count,
            bitDepth: channels.components.map { precisions[$0] }.max() ?? 8,
            colorModel: palette.isEmpty ? (channels.format.isColor ? .rgb : .gray) : .palette,
            hasAlpha: channels.format.hasAlpha, hasICCProfile: hasICC, levels: Array(levels),
            fileSize: source.length)
        properties.jpeg2000 = structure
        return properties
    }

    static func nativeScales(for properties: ImageProperties) -> [Int] {
        (0..<(properties.jpeg2000?.resolutionLevels ?? 1)).map { 1 << $0 }
    }

    /// The wavelet's low-pass filters are centred on the even samples, so a level reduced `scale` times holds the
    /// image at full-resolution pixels 0, `scale`, `2 * scale`, ... (for an image at the reference grid's origin,
    /// as nearly every file is), not at the blocks' centres: `(scale - 1) / 2` pixels early.
    static func sampleLag(atScale scale: Int) -> Double { Double(scale - 1) / 2 }

    /// Each level is the low-pass band of the wavelet's analysis filters (9/7 or 5/3), an anti-aliasing filter
    /// of its own.
    static var reductionsAreFiltered: Bool { true }

    /// The colour space's name: the colour box's enumerated space where there is one, else OpenJPEG's.
    private static func colorSpaceName(_ enumerated: Int?, _ space: OPJ_COLOR_SPACE, hasICC: Bool) -> String {
        if hasICC { return "ICC" }
        switch enumerated {
        case 16: return "sRGB"
        case 17: return "gray"
        case 18: return "sYCC"
        case 12: return "CMYK"
        case 24: return "e-sYCC"
        case let number?: return "enumerated \(number)"
        case nil: break
        }
        switch space {
        case OPJ_CLRSPC_SRGB: return "sRGB"
        case OPJ_CLRSPC_GRAY: return "gray"
        case OPJ_CLRSPC_SYCC: return "sYCC"
        case OPJ_CLRSPC_EYCC: return "e-sYCC"
        case OPJ_CLRSPC_CMYK: return "CMYK"
        default: return "unspecified"
        }
    }

    /// Component 0's size after discarding `reduction` resolution levels: what the decoded image measures.
    private static func reducedSize(_ image: opj_image_t, reduction: Int) -> Size {
        let dx = Int(image.comps[0].dx), dy = Int(image.comps[0].dy), scale = 1 << reduction
        func span(_ start: UInt32, _ end: UInt32, _ step: Int) -> Int {
            ceilDivide(ceilDivide(Int(end), step), scale) - ceilDivide(ceilDivide(Int(start), step), scale)
        }
        return Size(width: span(image.x0, image.x1, dx), height: span(image.y0, image.y1, dy))
    }

    // MARK: - Opening

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        codestream = request.shared as? JPEG2000Codestream ?? JPEG2000Codestream(input: input, properties: properties)
        layout = try codestream.layout()
        let reduction = request.scale.trailingZeroBitCount
        self.reduction = reduction
        self.request = request
        fromCachedTiles = request.tileCache != nil && layout.isTiled && !layout.isHighThroughput
            && codestream.wholeTilesDecode
        let area = layout.area, sampling = layout.sampling, scale = 1 << reduction
        origin = (ceilDivide(ceilDivide(area.x0, sampling.dx), scale), ceilDivide(ceilDivide(area.y0, sampling.dy), scale))
        size = Size(width: ceilDivide(ceilDivide(area.x1, sampling.dx), scale) - origin.x,
                    height: ceilDivide(ceilDivide(area.y1, sampling.dy), scale) - origin.y)
        guard size.width > 0, size.height > 0 else {
            throw TesseraError.invalidArgument("\(input.name): no resolution level at 1/\(request.scale) scale")
        }
        format = Self.format(for: properties)
        columns = 0..<size.width
        rows = 0..<size.height
        if layout.isTiled {
            // Tile rows on the reference grid, as rows of component 0 at this reduction.
            tileRowStarts = (0..<layout.tileRows).map { row in
                let top = max(area.y0, layout.tileOrigin.y + row * layout.tileSize.height)
                return ceilDivide(ceilDivide(top, sampling.dy), scale) - origin.y
            }
            bandStarts = tileRowStarts
        }
    }

    /// The pixels `readProperties` promises: gray or RGB, with or without alpha, 8 bits for samples of up to 8.
    private static func format(for properties: ImageProperties) -> PixelFormat {
        let gray = properties.colorModel == .gray
        let channels: PixelFormat.Channels = properties.hasAlpha ? (gray ? .grayAlpha : .rgba) : (gray ? .gray : .rgb)
        return PixelFormat(channels, bitDepth: properties.bitDepth <= 8 ? 8 : 16)
    }

    /// The output channels for a decoded image, its palette applied.
    static func channels(of image: opj_image_t) -> JPEG2000Channels {
        let comps = (0..<Int(image.numcomps)).map { image.comps[$0] }
        return JPEG2000Channels(precisions: comps.map { Int($0.prec) }, alpha: comps.map { $0.alpha != 0 },
                                sYCC: JPEG2000Channels.impliesYCC(image) && JPEG2000Channels.convertibleYCC(image))
    }

    // MARK: - Rows

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        try checkColumns(columns, name: codestream.input.name)
        precondition(!started, "restrictColumns after the first row")
        self.columns = columns
        return columns
    }

    func restrictRows(to rows: Range<Int>) {
        precondition(!started, "restrictRows after the first row")
        self.rows = rows.clamped(to: 0..<size.height)
    }

    func skipRows(_ count: Int) throws {
        nextRow = min(size.height, nextRow + max(0, count))
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        try checkRows(from: nextRow, count: count, name: codestream.input.name)
        if let failure { throw failure }
        if !started { try start() }
        let rowBytes = columns.count * format.bytesPerPixel
        var done = 0
        while done < count {
            var index = bandStarts.lastIndex { $0 <= nextRow }!
            if bandIndex != index {
                do { try loadBand(index) } catch {
                    failure = error
                    throw error
                }
                index = bandIndex!
            }
            let top = bandStarts[index], bottom = bandStarts[index + 1]
            let available = min(count - done, bottom - nextRow)
            band.withUnsafeBytes { band in
                for row in 0..<available {
                    (rows + (done + row) * bytesPerRow)
                        .copyMemory(from: band.baseAddress! + (nextRow - top + row) * rowBytes, byteCount: rowBytes)
                }
            }
            done += available
            nextRow += available
        }
    }

    /// Bytes OpenJPEG holds per decoded pixel of a band: each component's 32-bit samples, and as much again for
    /// the tile being decoded and its wavelet.
    private var workingBytesPerPixel: Int { layout.componentCount * 4 * 2 }

    /// Fixes the bands once the columns and rows are known: tile rows cut to the rows read, or untiled as many
    /// rows as the budget allows. Rows outside `rows` fall in bands of their own, never decoded unless read.
    private func start() throws {
        started = true
        let perRow = columns.count * (workingBytesPerPixel + format.bytesPerPixel)
        if layout.isTiled {
            if !fromCachedTiles { bandStarts = Self.merged(tileRowStarts, upTo: layout.tileSize.height / layout.sampling.dy, end: size.height) }
            bandStarts = Array(Set(bandStarts + [rows.lowerBound, rows.upperBound]).filter { $0 > 0 && $0 < size.height })
                .sorted()
            bandStarts.insert(0, at: 0)
            let tallest = zip(bandStarts, bandStarts.dropFirst() + [size.height]).map { $1 - $0 }.max() ?? size.height
            try request.budget.check(perRow * tallest, for: "a row of JPEG 2000 tiles", path: codestream.input.name)
        } else {
            try request.budget.check(perRow, for: "a row of the JPEG 2000 image", path: codestream.input.name)
            let height = max(1, min(size.height, request.budget.limit / 2 / perRow))
            bandStarts = Array(Set([0, rows.upperBound] + Array(stride(from: rows.lowerBound, to: rows.upperBound, by: height)))
                .filter { $0 < size.height }).sorted()
        }
        bandStarts.append(size.height)
    }

    /// The tile rows starting at `starts` gathered into bands of at most `height` rows (a full-resolution tile
    /// row's), each at least one tile row: at a reduction, one decode then covers several tile rows, and a
    /// thumbnail's level is one band (each decode reads the main header and passes the tiles before its own again:
    /// nine bands cost a 1/16 level of the 100 MP sample a third more than one), within a tile row's memory.
    private static func merged(_ starts: [Int], upTo height: Int, end: Int) -> [Int] {
        var bands: [Int] = []
        for (start, next) in zip(starts, starts.dropFirst() + [end]) where bands.last.map({ next - $0 > height }) ?? true {
            bands.append(start)
        }
        return bands
    }

    /// Decodes band `index` over `columns` into `band`. OpenJPEG 2.5 cannot decode some areas on their own (tiles
    /// it fails to skip: the conformance files with SOP/EPH markers and several tile-parts; any area of HTJ2K);
    /// when one fails, the whole image is decoded once, within the budget, and becomes the only band.
    private func loadBand(_ index: Int) throws {
        bandIndex = nil
        let top = bandStarts[index], bottom = bandStarts[index + 1]
        if fromCachedTiles {
            do {
                try copyCachedTiles(rows: top..<bottom)
                bandIndex = index
                return
            } catch let error as TesseraError {
                // A file whose tiles OpenJPEG cannot decode again (PPT markers) or alone: its areas are decoded
                // as uncached reads decode them, which also gives the error a damaged file deserves.
                if case .memoryLimit = error { throw error }
                codestream.wholeTilesFail()
                fromCachedTiles = false
            }
        }
        let scale = 1 << reduction, area = layout.area, sampling = layout.sampling
        func reference(_ value: Int, _ step: Int, _ low: Int, _ high: Int) -> Int {
            min(max(value * scale * step, low), high)
        }
        let wholeImage = top == 0 && bottom == size.height && columns == 0..<size.width
        do {
            if layout.isHighThroughput && !wholeImage {
                throw TesseraError.corrupt(path: codestream.input.name, detail: "HTJ2K areas do not decode apart")
            }
            let codec = try areaCodec()
            try codec.decode(x0: reference(columns.lowerBound + origin.x, sampling.dx, area.x0, area.x1),
                             y0: reference(top + origin.y, sampling.dy, area.y0, area.y1),
                             x1: reference(columns.upperBound + origin.x, sampling.dx, area.x0, area.x1),
                             y1: reference(bottom + origin.y, sampling.dy, area.y0, area.y1))
            try convert(codec, rows: top..<bottom)
            bandIndex = index
        } catch let error as TesseraError where !wholeImage {
            guard case .corrupt = error else { throw error }
            try request.budget.check(size.height * columns.count * (workingBytesPerPixel + format.bytesPerPixel),
                                     for: "the whole JPEG 2000 image (its areas do not decode apart)",
                                     path: codestream.input.name)
            let codec = try codestream.makeCodec(reduction: reduction, readAhead: .wholeRows)
            self.codec = codec
            try codec.decode(x0: area.x0, y0: area.y0, x1: area.x1, y1: area.y1)
            bandStarts = [0, size.height]
            try convert(codec, rows: 0..<size.height)
            bandIndex = 0
        }
    }

    /// The decompressor for the next area: the single-tile image's one, or a fresh one, reading ahead far when
    /// the areas span the whole width.
    private func areaCodec() throws -> JPEG2000Codec {
        if let codec, !(codec.hasDecoded && layout.isTiled) { return codec }
        let fresh = try codestream.makeCodec(reduction: reduction,
                                             readAhead: columns == 0..<size.width ? .wholeRows : .tiles)
        codec = fresh
        return fresh
    }

    /// Fills `band` with rows `rows` (within one codestream tile row) over `columns`, from the whole tiles they
    /// meet, each decoded once into the tile cache.
    private func copyCachedTiles(rows: Range<Int>) throws {
        let scale = 1 << reduction, area = layout.area, sampling = layout.sampling
        let rowBytes = columns.count * format.bytesPerPixel, pixelBytes = format.bytesPerPixel
        let tileRow = tileRowStarts.lastIndex { $0 <= rows.lowerBound }!
        let tilePixels = ceilDivide(layout.tileSize.width, scale * sampling.dx)
            * ceilDivide(layout.tileSize.height, scale * sampling.dy)
        try request.budget.check(tilePixels * (workingBytesPerPixel + format.bytesPerPixel) + rows.count * rowBytes,
                                 for: "a JPEG 2000 tile", path: codestream.input.name)
        if band.count != rows.count * rowBytes { band = [UInt8](repeating: 0, count: rows.count * rowBytes) }
        for tileColumn in 0..<layout.tileColumns {
            func column(_ x: Int) -> Int {
                ceilDivide(ceilDivide(min(max(x, area.x0), area.x1), sampling.dx), scale) - origin.x
            }
            let left = column(layout.tileOrigin.x + tileColumn * layout.tileSize.width)
            let right = column(layout.tileOrigin.x + (tileColumn + 1) * layout.tileSize.width)
            let overlap = (left..<max(left, right)).clamped(to: columns)
            guard !overlap.isEmpty else { continue }
            let tile = try codestream.tile(tileRow * layout.tileColumns + tileColumn, reduction: reduction,
                                           format: format, cache: request.tileCache!)
            let tileLeft = tile.rect.x - origin.x, tileTop = tile.rect.y - origin.y
            guard tileLeft <= overlap.lowerBound, tileLeft + tile.rect.width >= overlap.upperBound,
                  tileTop <= rows.lowerBound, tileTop + tile.rect.height >= rows.upperBound else {
                throw TesseraError.corrupt(path: codestream.input.name,
                                           detail: "tile \(tileRow * layout.tileColumns + tileColumn) decoded at \(tile.rect),"
                                               + " not where the tile grid puts it")
            }
            let tileRowBytes = tile.rect.width * pixelBytes
            tile.pixels.withUnsafeBytes { pixels in
                band.withUnsafeMutableBytes { band in
                    for row in rows {
                        (band.baseAddress! + (row - rows.lowerBound) * rowBytes
                            + (overlap.lowerBound - columns.lowerBound) * pixelBytes)
                            .copyMemory(from: pixels.baseAddress! + (row - tileTop) * tileRowBytes
                                            + (overlap.lowerBound - tileLeft) * pixelBytes,
                                        byteCount: overlap.count * pixelBytes)
                    }
                }
            }
        }
    }

    /// Converts output rows `rows` of the area `codec` decoded, over `columns`, into `band`.
    private func convert(_ codec: JPEG2000Codec, rows: Range<Int>) throws {
        let image = codec.image.pointee
        let channels = Self.channels(of: image)
        guard channels.format == format else {
            throw TesseraError.corrupt(path: codestream.input.name, detail: "the decoded components (\(channels.format))"
                                       + " differ from what the header describes (\(format))")
        }
        let rowBytes = columns.count * format.bytesPerPixel
        try request.budget.check(rows.count * rowBytes, for: "a band of JPEG 2000 rows", path: codestream.input.name)
        if band.count != rows.count * rowBytes { band = [UInt8](repeating: 0, count: rows.count * rowBytes) }
        let samples = JPEG2000Samples(image: image, channels: channels, columns: columns.lowerBound + origin.x,
                                      count: columns.count, referenceSampling: layout.sampling)
        band.withUnsafeMutableBytes { band in
            for (offset, row) in rows.enumerated() {
                samples.convertRow(row + origin.y, into: band.baseAddress! + offset * rowBytes)
            }
        }
    }
}

/// `ceil(value / divisor)` for non-negative values.
@inline(__always) func ceilDivide(_ value: Int, _ divisor: Int) -> Int { (value + divisor - 1) / divisor }
