/// Makes thumbnails as ImageIO and vipsthumbnail do, streaming the source so memory is bounded by its width:
///
///     decode at a native reduced scale (JPEG 1/2..1/8, shrink-on-load), read ahead on a thread of its own
///       -> integer box shrink (BoxShrinkReader)          together leaving a residual of at least 2x
///       -> kernel (Lanczos3 by default) to the exact size (ResamplingReader)
///       -> in memory: EXIF orientation, then the crop window
///
/// The kernel always does at least the last 2x of the reduction, so shrink-on-load and the box never decide the
/// result's sharpness or aliasing; a format whose levels are low-pass filtered already (JPEG 2000's wavelet bands)
/// loads the smallest level still covering the thumbnail, as `opj_decompress -r` and vipsthumbnail do.
public struct Thumbnailer: Sendable {
    /// What to make.
    public struct Options: Sendable {
        /// The box to fit; `ThumbnailSize.maxPixelSize(n)` is ImageIO's `maxPixelSize`.
        public var size: ThumbnailSize
        /// The kernel for the final reduction; Lanczos3 by default.
        public var kernel: ResamplingKernel
        /// Whether the kernel filters in linear light.
        public var linearLight: Bool
        /// Whether the EXIF orientation is applied, so the thumbnail is upright (ImageIO's `withTransform`); on by
        /// default, and the size box applies to the upright image.
        public var appliesOrientation: Bool
        /// Fill the box and crop (`centre`, `attention`, `entropy`) instead of fitting inside it (`none`); needs
        /// both sides of the box and is ignored for `force` sizes, which fill the box already.
        public var crop: ThumbnailCrop
        /// Use the thumbnail embedded in a JPEG's EXIF data when it is at least as large as the result needs
        /// (ImageIO's `createThumbnailFromImageIfAbsent`); off by default, because such thumbnails are often
        /// letterboxed or stale.
        public var usesEmbeddedThumbnail: Bool
        /// The memory budget passed to the decoder and checked for the result.
        public var budget: MemoryBudget
        /// Where entropy indexes are kept (`JPEGEntropyIndex`): a large plain JPEG is then decoded on every core,
        /// its index built there on first contact; nil to use none.
        public var entropyIndexFolder: String?

        /// Options for thumbnails fitting `size`; every other setting has ImageIO's and vipsthumbnail's default.
        public init(size: ThumbnailSize, kernel: ResamplingKernel = .lanczos3, linearLight: Bool = false,
                    appliesOrientation: Bool = true, crop: ThumbnailCrop = .none, usesEmbeddedThumbnail: Bool = false,
                    budget: MemoryBudget = .default, entropyIndexFolder: String? = nil) {
            self.size = size
            self.kernel = kernel
            self.linearLight = linearLight
            self.appliesOrientation = appliesOrientation
            self.crop = crop
            self.usesEmbeddedThumbnail = usesEmbeddedThumbnail
            self.budget = budget
            self.entropyIndexFolder = entropyIndexFolder
        }
    }

    /// The steps chosen for one source; sizes in pixels, in the source's stored (not displayed) orientation
    /// except `crop` and `outputSize`.
    public struct Plan: Sendable, Equatable {
        /// The reduction the decoder applies natively (JPEG DCT scaling): 1, 2, 4 or 8.
        public var loadScale: Int
        /// The integer box shrink after decoding.
        public var boxFactor: Int
        /// The size after decoding and box shrinking.
        public var shrunkSize: Size
        /// The size the kernel resamples to.
        public var resampledSize: Size
        /// The EXIF orientation applied (1 when none is).
        public var orientation: Int
        /// The size of the result, upright.
        public var outputSize: Size
    }

    /// What this thumbnailer makes.
    public let options: Options

    /// A thumbnailer making thumbnails as `options` says; it holds no state, so one can serve many threads.
    public init(options: Options) { self.options = options }

