import CWebP

/// Decodes a WebP through libwebp's incremental decoder. libwebp needs the whole file in memory; decoding starts
/// on the first row asked for, cropped to the restricted columns and to the rows from there down (at full scale)
/// or scaled by libwebp (at 1/2, 1/4, 1/8), and goes only as far down as the rows asked for. The output buffer
/// reaches to the bottom of the image (libwebp writes into one buffer); WebP's 16383-pixel limit bounds it, and
/// it is checked against the budget.
final class WebPDecoder: ImageDecoder {
    let size: Size
    let format: PixelFormat
    private let name: String
    private let data: [UInt8]
    private let request: DecodeRequest
    private var columns: Range<Int>
    private var nextRow = 0
    /// Pixels decoded beyond a region's edges so that its own edge pixels are upsampled as in a full decode.
    private static let cropMargin = 16
    /// The decode under way, started on the first row asked for.
    private var decoding: WebPIncrementalDecode?

    // MARK: - Properties

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        let data = try input.readAll(budget: .default, purpose: "the WebP file")
        let features = try Self.features(of: data, name: input.name)
        try CodecLibrary.webpDemux.require()
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
        try CodecLibrary.webp.require()
        var features = WebPBitstreamFeatures()
        let status = data.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        guard status == VP8_STATUS_OK else { throw error(status, name: name, detail: "in the header") }
        guard features.width > 0, features.height > 0 else {
            throw TesseraError.corrupt(path: name, detail: "the WebP has no image size")
        }
        return features
    }

    /// The Tessera error for a libwebp status other than OK.
    static func error(_ status: VP8StatusCode, name: String, detail: String) -> TesseraError {
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
        size = reducedSize(Size(width: Int(features.width), height: Int(features.height)), by: request.scale)
        format = features.has_alpha != 0 ? .rgba8 : .rgb8
        columns = 0..<size.width
    }

    // MARK: - Rows

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        try checkColumns(columns, name: name)
        // libwebp upsamples chroma from the pixels inside a crop only, so its edge pixels differ from a full decode:
        // crop a margin wider, and start the crop on an even column, as libwebp rounds its left edge down to one.
        // Scaled decodes are not cropped, as cropping happens before scaling and would round differently.
        let margin = Self.cropMargin
        self.columns = request.scale == 1
            ? (max(0, columns.lowerBound - margin) & ~1)..<min(size.width, columns.upperBound + margin) : 0..<size.width
        decoding = nil
        return self.columns
    }

    func skipRows(_ count: Int) throws {
        // Nothing is decoded before the first row asked for, so skipped rows above it are never decoded.
        nextRow = min(size.height, nextRow + max(0, count))
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        try checkRows(from: nextRow, count: count, name: name)
        let decoding = try self.decoding
            ?? startDecoding(fromRow: request.scale == 1 ? max(0, nextRow - Self.cropMargin) & ~1 : 0)
        self.decoding = decoding
        let first = nextRow - decoding.firstRow, rowBytes = decoding.rowBytes
        try decoding.decode(rows: first + count)
        for row in 0..<count {
            rows.advanced(by: row * bytesPerRow)
                .copyMemory(from: decoding.pixels.baseAddress! + (first + row) * rowBytes, byteCount: rowBytes)
        }
        nextRow += count
    }

    /// Starts decoding at row `top` (at full scale; scaled decodes start at 0), cropped to the restricted columns.
    private func startDecoding(fromRow top: Int) throws -> WebPIncrementalDecode {
        let rows = size.height - top, width = columns.count
        try request.budget.checkRows(width: width, rows: rows, format: format, for: "the decoded WebP", path: name)
        let scale = request.scale, size = size, left = columns.lowerBound
        return try WebPIncrementalDecode(
            data: data, name: name, firstRow: top, rows: rows, imageHeight: size.height,
            rowBytes: width * format.bytesPerPixel, format: format, allowPartial: request.allowPartial) { options in
                if scale > 1 {
                    options.use_scaling = 1
                    options.scaled_width = Int32(size.width)
                    options.scaled_height = Int32(size.height)
                } else if width != size.width || top > 0 {
                    options.use_cropping = 1
                    options.crop_left = Int32(left)
                    options.crop_top = Int32(top)
                    options.crop_width = Int32(width)
                    options.crop_height = Int32(rows)
                }
            }
    }
}
