import Tessera

/// Makes the pixels of a resolved IIIF request from any image Tessera reads: a region read at the largest
/// reduction that still covers the requested size (JPEG's DCT scaling, a TIFF level, a box shrink), the kernel
/// for the exact size, then mirroring, rotation and quality on the small result, and the encoder.
enum IIIFRenderer {
    /// The media type of each output format the server writes.
    static let mediaTypes = ["jpg": "image/jpeg", "png": "image/png", "webp": "image/webp", "jp2": "image/jp2"]
    /// Formats in the spec that the server does not write: 415, not 400.
    static let knownFormats: Set = ["jpg", "png", "webp", "tif", "gif", "pdf", "jp2"]

    /// The largest power-of-two reduction of the request's region that is at most a pixel short of its size.
    /// Viewers ask for a level's tiles a pixel off its size (a width rounded up, a level halved rounding down, a
    /// height rounded from that width's aspect ratio): that level, stretched by the pixel with the kernel, is the
    /// answer, not one twice as large.
    static func reduction(for request: IIIFResolvedRequest) -> Int {
        let region = request.region, size = request.size
        /// Under a pixel over the level on an axis, as a size rounded up makes it, or as a size rounded from the
        /// other's aspect ratio makes it: the other's pixel scaled to this axis (at most `aspectSlack` of the
        /// size, so that a sliver's one pixel across never passes for hundreds down), plus half a pixel.
        func covers(_ requested: Int, _ extent: Int, other: Int, at scale: Int) -> Bool {
            let slack = max(1, min(Double(extent) / Double(other), aspectSlack * Double(requested)))
            return Double(requested) < Double(extent) / Double(scale) + slack + 0.5
        }
        var scale = 1
        while 2 * scale <= max(region.width, region.height),
              covers(size.width, region.width, other: region.height, at: 2 * scale),
              covers(size.height, region.height, other: region.width, at: 2 * scale) {
            scale *= 2
        }
        return scale
    }

    /// The deflate level of PNG responses: 3, not the encoder's 6, as a server's PNG is made while its client
    /// waits. On a photographic 256 x 256 tile, after libpng's filters: level 6 took 24.5 ms of CPU for 69.9 KB,
    /// level 3 10.2 ms for 73.2 KB, level 1 7.5 ms for 78.7 KB (libvips' `pngsave`, filters off: 116 KB).
    static let pngLevel = 3

    /// The most a size rounded from the other axis's aspect ratio may be over a level, as a fraction of that size:
    /// a rounding's worth, never a visible stretch.
    static let aspectSlack = 0.02

    /// A render worked out before it runs: what is read from where, at which reduction, and the memory it holds
    /// while it runs, so the server can reserve that in its `RenderBudget` first.
    struct Plan {
        let request: IIIFResolvedRequest
        let source: ImageSource
        /// The region read, in the source's pixels, and the reduction it is read at.
        let region: Rect
        let scale: Int
        /// The columns and rows added past the read by repeating its last one: the image's last pixel that a level
        /// halved rounding down lost, where the size asked is the level's pixels and that one.
        let padding: Size
        /// The source's stored JPEG tiles, when it has them: a render across a few of them is made in their planes.
        let tiles: (any StoredJPEGTiles)?
        let format: ImageFormat
        let mediaType: String
        /// Whether rows go from the reader to the encoder a strip at a time; else the whole output is held (a
        /// rotation, a mirror or bitonal thresholding, or an encoder that takes whole images: WebP).
        let streams: Bool
        /// The rows a strip carries from the reader to the encoder.
        static let stripHeight = 64

