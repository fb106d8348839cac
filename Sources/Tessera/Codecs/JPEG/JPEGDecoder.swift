import CCodecShims
import CJPEG

/// Decodes JPEG through libjpeg-turbo: baseline and progressive, gray, YCbCr, RGB, CMYK and YCCK (Adobe-inverted
/// or not, converted to RGB), at 1/1, 1/2, 1/4 and 1/8 by DCT scaling, with `jpeg_crop_scanline` for columns and
/// `jpeg_skip_scanlines` for rows so a region costs only what it covers.
final class JPEGDecoder: ImageDecoder {
    private let session: JPEGSession
    private let inputName: String
    private let allowPartial: Bool
    /// libjpeg's CMYK output, converted to RGB in `decodeRows`; nil for gray and RGB output.
    private let cmyk: CMYKConversion?
    private var scratch: [UInt8] = []
    private var rowPointers: [UnsafeMutablePointer<UInt8>?] = []
    private(set) var size: Size
    let format: PixelFormat

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        let session = try JPEGSession(input: input)
        return withExtendedLifetime(session) { properties(of: session.info) }
    }

    /// What a decompressor whose header has been read says about its image.
    static func properties(of info: UnsafeMutablePointer<jpeg_decompress_struct>) -> ImageProperties {
        let model: ColorModel
        switch info.pointee.jpeg_color_space {
        case JCS_GRAYSCALE: model = .gray
        case JCS_CMYK: model = .cmyk
        case JCS_YCCK: model = .ycck
        default: model = .rgb
        }
        var orientation = 1, hasICC = false
        var marker = info.pointee.marker_list
        while let current = marker {
            let bytes = Array(UnsafeBufferPointer(start: current.pointee.data, count: Int(current.pointee.data_length)))
            if current.pointee.marker == JPEG_APP0 + 1, bytes.starts(with: Array("Exif\u{0}\u{0}".utf8)) {
                orientation = EXIF.orientation(in: bytes) ?? orientation
            } else if current.pointee.marker == JPEG_APP0 + 2, bytes.starts(with: Array("ICC_PROFILE\u{0}".utf8)) {
                hasICC = true
            }
            marker = current.pointee.next
        }
        return ImageProperties(
            format: .jpeg, width: Int(info.pointee.image_width), height: Int(info.pointee.image_height),
            channels: Int(info.pointee.num_components), bitDepth: Int(info.pointee.data_precision),
            colorModel: model, hasAlpha: false, orientation: orientation, hasICCProfile: hasICC,
            isProgressive: info.pointee.progressive_mode != 0)
    }

    static func nativeScales(for properties: ImageProperties) -> [Int] { [1, 2, 4, 8] }

    /// The decoder `JPEGDecodePlan` chooses: libjpeg's, or for a large progressive image one of the Swift decoders.
    static func makeDecoder(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws -> any RowDecoder {
        try JPEGDecodePlan(input: input, properties: properties, request: request)
            .makeDecoder(input: input, properties: properties, request: request)
    }

    /// Opens `input` and decodes the whole of it with libjpeg, whatever the plan would choose.
    convenience init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        try self.init(session: try JPEGSession(input: input), name: input.name, request: request)
    }

    /// Decodes the image whose header `session` has read; `name` is for error messages.
    init(session: JPEGSession, name: String, request: DecodeRequest) throws {
        self.session = session
        inputName = name
        allowPartial = request.allowPartial
        let info = session.info
        info.pointee.scale_num = 1
        info.pointee.scale_denom = UInt32(request.scale)
        switch info.pointee.jpeg_color_space {
        case JCS_GRAYSCALE:
            info.pointee.out_color_space = JCS_GRAYSCALE
            format = .gray8
            cmyk = nil
        case JCS_CMYK, JCS_YCCK:
            info.pointee.out_color_space = JCS_CMYK
            format = .rgb8
            cmyk = CMYKConversion(inverted: info.pointee.saw_Adobe_marker != 0)
        default:
            info.pointee.out_color_space = JCS_RGB
            format = .rgb8
            cmyk = nil
        }
        if info.pointee.progressive_mode != 0 {
            // libjpeg holds every coefficient of a progressive image until the last scan.
            try request.budget.check(Self.coefficientBytes(info), for: "decoding this progressive JPEG",
                                     path: name)
        }
        try session.check(tessera_jpeg_start_decompress(session.decoder), during: "starting to decode")
        size = Size(width: Int(info.pointee.output_width), height: Int(info.pointee.output_height))
        try request.budget.checkRows(width: size.width, rows: Int(info.pointee.rec_outbuf_height) + 16,
                                     format: PixelFormat(.rgba), for: "a row of pixels", path: name)
    }

    /// Makes libjpeg take each MCU's coefficients from `source`, called with `context`, instead of decoding the data
    /// after the header (`tessera_jpeg_feed_coefficients`): for a header that only gives a band's frame, whose
    /// coefficients Tessera decodes.
    func feedCoefficients(_ source: tessera_jpeg_mcu_source, context: UnsafeMutableRawPointer) throws {
        try session.check(tessera_jpeg_feed_coefficients(session.decoder, source, context),
                          during: "starting to feed coefficients")
    }

    /// The bytes of libjpeg's whole-image coefficient buffer: 64 two-byte coefficients per block, per component.
    static func coefficientBytes(_ info: UnsafeMutablePointer<jpeg_decompress_struct>) -> Int {
        var total = 0
        for index in 0..<Int(info.pointee.num_components) {
            let component = info.pointee.comp_info[index]
            let across = Int(component.width_in_blocks), down = Int(component.height_in_blocks)
            let horizontal = max(1, Int(component.h_samp_factor)), vertical = max(1, Int(component.v_samp_factor))
            let blocks = ((across + horizontal - 1) / horizontal * horizontal)
                * ((down + vertical - 1) / vertical * vertical)
            total += blocks * 64 * 2
        }
        return total
    }

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        guard columns != 0..<size.width else { return columns }
        // libjpeg-turbo 2.1's crop gives wrong columns inside it for 4x2 and 2x4 sampling at 1/2 and 1/4, however
        // wide the margin (checked against its whole decode, `djpeg -crop` too): such rare files are decoded
        // across their width.
        let info = session.info.pointee
        if info.max_h_samp_factor * info.max_v_samp_factor >= 8 { return 0..<size.width }
        // Chroma upsampling treats a crop's edges as the image's edges; one more iMCU on each side keeps the
        // requested columns identical to a full decode.
        let margin = Int(info.max_h_samp_factor) * Int(info.min_DCT_scaled_size)
        let first = max(0, columns.lowerBound - margin), last = min(size.width, columns.upperBound + margin)
        var offset = JDIMENSION(first), width = JDIMENSION(last - first)
        try session.check(tessera_jpeg_crop_scanline(session.decoder, &offset, &width), during: "cropping")
        size.width = Int(session.info.pointee.output_width)
        return Int(offset)..<Int(offset) + Int(width)
    }

    /// Rows skipped but not yet passed to libjpeg: consecutive skips are made one, as libjpeg-turbo 2.1 gives a
    /// wrong row after two skips within one MCU row at some samplings and scales (4:2:0 at 1/4, 4x2 at 1/1).
    private var pendingSkip = 0

    func skipRows(_ count: Int) throws { pendingSkip += count }

    /// Passes the rows skipped since the last decode to libjpeg.
    private func skipPending() throws {
        guard pendingSkip > 0 else { return }
        var skipped: JDIMENSION = 0
        try session.check(tessera_jpeg_skip_scanlines(session.decoder, JDIMENSION(pendingSkip), &skipped),
                          during: "skipping rows")
        pendingSkip = 0
        try checkTruncation()
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        try skipPending()
        guard let cmyk else { return try readScanlines(into: rows, bytesPerRow: bytesPerRow, count: count) }
        let width = size.width, stride = width * 4
        if scratch.count < stride * count { scratch = [UInt8](repeating: 0, count: stride * count) }
        try scratch.withUnsafeMutableBytes { buffer in
            try readScanlines(into: buffer.baseAddress!, bytesPerRow: stride, count: count)
            for row in 0..<count {
                cmyk.convert(buffer.baseAddress!.advanced(by: row * stride), to: rows.advanced(by: row * bytesPerRow),
                             width: width)
            }
        }
    }

    private func readScanlines(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        rowPointers.removeAll(keepingCapacity: true)
        for row in 0..<count { rowPointers.append(rows.advanced(by: row * bytesPerRow).assumingMemoryBound(to: UInt8.self)) }
        var read: JDIMENSION = 0
        CooperativeYield.point()
        try rowPointers.withUnsafeMutableBufferPointer { pointers in
            try session.check(tessera_jpeg_read_scanlines(session.decoder, pointers.baseAddress, JDIMENSION(count), &read),
                              during: "decoding")
        }
        try checkTruncation()
        if Int(read) < count {
            if let failure = session.readFailure { throw failure }
            throw TesseraError.truncated(path: inputName, detail: "after row \(Int(read).grouped) of \(size.height.grouped)")
        }
    }

    private func checkTruncation() throws { try session.checkMissingData(allowPartial: allowPartial) }
}

/// Converts libjpeg's CMYK output to RGB. Adobe applications write inverted CMYK (0 = full ink), flagged by the
/// APP14 marker; plain CMYK is 255 = full ink.
struct CMYKConversion {
    let inverted: Bool

    func convert(_ source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, width: Int) {
        let input = source.assumingMemoryBound(to: UInt8.self), output = target.assumingMemoryBound(to: UInt8.self)
        for x in 0..<width {
            let black = inverted ? Int(input[4 * x + 3]) : 255 - Int(input[4 * x + 3])
            for channel in 0..<3 {
                let ink = inverted ? Int(input[4 * x + channel]) : 255 - Int(input[4 * x + channel])
                output[3 * x + channel] = UInt8((ink * black + 127) / 255)
            }
        }
    }
}
