import CCodecShims
import CJPEG

/// Where a `BandedJPEGDecoder`'s coefficients come from: Tessera's own entropy decoding of the file.
protocol BandCoefficients: AnyObject {
    /// Whether MCU rows can only be decoded in order, every one of them, and across the whole width (a
    /// progressive file's scans in lockstep), rather than any rows and columns from saved states (an entropy index).
    var decodesInOrder: Bool { get }
    /// Decodes MCU rows `rows` (those `window` holds that it has not yet) of the window's columns into `window`.
    func decode(rows: Range<Int>, into window: CoefficientWindow) throws
}

/// Decodes a JPEG whose coefficients Tessera's own entropy decoding gives (`BandCoefficients`), a band of MCU rows
/// at a time, in memory bounded by the band: a progressive JPEG whose whole-image coefficient buffer, which libjpeg
/// holds until the last scan, exceeds the budget, or a region of a sequential JPEG read from its entropy index.
/// Each band's coefficients, with one MCU row more above and below where the upsampler reads them (and, for a
/// region, one MCU column more on each side), are written by libjpeg as a sequential JPEG in memory (the source's
/// quantisation tables, standard Huffman tables) and decoded by `JPEGDecoder`, so the IDCT, DCT scaling, fancy upsampling and colour conversion
/// are libjpeg's own. The extra MCUs give the upsampler the neighbours it reads at the band's edges; their output
/// is dropped, so bands join without seams and the rows equal a one-shot libjpeg decode. At 1/8, where libjpeg
/// scales each component by a 1x1 or 2x2 IDCT, the band's rows are made from the coefficients directly
/// (`JPEGEighthScale`), the same rows without the trip through libjpeg.
///
///     BandCoefficients -> CoefficientWindow [band - 1, band + 1) x [columns - 1, columns + 1)
///       -> libjpeg: coefficients -> sequential JPEG -> JPEGDecoder (scale, crop) -> the band's rows
///       -> or at 1/8: JPEGEighthScale -> the band's rows
final class BandedJPEGDecoder: RowDecoder {
    private let input: ImageInput
    private let request: DecodeRequest
    /// The source's header, whose frame parameters and quantisation tables each band's JPEG copies.
    private let session: JPEGSession
    private let coefficients: any BandCoefficients
    private var window: CoefficientWindow
    private let frame: JPEGFrameHeader
    /// MCU rows per band.
    let bandRows: Int
    /// MCU rows decoded above and below each band for libjpeg's upsampler: 1 where it reads the rows beside (fancy
    /// upsampling of vertically subsampled components, at every scale but 1/8), else 0.
    private let contextRows: Int
    /// MCU rows the window holds: a band and its rows of context.
    private let windowRows: Int
    /// What makes 1/8 rows from the coefficients, when the request is at 1/8 and libjpeg's scaling allows.
    private let eighthScale: JPEGEighthScale?
    /// The current band's decoder, and its rows still to hand out.
    private var band: (any RowDecoder)?
    private var bandRowsLeft = 0
    /// The first MCU row of the next band.
    private var nextRow = 0
    /// The columns asked for, applied to every band, and those the bands decode.
    private var columns: Range<Int>?
    private var decodedColumns: Range<Int>
    private(set) var size: Size
    let format: PixelFormat

    /// The most MCU rows a band of a region read from saved states takes: rows below the region in its last band
    /// are decoded for nothing.
    static let regionBandRows = 16