        /// Whether the render goes from JPEG to JPEG in the codecs' YCbCr planes (`JPEGPlanes`): a JPEG held in
        /// memory (one stored tile), or the stored tiles of the level read (`tiles`), answered as a JPEG of its
        /// colours, with no rotation or mirror. The JPEGs are then decoded without upsampling chroma or converting
        /// colour (a narrow part of one is decoded cut to its columns, its chroma repeated and taken back: the same
        /// samples), each plane resampled at its own size, and the planes encoded as they are; a JPEG that is not
        /// YCbCr or gray, claims more pixels than a tile can have, or a read across more stored tiles than
        /// `JPEGPlanes.maxStoredTiles`, goes through pixels (`renderPlanes` is nil).
        var isPlanar: Bool {
            guard streams, format == .jpeg, isOneJPEG || storedTileRead != nil else { return false }
            return request.quality == .default || (request.quality == .color && source.properties.colorModel != .gray)
        }

        /// Whether the source is one JPEG held in memory (a stored tile).
        var isOneJPEG: Bool {
            guard source.properties.format == .jpeg, case .bytes = source.input else { return false }
            return true
        }

        /// The source's stored tiles and the part of their level the read covers (the pixels the pixel path reads
        /// as the level has them: a level halved rounding down lacks the image's last), when the plan reads a
        /// level of stored tiles and that part is not empty; nil otherwise.
        var storedTileRead: (tiles: any StoredJPEGTiles, read: Rect)? {
            guard !isOneJPEG, let tiles, let level = tiles.storedLevelSize(scale: scale) else { return nil }
            let read = region.reduced(by: scale).intersection(Rect(level))
            return read.isEmpty ? nil : (tiles, read)
        }

        /// The pixels decoded: the region at the reduction it is read at.
        var readSize: Size { reducedSize(region.size, by: scale) }

        /// The memory the render holds at its peak, in bytes, estimated: the decoder's rows at the level read
        /// (a strip and the codec's own band of rows), the resampler's kernel window (Float32 RGBA rows), the
        /// encoder's strip and its output grown in memory (twice over while it is copied out), and when it does
        /// not stream, the whole output image twice (before and after the rotation or conversion).
        var workingSet: Int {
            let channels = 4  // the most a reader produces, at 8 bits; 16-bit sources are read as such (below)
            let bytesPerPixel = channels * max(1, source.properties.bitDepth / 8)
            let readWidth = readSize.width, readHeight = readSize.height
            let decodeWidth = reducedSize(source.properties.size, by: scale).width
            let decoding = readWidth * bytesPerPixel * Self.stripHeight + decodeWidth * bytesPerPixel * 16
            let size = request.size
            var resampling = 0
            if size.width != readWidth || size.height != readHeight {
                let taps = 6 * max(1, (readHeight + size.height - 1) / size.height) + 2
                resampling = (taps + Self.stripHeight) * size.width * 16 + 4 * readWidth * 16
            }
            // The encoded bytes per byte of pixels, at most: PNG 1/2, JPEG and WebP 1/8 (quality 85 of fine noise
            // takes about 1/20 of RGBA).
            let encodedFraction = format == .png ? 2 : 8
            let output = 2 * size.area * bytesPerPixel / encodedFraction
            let whole = streams ? size.width * bytesPerPixel * Self.stripHeight : 2 * size.area * bytesPerPixel
            return decoding + resampling + whole + output + storedTilePlanes + 64 << 10
        }

        /// The stored tiles' planes a planar render across them lays side by side, in bytes, at most (three planes
        /// of a tile's pixels each); none when the read goes through pixels instead (`JPEGPlanes.storedTiles`).
        private var storedTilePlanes: Int {
            guard isPlanar, let (tiles, read) = storedTileRead, case let side = tiles.tileSize,
                  let (columns, rows) = JPEGPlanes.storedTiles(covering: read, side: side) else { return 0 }
            return 3 * side * side * columns.count * rows.count
        }
    }

