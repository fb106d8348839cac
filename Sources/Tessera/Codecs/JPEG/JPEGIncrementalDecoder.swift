import CCodecShims
import CJPEG

/// Decodes a JPEG as its bytes arrive, through libjpeg over a suspending source (`tessera_jpeg_stream`): each
/// update hands libjpeg a window of the caller's bytes from the first one it has not consumed, so nothing is
/// decoded twice and nothing is copied.
///
/// A single-scan (baseline) image is decoded into its rows as they arrive. A progressive (or any multi-scan)
/// image runs in libjpeg's buffered-image mode: its input is consumed only up to the end of the last complete
/// scan (`JPEGScanBoundaries`), and the frame at that scan is rendered when an image is asked for.
final class JPEGIncrementalDecoder: IncrementalDecoder {
    private let name: String
    private let budget: MemoryBudget
    /// libjpeg's state; released once the image is complete.
    private var stream: OpaquePointer?
    private var info: UnsafeMutablePointer<jpeg_decompress_struct>?
    /// The first byte of the file libjpeg has not consumed.
    private var consumed = 0
    private var boundaries = JPEGScanBoundaries()
    private var phase = Phase.header
    private(set) var properties: ImageProperties?
    private var format = PixelFormat.rgb8
    private var cmyk: CMYKConversion?
    /// The decoded image, `size.width * format.bytesPerPixel` bytes a row. An array, so that the image of a
    /// complete file is handed out without a copy (libjpeg keeps no pointer to it between calls).
    private var pixels: [UInt8] = []
    private var size = Size(width: 0, height: 0)
    /// Rows decoded top-down (single scan), or, for multi-scan images, the scans rendered into `pixels`.
    private var rowsDecoded = 0
    private var renderedScans = 0
    private var multiScan = false
    private var complete = false
    /// Set after a libjpeg error, when its state may no longer be used to render.
    private var broken = false
    private var scratch: [UInt8] = []

    private enum Phase {
        case header, start, decoding, finishing, done
    }

    init(name: String, budget: MemoryBudget) {
        self.name = name
        self.budget = budget
    }

    deinit {
        if let stream { tessera_jpeg_stream_destroy(stream) }
    }

    // MARK: - Feeding

    func update(_ data: UnsafeRawBufferPointer, isFinal: Bool) throws -> IncrementalProgress {
        if stream == nil && phase == .header {
            guard let created = tessera_jpeg_stream_create() else {
                throw TesseraError.io(path: name, detail: "cannot create a JPEG decoder")
            }
            stream = created
            info = tessera_jpeg_stream_info(created)
        }
        do {
            try advance(data)
        } catch {
            broken = true
            throw error
        }
        if phase == .done { return .complete }
        if isFinal {
            // Every row arrived and only the end marker is missing: the image is whole.
            if phase == .finishing && !multiScan { return finish() }
            throw TesseraError.truncated(path: name, detail: truncationPlace)
        }
        return phase == .header ? .readingHeader : .incomplete
    }

    private var truncationPlace: String {
        if phase == .header { return "in the header" }
        if multiScan { return "after scan \(boundaries.completedScans.grouped)" }
        return "after row \(rowsDecoded.grouped) of \(size.height.grouped)"
    }