    /// Decodes the image whose header `session` has read and whose frame is `frame` from `coefficients`
    /// (`JPEGDecodePlan` says when), bands of at most `maxBandRows` MCU rows when given; throws for sampling
    /// libjpeg cannot upsample.
    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest, session: JPEGSession,
         frame: JPEGFrameHeader, coefficients: any BandCoefficients, maxBandRows: Int? = nil) throws {
        self.input = input
        self.request = request
        self.session = session
        self.frame = frame
        self.coefficients = coefficients
        guard frame.hasIntegralSampling else {
            throw TesseraError.unsupported(path: input.name, feature: "JPEG with sampling factors libjpeg cannot upsample")
        }
        // A quarter of the budget for the window: libjpeg's copy of the band's coefficients, the band's JPEG
        // and its decoder's copy of it take about as much again.
        let rowBytes = CoefficientWindow.bytesPerMCURow(frame)
        bandRows = max(1, min(frame.mcusDown, request.budget.limit / 4 / rowBytes - 2,
                              maxBandRows ?? (coefficients.decodesInOrder ? frame.mcusDown : Self.regionBandRows)))
        contextRows = request.scale < 8 && frame.components.contains { $0.vertical < frame.maxVertical } ? 1 : 0
        windowRows = bandRows + 2 * contextRows
        try request.budget.check(4 * rowBytes * 3, for: "decoding a JPEG one band of rows at a time", path: input.name)
        // A region's window, over its columns only, is made when the columns are known.
        window = CoefficientWindow(frame: frame, capacity: coefficients.decodesInOrder ? windowRows : 0)
        size = reducedSize(Size(width: frame.width, height: frame.height), by: request.scale)
        decodedColumns = 0..<size.width
        format = properties.channels == 1 ? .gray8 : .rgb8
        eighthScale = request.scale == 8 ? JPEGEighthScale(frame: frame, session: session) : nil
    }

    /// MCU width and height in pixels at full scale.
    private var mcuWidth: Int { frame.maxHorizontal * 8 }
    private var mcuHeight: Int { frame.maxVertical * 8 }

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        guard columns != 0..<size.width else { return columns }
        self.columns = columns
        if !coefficients.decodesInOrder {
            // Only the MCU columns the columns meet, and one more on each side for the upsampler.
            let scaledWidth = mcuWidth / request.scale
            let first = max(0, columns.lowerBound / scaledWidth - 1)
            let end = min(frame.mcusAcross, (columns.upperBound + scaledWidth - 1) / scaledWidth + 1)
            window = CoefficientWindow(frame: frame, capacity: windowRows, columns: first..<end)
        }
        // Each band crops the same way; the first band, made now, says how.
        try advance(encode: true)
        return decodedColumns
    }

    func skipRows(_ count: Int) throws {
        var left = count
        while left > 0 {
            if bandRowsLeft == 0 {
                if !coefficients.decodesInOrder {
                    // Saved states reach any row: go straight to the MCU row holding the first row wanted.
                    let whole = min(left / (mcuHeight / request.scale), frame.mcusDown - nextRow)
                    nextRow += whole
                    left -= whole * mcuHeight / request.scale
                    if left == 0 { return }
                }
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
        let rowHeight = mcuHeight / request.scale
        let end = min(first + bandRows, frame.mcusDown)
        return first * rowHeight..<min(end * rowHeight, size.height)
    }

    /// Moves to the next band: decodes its MCU rows and the one below it into the window (keeping the one above),
    /// then, when `encode` is set, writes them as a JPEG and opens it, skipping the row above's output.
    private func advance(encode: Bool) throws {
        if window.capacity == 0 { window = CoefficientWindow(frame: frame, capacity: windowRows) }
        let first = nextRow, end = min(first + bandRows, frame.mcusDown)
        let windowStart = max(0, first - contextRows), windowEnd = min(end + contextRows, frame.mcusDown)
        let held = window.endRow
        window.slide(to: windowStart, end: windowEnd)
        try coefficients.decode(rows: max(held, windowStart)..<windowEnd, into: window)
        nextRow = end
        let rows = outputRows(ofBandAt: first)
        guard encode else { return }
        let left = window.columns.lowerBound * mcuWidth
        let pixelWidth = min(window.columns.upperBound * mcuWidth, frame.width) - left
        let pixelHeight = min(windowEnd * mcuHeight, frame.height) - windowStart * mcuHeight
        let decoder: any RowDecoder
        if let eighthScale {
            decoder = eighthScale.band(of: window, width: pixelWidth, height: pixelHeight)
        } else {
            let bytes = try encodeWindow(width: pixelWidth, height: pixelHeight)
            decoder = try JPEGDecoder(session: try JPEGSession(input: .bytes(bytes, name: input.name)), name: input.name,
                                      request: request)
        }
        if let columns {
            // The band's image starts `left` pixels into the source's.
            let shift = left / request.scale
            let decoded = try decoder.restrictColumns(to: columns.lowerBound - shift..<columns.upperBound - shift)
            decodedColumns = decoded.lowerBound + shift..<decoded.upperBound + shift
            size.width = decodedColumns.count
        }
        try decoder.skipRows((first - windowStart) * mcuHeight / request.scale)
        band = decoder
        bandRowsLeft = rows.count
    }

    /// The window's coefficients as a sequential JPEG `width` x `height` pixels. At 1/8 libjpeg reads only the DC
    /// coefficient of a component at full sampling (its 1 x 1 IDCT), so only that is copied, and the JPEG is
    /// quicker to write and read.
    private func encodeWindow(width: Int, height: Int) throws -> [UInt8] {
        guard let encoder = tessera_jpeg_encoder_create() else {
            throw TesseraError.io(path: input.name, detail: "cannot create a JPEG encoder")
        }
        defer { tessera_jpeg_encoder_destroy(encoder) }
        func check(_ status: Int32) throws {
            guard status == 0 else { return }
            let message = String(cString: tessera_jpeg_encoder_message(encoder))
            throw TesseraError.corrupt(path: input.name, detail: "\(message) (while re-encoding a band of coefficients)")
        }
        try check(tessera_jpeg_encoder_setup_coefficients(encoder, session.decoder, JDIMENSION(width), JDIMENSION(height)))
        for (component, info) in frame.components.enumerated() {
            let blockRows = (height * info.vertical + mcuHeight - 1) / mcuHeight
            let blocksAcross = (width * info.horizontal + mcuWidth - 1) / mcuWidth
            for row in 0..<blockRows {
                guard let target = tessera_jpeg_encoder_block_row(encoder, Int32(component), JDIMENSION(row)) else {
                    try check(0)
                    return []
                }
                let source = window.blockRow(component: component, row: window.firstRow * info.vertical + row)
                if request.scale == 8 && info.horizontal == frame.maxHorizontal && info.vertical == frame.maxVertical {
                    let blocks = UnsafeMutableRawPointer(target).assumingMemoryBound(to: Int16.self)
                    blocks.update(repeating: 0, count: blocksAcross * 64)
                    for block in 0..<blocksAcross { blocks[block * 64] = source[block * 64] }
                } else {
                    UnsafeMutableRawPointer(target).copyMemory(from: source, byteCount: blocksAcross * 128)
                }
            }
        }
        try check(tessera_jpeg_finish_compress(encoder))
        var count: UInt = 0
        let output = tessera_jpeg_encoder_output(encoder, &count)
        return Array(UnsafeBufferPointer(start: output, count: Int(count)))
    }
}