    /// The plan for `request` from `source`: the image itself, or a copy of it reduced `sourceReduction` times (a
    /// divisor of the request's `reduction`), the read grown by `padding` (`Plan.padding`); `tiles` are the
    /// source's stored JPEG tiles, when it has them (`Plan.tiles`).
    static func plan(_ request: IIIFResolvedRequest, from source: ImageSource, reducedBy sourceReduction: Int = 1,
                     padding: Size = Size(width: 0, height: 0), tiles: (any StoredJPEGTiles)? = nil) throws -> Plan {
        guard let mediaType = mediaTypes[request.format], let format = ImageFormat(fileExtension: request.format) else {
            throw IIIFError.unsupportedFormat(request.format)
        }
        let size = request.size, scale = reduction(for: request) / sourceReduction
        var region = request.region.reduced(by: sourceReduction).intersection(Rect(source.properties.size))
        // A level halved rounding down stops short of the image's last pixels: a size that is exactly its pixels
        // of the region (a `sizes` entry, a tile as stored) is read as the level has it, not stretched to it.
        if let level = source.properties.storedLevel(scale: scale), region.reduced(by: scale).size != size {
            let stored = region.intersection(Rect(x: 0, y: 0, width: level.width * scale, height: level.height * scale))
            if !stored.isEmpty, stored.reduced(by: scale).size == size { region = stored }
        }
        let streams = exifOrientation(rotation: request.rotation, mirror: request.mirror) == 1
            && request.quality != .bitonal && ImageWriter.streamsToMemory(format)
        return Plan(request: request, source: source, region: region, scale: scale, padding: padding, tiles: tiles,
                    format: format, mediaType: mediaType, streams: streams)
    }

    /// The encoded image and its media type; a plain JPEG's region is read through its entropy index when
    /// `entropyIndexFolder` holds one, a JPEG 2000's from the whole tiles in `tileCache`. `heldPlanes`, for a plan
    /// from one stored tile, gives that tile's planes decoded whole at its own size, when they are kept: the render
    /// then resamples those instead of decoding the tile (`renderPlanes`).
    static func render(_ plan: Plan, quality jpegQuality: Int, entropyIndexFolder: String? = nil,
                       tileCache: DecodedTileCache? = nil, heldPlanes: (() throws -> JPEGPlanes?)? = nil) throws
        -> (bytes: [UInt8], mediaType: String) {
        let request = plan.request, source = plan.source
        var options = EncodeOptions()
        options.quality = jpegQuality
        options.compressionLevel = pngLevel
        options.bitDepth = 8
        options.budget = source.budget
        if plan.isPlanar, let bytes = try renderPlanes(plan, options: options, heldPlanes: heldPlanes) {
            return (bytes, plan.mediaType)
        }
        var reader: any ImageReader = try source.makeReader(
            ReadOptions(region: plan.region, scale: plan.scale, entropyIndexFolder: entropyIndexFolder,
                        tileCache: tileCache))
        if plan.padding.width > 0 || plan.padding.height > 0 {
            reader = EdgeExtendingReader(source: reader, size: Size(width: reader.size.width + plan.padding.width,
                                                                    height: reader.size.height + plan.padding.height))
        }
        if reader.size != request.size {
            reader = try ResamplingReader(source: reader, size: request.size, sourceLag: source.sampleLag(scale: plan.scale))
        }
        if plan.streams {
            if let target = target(of: request.quality, for: reader.format) {
                reader = FormatConvertingReader(source: reader, format: target)
            }
            return (try ImageWriter.encode(reader, as: plan.format, options: options, stripHeight: Plan.stripHeight),
                    plan.mediaType)
        }
        var image = try reader.readAll(budget: source.budget, name: source.input.name)
        image = image.oriented(exif: exifOrientation(rotation: request.rotation, mirror: request.mirror))
        image = try apply(request.quality, to: image)
        return (try ImageWriter.encode(image, as: plan.format, options: options), plan.mediaType)
    }

