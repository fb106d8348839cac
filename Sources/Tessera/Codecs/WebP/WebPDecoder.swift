import CWebP

/// Decodes a WebP through libwebp's incremental decoder. libwebp needs the whole file in memory; the image is
/// decoded once, on the first row asked for, cropped to the restricted columns and to the rows from the first one
/// asked for (at full scale) or scaled by libwebp (at 1/2, 1/4, 1/8). WebP's 16383-pixel limit bounds that buffer,
/// which is still checked against the budget.
final class WebPDecoder: ImageDecoder {
    let size: Size
    let format: PixelFormat
    private let name: String
    private let data: [UInt8]
    private let request: DecodeRequest
    private let fullSize: Size
    private var columns: Range<Int>
    private var nextRow = 0
    /// The decoded rows from `top` to the bottom, of the restricted columns.
    private var decoded: (top: Int, pixels: [UInt8])?

    // MARK: - Properties

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        let data = try input.readAll(budget: .default, purpose: "the WebP file")
        let features = try Self.features(of: data, name: input.name)
        var orientation = 1, hasICCProfile = false
        data.withUnsafeBufferPointer { buffer in
            var webpData = WebPData(bytes: buffer.baseAddress, size: buffer.count)
            // The demuxer needs a complete file; a truncated one still has its size, reported by the features.
            guard let demux = WebPDemux(&webpData) else { return }
            defer { WebPDemuxDelete(demux) }
            hasICCProfile = WebPDemuxGetI(demux, WEBP_FF_FORMAT_FLAGS) & ICCP_FLAG.rawValue != 0
            var chunk = WebPChunkIterator()
            if WebPDemuxGetChunk(demux, "EXIF", 1, &chunk) != 0 {
                orientation = EXIF.orientation(in: Array(UnsafeBufferPointer(start: chunk.chunk.bytes,
                                                                              count: chunk.chunk.size))) ?? 1
                WebPDemuxReleaseChunkIterator(&chunk)
            }
        }
        let hasAlpha = features.has_alpha != 0
        return ImageProperties(format: .webp, width: Int(features.width), height: Int(features.height),
                               channels: hasAlpha ? 4 : 3, bitDepth: 8, colorModel: .rgb, hasAlpha: hasAlpha,
                               orientation: orientation, hasICCProfile: hasICCProfile, fileSize: data.count)
    }

    /// libwebp scales while decoding; beyond 1/8 a box shrink of the 1/8 image is as good and cheaper.
    static func nativeScales(for properties: ImageProperties) -> [Int] { [1, 2, 4, 8] }

    private static func features(of data: [UInt8], name: String) throws -> WebPBitstreamFeatures {
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        guard status == VP8_STATUS_OK else { throw error(status, name: name, detail: "in the header") }
        guard features.width > 0, features.height > 0 else {
            throw TesseraError.corrupt(path: name, detail: "the WebP has no image size")
        }
        return features
    }

    /// The Tessera error for a libwebp status other than OK.
    private static func error(_ status: VP8StatusCode, name: String, detail: String) -> TesseraError {
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA, VP8_STATUS_SUSPENDED: return .truncated(path: name, detail: detail)
        case VP8_STATUS_UNSUPPORTED_FEATURE: return .unsupported(path: name, feature: "a WebP feature libwebp lacks")
        case VP8_STATUS_OUT_OF_MEMORY: return .io(path: name, detail: "out of memory decoding the WebP")
        default: return .corrupt(path: name, detail: "invalid WebP data \(detail) (libwebp status \(status.rawValue))")
        }
    }

    // MARK: - Opening

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        guard [1, 2, 4, 8].contains(request.scale) else {
            throw TesseraError.invalidArgument("\(input.name): WebP decodes at 1/1, 1/2, 1/4 or 1/8, not 1/\(request.scale)")
        }
        data = try input.readAll(budget: request.budget, purpose: "the WebP file")
        let features = try Self.features(of: data, name: input.name)
        guard features.has_animation == 0 else {
            throw TesseraError.unsupported(path: input.name, feature: "animated WebP")
        }
        name = input.name
        self.request = request
        fullSize = Size(width: Int(features.width), height: Int(features.height))
        size = reducedSize(fullSize, by: request.scale)
        format = features.has_alpha != 0 ? .rgba8 : .rgb8
        columns = 0..<size.width
    }

    // MARK: - Rows

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        guard columns.lowerBound >= 0, columns.upperBound <= size.width, !columns.isEmpty else {
            throw TesseraError.invalidArgument("\(name): columns \(columns) outside the \(size.width)-pixel width")
        }
        // libwebp rounds a crop's left edge down to even (chroma is subsampled 2x2); ask for what it will do.
        // Scaled decodes are not cropped, as cropping happens before scaling and would round differently.
        self.columns = request.scale == 1 ? (columns.lowerBound & ~1)..<columns.upperBound : 0..<size.width
        decoded = nil
        return self.columns
    }

    func skipRows(_ count: Int) throws {
        // Nothing is decoded before the first row asked for, so skipped rows above it are never decoded.
        nextRow = min(size.height, nextRow + max(0, count))
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        guard count >= 0, nextRow + count <= size.height else {
            throw TesseraError.invalidArgument("\(name): rows past the bottom of the image")
        }
        let decoded = try self.decoded ?? decode(fromRow: request.scale == 1 ? nextRow & ~1 : 0)
        self.decoded = decoded
        let rowBytes = columns.count * format.bytesPerPixel
        decoded.pixels.withUnsafeBytes { pixels in
            for row in 0..<count {
                rows.advanced(by: row * bytesPerRow)
                    .copyMemory(from: pixels.baseAddress! + (nextRow - decoded.top + row) * rowBytes, byteCount: rowBytes)
            }
        }
        nextRow += count
    }

    /// Decodes rows `top` to the bottom of the restricted columns.
    private func decode(fromRow top: Int) throws -> (top: Int, pixels: [UInt8]) {
        let rows = size.height - top, width = columns.count
        try request.budget.checkRows(width: width, rows: rows, format: format, for: "the decoded WebP", path: name)
        let rowBytes = width * format.bytesPerPixel
        var pixels = [UInt8](repeating: 0, count: rowBytes * rows)
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw TesseraError.unsupported(path: name, feature: "this libwebp version")
        }
        if request.scale > 1 {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(size.width)
            config.options.scaled_height = Int32(size.height)
        } else if width != size.width || top > 0 {
            config.options.use_cropping = 1
            config.options.crop_left = Int32(columns.lowerBound)
            config.options.crop_top = Int32(top)
            config.options.crop_width = Int32(width)
            config.options.crop_height = Int32(rows)
        }
        config.output.colorspace = format.hasAlpha ? MODE_RGBA : MODE_RGB
        config.output.is_external_memory = 1
        let (status, decodedRows): (VP8StatusCode, Int32) = pixels.withUnsafeMutableBufferPointer { output in
            config.output.u.RGBA.rgba = output.baseAddress
            config.output.u.RGBA.stride = Int32(rowBytes)
            config.output.u.RGBA.size = output.count
            guard let decoder = WebPIDecode(nil, 0, &config) else { return (VP8_STATUS_INVALID_PARAM, 0) }
            defer { WebPIDelete(decoder) }
            let status = data.withUnsafeBufferPointer { WebPIUpdate(decoder, $0.baseAddress, $0.count) }
            var lastRow: Int32 = 0
            _ = WebPIDecGetRGB(decoder, &lastRow, nil, nil, nil)
            return (status, lastRow)
        }
        switch status {
        case VP8_STATUS_OK: break
        case VP8_STATUS_SUSPENDED where request.allowPartial: break
        case VP8_STATUS_SUSPENDED:
            throw TesseraError.truncated(path: name, detail: "after row \((top + Int(decodedRows)).grouped)"
                                         + " of \(size.height.grouped)")
        default:
            throw Self.error(status, name: name, detail: "at row \((top + Int(decodedRows)).grouped)")
        }
        return (top, pixels)
    }
}
