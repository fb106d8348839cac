import CCodecShims
import CJPEG

/// Decodes a progressive JPEG at full resolution (or 1/2, 1/4, 1/8) in memory bounded by a band of rows, for
/// images whose whole-image coefficient buffer, which libjpeg holds until the last scan, exceeds the budget.
/// `ProgressiveCoefficientDecoder` reads all scans in lockstep, a band of MCU rows at a time; each band's
/// coefficients, with one MCU row more above and below, are written by libjpeg as a sequential JPEG in memory
/// (the source's quantisation tables, standard Huffman tables) and decoded by `JPEGDecoder`, so the IDCT, DCT
/// scaling, fancy upsampling and colour conversion are libjpeg's own. The extra MCU rows give the upsampler the
/// neighbours it reads at the band's edges; their output is dropped, so bands join without seams and the rows
/// equal a one-shot libjpeg decode.
///
///     scans (lockstep) -> CoefficientWindow [band - 1, band + 1) -> libjpeg: coefficients -> sequential JPEG
///       -> JPEGDecoder (scale, crop) -> the band's rows
final class BandedJPEGDecoder: RowDecoder {
    private let input: ImageInput
    private let request: DecodeRequest
    /// The source's header, whose frame parameters and quantisation tables each band's JPEG copies.
    private let session: JPEGSession
    private let entropy: ProgressiveCoefficientDecoder
    private let window: CoefficientWindow
    private let frame: JPEGFrameHeader
    /// MCU rows per band.
    let bandRows: Int
    /// The current band's decoder, and its rows still to hand out.
    private var band: JPEGDecoder?
    private var bandRowsLeft = 0
    /// The first MCU row of the next band.
    private var nextRow = 0
    /// The columns asked for, applied to every band, and those the bands decode.
    private var columns: Range<Int>?
    private var decodedColumns: Range<Int>
    private(set) var size: Size
    let format: PixelFormat

    /// Decodes the image whose header `session` has read and whose scans `index` holds (`JPEGDecodePlan` says
    /// when); throws for sampling libjpeg cannot upsample.
    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest, session: JPEGSession,
         index: JPEGScanIndex) throws {
        self.input = input
        self.request = request
        self.session = session
        frame = index.frame
        guard frame.isProgressive, frame.hasIntegralSampling else {
            throw TesseraError.unsupported(path: input.name, feature: "progressive JPEG with sampling factors"
                                           + " libjpeg cannot upsample")
        }
        // A quarter of the budget for the window: libjpeg's copy of the band's coefficients, the band's JPEG
        // and its decoder's copy of it take about as much again.
        let rowBytes = CoefficientWindow.bytesPerMCURow(frame)
        bandRows = min(frame.mcusDown, request.budget.limit / 4 / rowBytes - 2)
        try request.budget.check(4 * rowBytes * 3, for: "decoding a progressive JPEG one band of rows at a time",
                                 path: input.name)
        window = CoefficientWindow(frame: frame, capacity: bandRows + 2)
        entropy = try ProgressiveCoefficientDecoder(index: index, input: input, allowPartial: request.allowPartial)
        size = reducedSize(Size(width: frame.width, height: frame.height), by: request.scale)
        decodedColumns = 0..<size.width
        format = properties.channels == 1 ? .gray8 : .rgb8
    }

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        guard columns != 0..<size.width else { return columns }
        self.columns = columns
        // Each band crops the same way; the first band, made now, says how.
        try advance(encode: true)
        return decodedColumns
    }

    func skipRows(_ count: Int) throws {
        var left = count
        while left > 0 {
            if bandRowsLeft == 0 {
                // Whole bands are skipped without making their JPEG; their coefficients are still decoded, as
                // the scans are read in order.
                let rows = outputRows(ofBandAt: nextRow)
                if rows.count <= left {
                    try advance(encode: false)
                    left -= rows.count
                    continue
                }
                try advance(encode: true)
            }
            let skipped = min(left, bandRowsLeft)
            try band!.skipRows(skipped)
            bandRowsLeft -= skipped
            left -= skipped
            if bandRowsLeft == 0 { band = nil }
        }
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        var done = 0
        while done < count {
            if bandRowsLeft == 0 { try advance(encode: true) }
            let take = min(count - done, bandRowsLeft)
            try band!.decodeRows(into: rows + done * bytesPerRow, bytesPerRow: bytesPerRow, count: take)
            bandRowsLeft -= take
            done += take
            if bandRowsLeft == 0 { band = nil }
        }
    }

    /// The output rows (after scaling) of the band starting at MCU row `first`.
    private func outputRows(ofBandAt first: Int) -> Range<Int> {
        let rowHeight = frame.maxVertical * 8 / request.scale
        let end = min(first + bandRows, frame.mcusDown)
        return first * rowHeight..<min(end * rowHeight, size.height)
    }

    /// Moves to the next band: decodes its MCU rows and the one below it into the window (keeping the one above),
    /// then, when `encode` is set, writes them as a JPEG and opens it, skipping the row above's output.
    private func advance(encode: Bool) throws {
        let first = nextRow, end = min(first + bandRows, frame.mcusDown)
        let windowStart = max(0, first - 1), windowEnd = min(end + 1, frame.mcusDown)
        window.slide(to: windowStart, end: windowEnd)
        try entropy.decode(through: windowEnd, into: window)
        nextRow = end
        let rows = outputRows(ofBandAt: first)
        guard encode else { return }
        let pixelTop = windowStart * frame.maxVertical * 8
        let pixelHeight = min(windowEnd * frame.maxVertical * 8, frame.height) - pixelTop
        let bytes = try encodeWindow(height: pixelHeight)
        let decoder = try JPEGDecoder(session: try JPEGSession(input: .bytes(bytes, name: input.name)), name: input.name,
                                      request: request)
        if let columns {
            decodedColumns = try decoder.restrictColumns(to: columns)
            size.width = decodedColumns.count
        }
        try decoder.skipRows((first - windowStart) * frame.maxVertical * 8 / request.scale)
        band = decoder
        bandRowsLeft = rows.count
    }

    /// The window's coefficients as a sequential JPEG `height` pixels tall.
    private func encodeWindow(height: Int) throws -> [UInt8] {
        guard let encoder = tessera_jpeg_encoder_create() else {
            throw TesseraError.io(path: input.name, detail: "cannot create a JPEG encoder")
        }
        defer { tessera_jpeg_encoder_destroy(encoder) }
        func check(_ status: Int32) throws {
            guard status == 0 else { return }
            let message = String(cString: tessera_jpeg_encoder_message(encoder))
            throw TesseraError.corrupt(path: input.name, detail: "\(message) (while re-encoding a band of coefficients)")
        }
        try check(tessera_jpeg_encoder_setup_coefficients(encoder, session.decoder, session.info.pointee.image_width,
                                                          JDIMENSION(height)))
        for (component, info) in frame.components.enumerated() {
            let blockRows = (height * info.vertical + 8 * frame.maxVertical - 1) / (8 * frame.maxVertical)
            for row in 0..<blockRows {
                guard let target = tessera_jpeg_encoder_block_row(encoder, Int32(component), JDIMENSION(row)) else {
                    try check(0)
                    return []
                }
                let source = window.blockRow(component: component, row: window.firstRow * info.vertical + row)
                UnsafeMutableRawPointer(target).copyMemory(from: source, byteCount: info.blocksAcross * 128)
            }
        }
        try check(tessera_jpeg_finish_compress(encoder))
        var count: UInt = 0
        let output = tessera_jpeg_encoder_output(encoder, &count)
        return Array(UnsafeBufferPointer(start: output, count: Int(count)))
    }
}
