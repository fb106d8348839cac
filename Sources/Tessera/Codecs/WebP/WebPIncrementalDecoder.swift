import CWebP

/// Decodes a WebP as its bytes arrive, through libwebp's incremental decoder (`WebPIAppend` with only the new
/// bytes; libwebp keeps what it still needs of them), into an image buffer of ours: rows fill top-down.
/// (`WebPIncrementalDecode` is the other use of the same libwebp API: decoding a file already in memory only as far
/// down as a region needs.)
final class WebPIncrementalDecoder: IncrementalDecoder {
    private let name: String
    private let budget: MemoryBudget
    private var decoder: OpaquePointer?
    /// libwebp keeps pointers to the configuration and the output, so both live on the heap.
    private var config: UnsafeMutablePointer<WebPDecoderConfig>?
    private var pixels: UnsafeMutableRawBufferPointer?
    private var fed = 0
    private var rowsDecoded = 0
    private var complete = false
    private(set) var properties: ImageProperties?
    private var format = PixelFormat.rgb8

    init(name: String, budget: MemoryBudget) {
        self.name = name
        self.budget = budget
    }

    deinit {
        if let decoder { WebPIDelete(decoder) }
        config?.deallocate()
        pixels?.deallocate()
    }

    func update(_ data: UnsafeRawBufferPointer, isFinal: Bool) throws -> IncrementalProgress {
        if decoder == nil {
            guard try start(data) else {
                if isFinal { throw TesseraError.truncated(path: name, detail: "in the header") }
                return .readingHeader
            }
        }
        guard let decoder else { return .readingHeader }
        if data.count > fed {
            let status = WebPIAppend(decoder, data.baseAddress!.assumingMemoryBound(to: UInt8.self) + fed, data.count - fed)
            fed = data.count
            var lastRow: Int32 = 0
            if WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil) != nil { rowsDecoded = Int(lastRow) }
            switch status {
            case VP8_STATUS_OK:
                complete = true
                rowsDecoded = properties?.height ?? rowsDecoded
            case VP8_STATUS_SUSPENDED: break
            default: throw WebPDecoder.error(status, name: name, detail: "after row \(rowsDecoded.grouped)")
            }
        }
        if complete { return .complete }
        if isFinal {
            throw TesseraError.truncated(path: name, detail: "after row \(rowsDecoded.grouped) of"
                                         + " \((properties?.height ?? 0).grouped)")
        }
        return .incomplete
    }

    /// Reads the header once enough bytes are in and sets up the decoder; false while more are needed.
    private func start(_ data: UnsafeRawBufferPointer) throws -> Bool {
        try CodecLibrary.webp.require()
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, &features)
        if status == VP8_STATUS_NOT_ENOUGH_DATA { return false }
        guard status == VP8_STATUS_OK else { throw WebPDecoder.error(status, name: name, detail: "in the header") }
        guard features.has_animation == 0 else { throw TesseraError.unsupported(path: name, feature: "animated WebP") }
        guard features.width > 0, features.height > 0 else {
            throw TesseraError.corrupt(path: name, detail: "the WebP has no image size")
        }
        let hasAlpha = features.has_alpha != 0
        format = hasAlpha ? .rgba8 : .rgb8
        let width = Int(features.width), height = Int(features.height)
        // An extended (VP8X) file flags an ICC profile in its header; the EXIF chunk comes after the image data.
        let extended = data.count > 20 && Array(data[12..<16]) == Array("VP8X".utf8)
        properties = ImageProperties(format: .webp, width: width, height: height, channels: hasAlpha ? 4 : 3,
                                     bitDepth: 8, colorModel: .rgb, hasAlpha: hasAlpha,
                                     hasICCProfile: extended && data[20] & 0x20 != 0)
        let rowBytes = width * format.bytesPerPixel
        let pixels = try UnsafeMutableRawBufferPointer.zeroed(
            MemoryBudget.bytes(width: width, rows: height, format: format) ?? Int.max, budget: budget,
            for: "decoding this WebP incrementally", path: name)
        self.pixels = pixels
        let config = UnsafeMutablePointer<WebPDecoderConfig>.allocate(capacity: 1)
        config.initialize(to: WebPDecoderConfig())
        self.config = config
        guard WebPInitDecoderConfig(config) != 0 else {
            throw TesseraError.unsupported(path: name, feature: "this libwebp version")
        }
        config.pointee.output.colorspace = hasAlpha ? MODE_RGBA : MODE_RGB
        config.pointee.output.is_external_memory = 1
        config.pointee.output.u.RGBA.rgba = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
        config.pointee.output.u.RGBA.stride = Int32(rowBytes)
        config.pointee.output.u.RGBA.size = pixels.count
        guard let decoder = WebPIDecode(nil, 0, config) else {
            throw TesseraError.corrupt(path: name, detail: "libwebp cannot decode this WebP")
        }
        self.decoder = decoder
        return true
    }

    func makeImage() -> PartialImage? {
        guard let properties, let pixels else { return nil }
        return PartialImage(pixels: ImageBuffer(width: properties.width, height: properties.height, format: format,
                                                copying: pixels.baseAddress!),
                            validRows: rowsDecoded, passes: nil, isComplete: complete)
    }
}
