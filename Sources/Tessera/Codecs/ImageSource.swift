/// Options for reading pixels from an `ImageSource`.
public struct ReadOptions: Sendable {
    /// The rectangle to read, in full-resolution pixels; nil reads the whole image.
    public var region: Rect?
    /// Read at `1/scale` of full size (1, 2, 4, 8, ...): natively where the codec can (JPEG DCT scaling,
    /// TIFF pyramid levels, WebP), otherwise by averaging `scale x scale` blocks.
    public var scale: Int
    /// The page (TIFF directory) to read.
    public var page: Int
    /// Whether a truncated file gives what was decoded (the rest filled) instead of an error.
    public var allowPartial: Bool
    /// The folder where entropy indexes of plain JPEGs are kept (`tessera index`, the pyramid cache's folder):
    /// a region of a JPEG with an index there decodes only the MCUs it covers. Nil uses none.
    public var entropyIndexFolder: String?
    /// Where whole decoded codestream tiles are kept between reads (a server's many small reads of one JPEG 2000
    /// tile then decode it once); nil decodes only what this read asks.
    public var tileCache: DecodedTileCache?

    /// Options reading `region` (nil: all) of `page` at `1/scale`, failing on truncated data unless `allowPartial`,
    /// with the entropy indexes in `entropyIndexFolder` and decoded tiles kept in `tileCache`.
    public init(region: Rect? = nil, scale: Int = 1, page: Int = 0, allowPartial: Bool = false,
                entropyIndexFolder: String? = nil, tileCache: DecodedTileCache? = nil) {
        self.region = region
        self.scale = scale
        self.page = page
        self.allowPartial = allowPartial
        self.entropyIndexFolder = entropyIndexFolder
        self.tileCache = tileCache
    }
}

/// An image file or byte buffer, opened for reading: its format detected from its content, its properties
/// read without decoding pixels, and its pixels read on demand as strips (`makeReader`).
public final class ImageSource: Sendable {
    /// Where the bytes come from; its `name` is the path or the name given for bytes.
    public let input: ImageInput
    /// What the file says about its image.
    public let properties: ImageProperties
    /// The budget decoders check before buffering more than a window of rows.
    public let budget: MemoryBudget
    /// What the format keeps of the file between reads (JPEG 2000's decompressors with their headers read, a
    /// pyramidal TIFF's stored tiles).
    let shared: (any SharedDecoderState)?

    /// The most memory the source holds between reads beyond its properties, in bytes (estimated).
    public var heldBytes: Int { shared?.heldByteLimit ?? 0 }

    /// Opens a file, or an `http(s)://` URL read by byte ranges; the format comes from its first bytes, whatever its
    /// extension.
    public convenience init(path: String, budget: MemoryBudget = .default) throws {
        try self.init(input: ImageInput.at(path, budget: budget), budget: budget)
    }

    /// Opens encoded bytes in memory; `name` is used in error messages.
    public convenience init(bytes: [UInt8], name: String = "<data>", budget: MemoryBudget = .default) throws {
        try self.init(input: .bytes(bytes, name: name), budget: budget)
    }

    /// Opens `input`: detects its format from its first bytes and reads its properties, decoding no pixels.
    public init(input: ImageInput, budget: MemoryBudget = .default) throws {
        let header = try input.prefix(ImageFormat.headerLength)
        if header.isEmpty { throw TesseraError.truncated(path: input.name, detail: "(the file is empty)") }
        // A zip is read as the pyramid it holds (`TileFolderPyramid`), whose descriptor tells its layout.
        guard let format = ImageFormat.detect(header) ?? (ZipArchive.starts(header) ? .deepZoom : nil) else {
            throw TesseraError.unknownFormat(path: input.name)
        }
        var (properties, shared) = try Self.decoder(for: format).open(input, budget: budget)
        // Formats that read the whole file or know its length (TIFF, WebP, JPEG 2000) have given it already.
        if properties.fileSize == 0 { properties.fileSize = try input.byteCount() }
        self.input = input
        self.properties = properties
        self.budget = budget
        self.shared = shared
    }

    /// The decoder type for each format.
    static func decoder(for format: ImageFormat) -> any ImageDecoder.Type {
        switch format {
        case .jpeg: return JPEGDecoder.self
        case .png: return PNGDecoder.self
        case .bmp: return BMPDecoder.self
        case .gif: return GIFDecoder.self
        case .tiff: return TIFFDecoder.self
        case .webp: return WebPDecoder.self
        case .jpeg2000: return JPEG2000Decoder.self
        case .deepZoom, .iiif: return TileFolderDecoder.self
        }
    }

