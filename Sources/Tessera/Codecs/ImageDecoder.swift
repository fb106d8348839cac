/// One format's decoder: reads properties without decoding pixels, and opens a `RowDecoder` at a scale
/// the codec produces natively (JPEG's DCT scaling, a TIFF pyramid level, WebP's scaled decode).
protocol ImageDecoder: RowDecoder {
    /// Reads what the file says about its image without decoding pixels.
    static func readProperties(of input: ImageInput) throws -> ImageProperties
    /// The reduction factors (1 = full size) this format can decode `page` at without a separate shrink.
    static func nativeScales(for properties: ImageProperties) -> [Int]
    /// How far, in full-resolution pixels, the centre of a pixel decoded at `scale` (one of `nativeScales`) lies
    /// before the centre of the `scale x scale` block it stands for: 0 for reductions that average the block
    /// (JPEG's DCT scaling, a pyramid's box-filtered levels), more where the format samples differently.
    static func sampleLag(atScale scale: Int) -> Double
    /// Whether the reductions at `nativeScales` are low-pass filtered as a resampling kernel would filter them (a
    /// wavelet's low-pass bands), so that a thumbnail may load the smallest one still covering its size and leave
    /// the kernel less than 2x; false where a reduction aliases like a box average or a truncated DCT.
    static var reductionsAreFiltered: Bool { get }
    /// Opens the image for decoding at `request.scale`, one of `nativeScales`.
    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws
    /// Opens the row decoder for `request`: `init` unless the format has a cheaper path for it.
    static func makeDecoder(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws -> any RowDecoder
    /// What the format keeps of an opened file between reads (given to every decoder in `DecodeRequest.shared`),
    /// or nil when it keeps nothing.
    static func sharedState(input: ImageInput, properties: ImageProperties) -> (any SharedDecoderState)?
    /// What an `ImageSource` opening `input` keeps: its properties and its shared state, from one opening of the
    /// file where the format can (a TIFF's directories walked once for both); `budget` caps the opening's memory.
    static func open(_ input: ImageInput, budget: MemoryBudget) throws
        -> (properties: ImageProperties, shared: (any SharedDecoderState)?)
}

/// What a format keeps of an opened file between reads, made once per `ImageSource` (JPEG 2000's decompressors
/// with their headers read, a pyramidal TIFF's stored JPEG tiles' index).
protocol SharedDecoderState: AnyObject, Sendable {
    /// The most memory it holds between reads, in bytes (estimated).
    var heldByteLimit: Int { get }
}

extension ImageDecoder {
    static func nativeScales(for properties: ImageProperties) -> [Int] { [1] }

    static func sampleLag(atScale scale: Int) -> Double { 0 }

    static var reductionsAreFiltered: Bool { false }

    static func makeDecoder(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws -> any RowDecoder {
        try Self(input: input, properties: properties, request: request)
    }

    static func sharedState(input: ImageInput, properties: ImageProperties) -> (any SharedDecoderState)? { nil }

    static func open(_ input: ImageInput, budget: MemoryBudget) throws
        -> (properties: ImageProperties, shared: (any SharedDecoderState)?) {
        let properties = try readProperties(of: input)
        return (properties, sharedState(input: input, properties: properties))
    }
}

/// What a decoder is asked for when it is opened.
struct DecodeRequest {
    /// The reduction factor, one of the decoder's native scales.
    var scale: Int
    /// The page (TIFF directory) to decode.
    var page: Int
    var budget: MemoryBudget
    /// Whether a truncated file gives its decoded part (the rest filled) instead of an error.
    var allowPartial: Bool
    /// The rectangle the reader will ask for, in the decoder's (scaled) pixels; nil for all of them.
    var region: Rect? = nil
    /// Where entropy indexes are kept (`JPEGEntropyIndex`), or nil to use none.
    var entropyIndexFolder: String? = nil
    /// What the `ImageSource` keeps for the format between reads (`ImageDecoder.sharedState`).
    var shared: (any SharedDecoderState)? = nil
    /// Where whole decoded tiles are kept between reads, or nil to decode only what is asked.
    var tileCache: DecodedTileCache? = nil
}

/// Size reduction when codecs scale: `ceil(size / scale)`, as libjpeg and libvips round.
public func reducedSize(_ size: Size, by scale: Int) -> Size {
    Size(width: (size.width + scale - 1) / scale, height: (size.height + scale - 1) / scale)
}