    /// Runs libjpeg as far as the data allows, through the phases in order.
    private func advance(_ data: UnsafeRawBufferPointer) throws {
        guard let stream else { return }
        defer { tessera_jpeg_stream_set_input(stream, nil, 0) }
        if multiScan { boundaries.scan(data) }
        while true {
            // A multi-scan image is fed only to the end of its last complete scan.
            let end = multiScan ? min(data.count, max(consumed, boundaries.safeEnd)) : data.count
            tessera_jpeg_stream_set_input(stream, data.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) + consumed },
                                          end - consumed)
            let status: Int32
            switch phase {
            case .header: status = tessera_jpeg_stream_read_header(stream)
            case .start: status = tessera_jpeg_stream_start(stream, multiScan ? 1 : 0)
            case .decoding: status = multiScan ? tessera_jpeg_stream_consume(stream) : try readRows()
            case .finishing: status = tessera_jpeg_stream_finish(stream)
            case .done: return
            }
            consumed = end - tessera_jpeg_stream_unconsumed(stream)
            try check(status)
            guard status == 1 else { return }
            switch phase {
            case .header:
                try prepare()
                if multiScan { boundaries.scan(data) }
                phase = .start
            case .start: phase = .decoding
            case .decoding:
                if multiScan { try render() }
                phase = .finishing
            case .finishing: _ = finish()
            case .done: return
            }
        }
    }

    /// Chooses the output after the header: the format, the mode, and the image buffer, within the budget.
    private func prepare() throws {
        guard let info else { return }
        properties = JPEGDecoder.properties(of: info)
        switch info.pointee.jpeg_color_space {
        case JCS_GRAYSCALE:
            info.pointee.out_color_space = JCS_GRAYSCALE
            format = .gray8
        case JCS_CMYK, JCS_YCCK:
            info.pointee.out_color_space = JCS_CMYK
            cmyk = CMYKConversion(inverted: info.pointee.saw_Adobe_marker != 0)
        default:
            info.pointee.out_color_space = JCS_RGB
        }
        multiScan = jpeg_has_multiple_scans(info) != 0
        size = Size(width: Int(info.pointee.image_width), height: Int(info.pointee.image_height))
        let imageBytes = MemoryBudget.bytes(width: size.width, rows: size.height, format: format) ?? Int.max
        let coefficients = multiScan ? JPEGDecoder.coefficientBytes(info) : 0
        try budget.check(imageBytes.addingReportingOverflow(coefficients).partialValue,
                         for: "decoding this JPEG incrementally", path: name)
        pixels = [UInt8](repeating: 0, count: imageBytes)
    }

    /// Reads the rows the data allows into the image; 1 once every row is read, 2 when suspended.
    private func readRows() throws -> Int32 {
        guard let stream else { return 0 }
        let first = rowsDecoded
        let status = try pixels.withUnsafeMutableBytes { try readScanlines(stream, into: $0, from: first) }
        rowsDecoded = Int(info!.pointee.output_scanline)
        return status
    }

    /// Reads scanlines from the output's current one into `target` (converting CMYK); 1 once the last row is
    /// read, 2 when libjpeg suspends, 0 after an error.
    private func readScanlines(_ stream: OpaquePointer, into target: UnsafeMutableRawBufferPointer, from first: Int)
        throws -> Int32 {
        let rowBytes = size.width * format.bytesPerPixel
        var row = first
        while row < size.height {
            let batch = min(16, size.height - row)
            var read: JDIMENSION = 0
            let status: Int32
            if let cmyk {
                let stride = size.width * 4
                if scratch.count < stride * batch { scratch = [UInt8](repeating: 0, count: stride * batch) }
                status = scratch.withUnsafeMutableBytes { buffer in
                    var pointers = (0..<batch).map { Optional(buffer.baseAddress!.advanced(by: $0 * stride)
                                                                  .assumingMemoryBound(to: UInt8.self)) }
                    return tessera_jpeg_stream_read_rows(stream, &pointers, JDIMENSION(batch), &read)
                }
                scratch.withUnsafeBytes { buffer in
                    for index in 0..<Int(read) {
                        cmyk.convert(buffer.baseAddress! + index * stride,
                                     to: target.baseAddress! + (row + index) * rowBytes, width: size.width)
                    }
                }
            } else {
                var pointers = (0..<batch).map {
                    Optional(target.baseAddress!.advanced(by: (row + $0) * rowBytes).assumingMemoryBound(to: UInt8.self))
                }
                status = tessera_jpeg_stream_read_rows(stream, &pointers, JDIMENSION(batch), &read)
            }
            row += Int(read)
            if status != 1 { return status }
        }
        return 1
    }

    /// Renders the frame as of the last complete scan into the image (buffered-image mode).
    private func render() throws {
        guard let stream else { return }
        let scans = Int(tessera_jpeg_stream_completed_scans(stream))
        guard scans > renderedScans else { return }
        try check(tessera_jpeg_stream_start_output(stream, Int32(scans)), mustFinish: true)
        try check(pixels.withUnsafeMutableBytes { try readScanlines(stream, into: $0, from: 0) }, mustFinish: true)
        try check(tessera_jpeg_stream_finish_output(stream))
        renderedScans = scans
    }

    /// Frees libjpeg's state (for a progressive image, every coefficient) once the image is whole.
    private func finish() -> IncrementalProgress {
        if let stream { tessera_jpeg_stream_destroy(stream) }
        stream = nil
        info = nil
        phase = .done
        complete = true
        return .complete
    }

    /// Turns a shim's 0 into a corruption error; with `mustFinish`, a suspension is one too (rendering a complete
    /// scan needs no more data).
    private func check(_ status: Int32, mustFinish: Bool = false) throws {
        if status == 0 {
            let message = String(cString: tessera_jpeg_stream_message(stream!))
            throw TesseraError.corrupt(path: name, detail: "\(message) (\(truncationPlace))")
        }
        if status == 2 && mustFinish {
            throw TesseraError.corrupt(path: name, detail: "libjpeg wanted more data to render a complete scan")
        }
    }

    // MARK: - Images

    func makeImage() -> PartialImage? {
        guard properties != nil, !pixels.isEmpty else { return nil }
        if multiScan && !broken && !complete {
            // After a failure the coefficients of the scans before it are intact: render them if they are new.
            do { try render() } catch { broken = true }
        }
        let image = ImageBuffer(width: size.width, height: size.height, format: format, bytes: pixels)
        if multiScan {
            return PartialImage(pixels: image, validRows: renderedScans > 0 ? size.height : 0, passes: renderedScans,
                                isComplete: complete)
        }
        return PartialImage(pixels: image, validRows: rowsDecoded, passes: nil, isComplete: complete)
    }
}