    /// Opens a reader that yields the requested rectangle at the requested scale, top to bottom in strips,
    /// decoding only what it needs.
    public func makeReader(_ options: ReadOptions = ReadOptions()) throws -> any ImageReader {
        let (decoder, nativeScale) = try makeDecoder(options)
        let full = Rect(options.page == 0 ? properties.size : decoder.size)
        let region = options.region ?? full
        guard !region.isEmpty, full.intersection(region) == region else {
            throw TesseraError.invalidArgument("\(input.name): region \(region) is not inside the \(full.size) image")
        }
        let output = region.reduced(by: options.scale)
        let shrink = options.scale / nativeScale
        // A native level may be a pixel short of the rounded-up size (writers that halve rounding down): read
        // what it has and repeat its last row and column.
        let reader: any ImageReader
        if shrink == 1 {
            reader = RegionReader(decoder: decoder, region: Self.readable(output, within: decoder.size), budget: budget,
                                  name: input.name)
        } else {
            let covered = Rect(x: output.x * shrink, y: output.y * shrink,
                               width: output.width * shrink, height: output.height * shrink)
            let source = RegionReader(decoder: decoder, region: Self.readable(covered, within: decoder.size),
                                      budget: budget, name: input.name)
            reader = BoxShrinkReader(source: source, factor: shrink)
        }
        return reader.size == output.size ? reader : EdgeExtendingReader(source: reader, size: output.size)
    }

    /// Decodes every pixel of the page `options` names, at full scale (its region and scale are not used), and
    /// keeps none, to check that the file is intact: throws what a read of it would, without the copies of its
    /// rows a reader hands out.
    public func verify(_ options: ReadOptions = ReadOptions()) throws {
        var whole = options
        whole.region = nil
        whole.scale = 1
        let decoder = try makeDecoder(whole).decoder
        try budget.checkRows(width: decoder.size.width, rows: 1, format: decoder.format, for: "a row of pixels",
                             path: input.name)
        try decoder.discardRows(decoder.size.height)
    }

    /// The decoder a read with `options` starts from, and the scale it decodes at (`nativeScale`).
    private func makeDecoder(_ options: ReadOptions) throws -> (decoder: any RowDecoder, nativeScale: Int) {
        guard options.scale >= 1 else { throw TesseraError.invalidArgument("scale must be 1/N with N >= 1") }
        guard options.page >= 0 && options.page < properties.pageCount else {
            throw TesseraError.invalidArgument(
                "\(input.name): page \(options.page) does not exist (the file has \(properties.pageCount))")
        }
        try refuseDecompressionBombs()
        let nativeScale = self.nativeScale(for: options.scale, page: options.page)
        let request = DecodeRequest(scale: nativeScale, page: options.page, budget: budget,
                                    allowPartial: options.allowPartial, region: options.region?.reduced(by: nativeScale),
                                    entropyIndexFolder: options.entropyIndexFolder, shared: shared,
                                    tileCache: options.tileCache)
        let decoder = try Self.decoder(for: properties.format).makeDecoder(input: input, properties: properties,
                                                                           request: request)
        return (decoder, nativeScale)
    }

    /// The scale the decoder reads at for a reader at `scale`: the largest native one dividing it (the rest is a
    /// box shrink). Other pages may differ in size from the first, which the properties describe: they are read
    /// at full scale.
    private func nativeScale(for scale: Int, page: Int) -> Int {
        page == 0 ? Self.decoder(for: properties.format).nativeScales(for: properties).filter { scale % $0 == 0 }.max() ?? 1 : 1
    }

    /// How far the centre of a pixel of page 0 read at `scale` lies before the centre of the block of
    /// full-resolution pixels it stands for, in the reader's own pixels: what a resampler of that reader adds to
    /// its source coordinates (`ResamplingReader`'s `sourceLag`). 0 except for JPEG 2000's wavelet levels.
    public func sampleLag(scale: Int) -> Double {
        Self.decoder(for: properties.format).sampleLag(atScale: nativeScale(for: scale, page: 0)) / Double(scale)
    }

    /// The part of `rect` inside an image of `size`, or, when `rect` lies wholly past its last row or column,
    /// that last row or column: what `EdgeExtendingReader` repeats.
    static func readable(_ rect: Rect, within size: Size) -> Rect {
        let left = min(rect.x, size.width - 1), top = min(rect.y, size.height - 1)
        return Rect(x: left, y: top, width: max(1, min(rect.maxX, size.width) - left),
                    height: max(1, min(rect.maxY, size.height) - top))
    }

    /// Pixels a file may claim per byte of data before it is taken for a decompression bomb. Real images stay far
    /// below it: about 160 for a flat JPEG, 2,730 for GIF's LZW, 8,256 for a flat 1-bit PNG's deflate.
    static let bombPixelsPerByte = 65_536

    /// Refuses files whose header claims an image far larger than their data could hold (a GIF whose logical
    /// screen is 65,535 pixels square around a tiny frame), which would otherwise stream gigapixels of filler.
    private func refuseDecompressionBombs() throws {
        // A pyramid's descriptor is small whatever the image's size; each tile is checked when it is opened.
        guard !properties.format.isTileFolder else { return }
        let pixels = properties.width.multipliedReportingOverflow(by: properties.height)
        guard pixels.overflow || (pixels.partialValue > 1 << 28
                                  && pixels.partialValue / max(1, properties.fileSize) > Self.bombPixelsPerByte)
        else { return }
        throw TesseraError.corrupt(
            path: input.name, detail: "the header claims \(properties.size) pixels from only \(ByteCount(properties.fileSize))"
                + " of data (a decompression bomb?)")
    }
}