    /// The plan for a source with `properties`, reading from an image of `sourceSize` (the source itself, or the
    /// embedded thumbnail standing in for it) whose decoder reduces natively by `nativeScales`.
    public func plan(for properties: ImageProperties, sourceSize: Size? = nil, nativeScales: [Int]? = nil) -> Plan {
        let orientation = options.appliesOrientation && (1...8).contains(properties.orientation) ? properties.orientation : 1
        let swaps = orientation >= 5
        func upright(_ size: Size) -> Size { swaps ? Size(width: size.height, height: size.width) : size }
        let displayed = upright(properties.size)
        let resizedUpright = options.size.resampledSize(for: displayed, covering: covers)
        let resized = upright(resizedUpright)
        let output = covers
            ? Size(width: min(options.size.width!, resizedUpright.width), height: min(options.size.height!, resizedUpright.height))
            : resizedUpright
        let source = sourceSize ?? properties.size
        let decoder = ImageSource.decoder(for: properties.format)
        let scales = nativeScales ?? decoder.nativeScales(for: properties)
        // The largest integer reduction that still leaves the kernel at least 2x; 1 when enlarging. A decoder
        // whose reductions are filtered (not an embedded thumbnail's JPEG) loads the smallest level still covering
        // the size, and only a box shrink past its levels leaves the kernel 2x.
        let shrink = min(Double(source.width) / Double(resized.width), Double(source.height) / Double(resized.height))
        let integral = max(1, Int(shrink / 2))
        let loadable = nativeScales == nil && decoder.reductionsAreFiltered ? max(1, Int(shrink)) : integral
        let load = scales.filter { $0 <= loadable }.max() ?? 1
        let box = max(1, integral / load)
        return Plan(loadScale: load, boxFactor: box, shrunkSize: reducedSize(source, by: load * box),
                    resampledSize: resized, orientation: orientation, outputSize: output)
    }

    /// Whether the result fills the box and is cropped: only with a crop, both sides given and no distortion.
    private var covers: Bool {
        options.crop != .none && options.size.width != nil && options.size.height != nil && options.size.restriction != .force
    }

    /// The thumbnail of the image at `path`.
    public func thumbnail(path: String) throws -> ImageBuffer {
        try thumbnail(of: ImageSource(path: path, budget: options.budget))
    }

    /// The thumbnail of an opened source, in its pixel format (gray, RGB, with alpha, 8 or 16 bits).
    public func thumbnail(of source: ImageSource) throws -> ImageBuffer {
        var reading = source
        var plan = plan(for: source.properties)
        if options.usesEmbeddedThumbnail, let embedded = try embeddedThumbnail(of: source),
           embedded.properties.width >= plan.resampledSize.width, embedded.properties.height >= plan.resampledSize.height {
            reading = embedded
            plan = self.plan(for: source.properties, sourceSize: embedded.properties.size,
                             nativeScales: ImageSource.decoder(for: embedded.properties.format)
                                 .nativeScales(for: embedded.properties))
        }
        // Decoding runs ahead on threads of its own, overlapping the box shrink and the kernel.
        var reader = try reading.makeReader(ReadOptions(scale: plan.loadScale,
                                                        entropyIndexFolder: options.entropyIndexFolder)).readingAhead()
        if plan.boxFactor > 1 { reader = BoxShrinkReader(source: reader, factor: plan.boxFactor) }
        if reader.size != plan.resampledSize {
            reader = try ResamplingReader(source: reader, size: plan.resampledSize,
                                          options: .init(kernel: options.kernel, linearLight: options.linearLight),
                                          sourceLag: reading.sampleLag(scale: plan.loadScale * plan.boxFactor))
        }
        var image = try reader.readAll(budget: options.budget, name: source.input.name).oriented(exif: plan.orientation)
        if image.size != plan.outputSize {
            image = image.cropped(to: options.crop.window(in: image, size: plan.outputSize))
        }
        return image
    }

    /// The JPEG thumbnail in a JPEG's EXIF data (IFD1), opened, or nil when there is none or it does not decode.
    private func embeddedThumbnail(of source: ImageSource) throws -> ImageSource? {
        guard source.properties.format == .jpeg,
              let block = JPEGEXIF.block(in: try source.input.prefix(JPEGEXIF.searchLength)),
              let bytes = EXIF.thumbnail(in: block) else { return nil }
        return try? ImageSource(bytes: bytes, name: source.input.name + " (EXIF thumbnail)", budget: options.budget)
    }
}
