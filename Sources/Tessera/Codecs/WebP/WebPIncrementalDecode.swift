import CWebP

/// One run of libwebp's incremental decoder over a file in memory, into a buffer it owns: the file is given to
/// libwebp a piece at a time until the rows asked for are decoded, so rows below the last one read are not decoded.
/// libwebp keeps pointers to the configuration and the output buffer, so both live on the heap with the decoder.
final class WebPIncrementalDecode {
    /// The image row that the buffer's first row is.
    let firstRow: Int
    /// The rows the buffer holds (to the bottom of the image).
    let rows: Int
    let rowBytes: Int
    /// The decoded pixels, `rowBytes` apart; rows from `rowsDecoded` on are still zero.
    let pixels: UnsafeMutableRawBufferPointer
    private(set) var rowsDecoded = 0
    private let name: String
    private let imageHeight: Int
    private let allowPartial: Bool
    private let data: [UInt8]
    private var fed = 0
    private let config: UnsafeMutablePointer<WebPDecoderConfig>
    private let decoder: OpaquePointer

    /// Bytes given to libwebp per step: small enough to stop soon after the last row needed.
    private static let step = 64 * 1024

    /// Prepares to decode `rows` rows of `rowBytes` bytes, from image row `firstRow` of `imageHeight`; `configure`
    /// sets the scaling or cropping that makes libwebp produce exactly those rows, in `format`.
    init(data: [UInt8], name: String, firstRow: Int, rows: Int, imageHeight: Int, rowBytes: Int, format: PixelFormat,
         allowPartial: Bool, configure: (inout WebPDecoderOptions) -> Void) throws {
        let config = UnsafeMutablePointer<WebPDecoderConfig>.allocate(capacity: 1)
        config.initialize(to: WebPDecoderConfig())
        guard WebPInitDecoderConfig(config) != 0 else {
            config.deallocate()
            throw TesseraError.unsupported(path: name, feature: "this libwebp version")
        }
        configure(&config.pointee.options)
        let pixels = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, rows * rowBytes), alignment: 16)
        pixels.initializeMemory(as: UInt8.self, repeating: 0)
        config.pointee.output.colorspace = format.hasAlpha ? MODE_RGBA : MODE_RGB
        config.pointee.output.is_external_memory = 1
        config.pointee.output.u.RGBA.rgba = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
        config.pointee.output.u.RGBA.stride = Int32(rowBytes)
        config.pointee.output.u.RGBA.size = pixels.count
        guard let decoder = WebPIDecode(nil, 0, config) else {
            pixels.deallocate()
            config.deallocate()
            throw TesseraError.corrupt(path: name, detail: "libwebp cannot decode this WebP with these settings")
        }
        self.firstRow = firstRow
        self.rows = rows
        self.rowBytes = rowBytes
        self.pixels = pixels
        self.name = name
        self.imageHeight = imageHeight
        self.allowPartial = allowPartial
        self.data = data
        self.config = config
        self.decoder = decoder
    }

    deinit {
        WebPIDelete(decoder)
        config.deallocate()
        pixels.deallocate()
    }

    /// Feeds the file to libwebp until at least `count` rows of the buffer are decoded. A truncated file throws,
    /// or with partial results allowed leaves the rows it did not reach zero.
    func decode(rows count: Int) throws {
        while rowsDecoded < count {
            guard fed < data.count else {
                if allowPartial {
                    rowsDecoded = rows
                    return
                }
                throw TesseraError.truncated(path: name, detail: "after row \((firstRow + rowsDecoded).grouped)"
                                             + " of \(imageHeight.grouped)")
            }
            let piece = min(Self.step, data.count - fed)
            let status = data.withUnsafeBufferPointer { WebPIAppend(decoder, $0.baseAddress! + fed, piece) }
            fed += piece
            var lastRow: Int32 = 0
            if WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil) != nil { rowsDecoded = Int(lastRow) }
            switch status {
            case VP8_STATUS_OK: rowsDecoded = rows
            case VP8_STATUS_SUSPENDED: continue
            default: throw WebPDecoder.error(status, name: name, detail: "at row \((firstRow + rowsDecoded).grouped)")
            }
        }
    }
}