    /// A planar plan's JPEG (`Plan.isPlanar`): its source's planes (held whole, or decoded with no row below the
    /// region), or its stored tiles' laid side by side, no row below the region decoded, resampled to the size asked
    /// and encoded; nil when a JPEG is not YCbCr or gray or the read lies across too many stored tiles, for the
    /// pixel path.
    private static func renderPlanes(_ plan: Plan, options: EncodeOptions,
                                     heldPlanes: (() throws -> JPEGPlanes?)?) throws -> [UInt8]? {
        // The pixels the pixel path reads (`ImageSource.makeReader`): the part of them the source has, its last row
        // and column repeated past that (a level halved rounding down), and the padding added past them.
        let source = plan.source, read = plan.region.reduced(by: plan.scale)
        var region = read
        var extent = Size(width: read.width + plan.padding.width, height: read.height + plan.padding.height)
        let planes: JPEGPlanes
        // A whole level held is read for its image's thumbnails, whose sizes are the image's own: their weights
        // are not kept (`JPEGPlanes.resampled`), as a tile grid's are.
        let keepingWeights: Bool
        if plan.isOneJPEG, let held = try heldPlanes?() {
            // The tile at its own size: the region and its padding in its pixels, shrunk by boxes, not DCT scaling.
            planes = held
            keepingWeights = false
            region = plan.region
            extent = Size(width: region.width + plan.padding.width * plan.scale,
                          height: region.height + plan.padding.height * plan.scale)
        } else if plan.isOneJPEG {
            guard let decoded = try JPEGPlanes(decoding: source.input, scale: plan.scale, rows: region.maxY,
                                               columns: region.x..<region.maxX,
                                               budget: source.budget) else { return nil }
            planes = decoded
            keepingWeights = true
        } else {
            guard let (tiles, stored) = plan.storedTileRead, let (laid, covered) = try JPEGPlanes.stored(
                tiles, scale: plan.scale, region: stored, budget: source.budget, name: source.input.name) else { return nil }
            planes = laid
            keepingWeights = true
            region = Rect(x: stored.x - covered.x, y: stored.y - covered.y, width: stored.width, height: stored.height)
        }
        return try planes.resampled(region: region, extent: extent, to: plan.request.size,
                                    subsampling: options.subsampling, kernel: ResamplingReader.Options().kernel,
                                    keepingWeights: keepingWeights)
            .encoded(options: options, name: source.input.name)
    }

    /// IIIF mirrors horizontally, then rotates clockwise: the same transforms as EXIF orientations.
    static func exifOrientation(rotation: Int, mirror: Bool) -> Int {
        switch (mirror, rotation) {
        case (false, 90): return 6
        case (false, 180): return 3
        case (false, 270): return 8
        case (true, 0): return 2
        case (true, 90): return 7
        case (true, 180): return 4
        case (true, 270): return 5
        default: return 1
        }
    }

    /// The pixel format `quality` makes of `format`: gray drops colour, `color` makes gray RGB; nil keeps it.
    static func target(of quality: IIIFRequest.Quality, for format: PixelFormat) -> PixelFormat? {
        let target: PixelFormat
        switch quality {
        case .default: return nil
        case .color: target = format.isColor ? format : format.with(format.hasAlpha ? .rgba : .rgb)
        case .gray, .bitonal: target = format.with(format.hasAlpha ? .grayAlpha : .gray)
        }
        return target == format ? nil : target
    }

    /// `gray` drops colour (Rec. 601 luma), `bitonal` thresholds that at the middle, `color` makes gray RGB.
    static func apply(_ quality: IIIFRequest.Quality, to image: ImageBuffer) throws -> ImageBuffer {
        let target = target(of: quality, for: image.format)
        var converted = try target.map { try FormatConvertingReader(source: BufferReader(image), format: $0).readAll() }
            ?? image
        if quality == .bitonal {
            let step = converted.format.channelCount, bytesPerSample = converted.format.bytesPerSample
            converted.bytes.withUnsafeMutableBytes { raw in
                for index in stride(from: 0, to: raw.count, by: step * bytesPerSample) {
                    let value = bytesPerSample == 1 ? Int(raw[index]) : Int(raw.loadUnaligned(fromByteOffset: index, as: UInt16.self)) >> 8
                    let black = value < 128
                    for byte in 0..<bytesPerSample { raw[index + byte] = black ? 0 : 255 }
                }
            }
        }
        return converted
    }
}
