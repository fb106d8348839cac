import CCodecShims
import CJPEG

/// Where a `BandedJPEGDecoder`'s coefficients come from: Tessera's own entropy decoding of the file.
protocol BandCoefficients: AnyObject {
    /// Whether MCU rows can only be decoded in order, every one of them, and across the whole width (a
    /// progressive file's scans in lockstep), rather than any rows and columns from saved states (an entropy index).
    var decodesInOrder: Bool { get }
    /// Decodes MCU rows `rows` (those `window` holds that it has not yet) of the window's columns into `window`.
    func decode(rows: Range<Int>, into window: CoefficientWindow) throws
    /// Whether `decode` writes every block of those rows whole (or, of a component a 1x1 IDCT scales, its DC, all
    /// that is read of it), so that the window need not clear them first.
    var writesWholeBlocks: Bool { get }
}

/// Decodes a JPEG whose coefficients Tessera's own entropy decoding gives (`BandCoefficients`), a band of MCU rows
/// at a time, in memory bounded by the band: a progressive JPEG whose whole-image coefficient buffer, which libjpeg
/// holds until the last scan, exceeds the budget, or a region of a sequential JPEG read from its entropy index.
/// Each band, with one MCU row more below where the upsampler reads it (and, for a region, one MCU column more on
/// each side), is decoded by libjpeg (`JPEGDecoder`) from a header of the band's size
/// (`JPEGBandHeader`) with the source's quantisation tables, its MCUs fed to libjpeg from a `CoefficientWindow`
/// in place of its entropy decoding (`tessera_jpeg_feed_coefficients`), so the IDCT, DCT scaling, fancy
/// upsampling and colour conversion are libjpeg's own and nothing is decoded twice. The extra MCUs give the
/// upsampler the neighbours it reads at the band's edges, and a band's rows are moved down by one (`outputRows`):
/// its first row, which would need the MCU row above, is the band above's last, so bands join without seams and
/// the rows equal a one-shot libjpeg decode. At 1/8, where libjpeg scales each component by a 1x1 or 2x2
/// IDCT, the band's rows are made from the coefficients directly (`JPEGEighthScale`).
///
///     BandCoefficients -> CoefficientWindow [band, band + 1) x [columns - 1, columns + 1)
///       -> libjpeg fed the window's MCUs (scale, crop) -> the band's rows
///       -> or at 1/8: JPEGEighthScale -> the band's rows
final class BandedJPEGDecoder: RowDecoder {
    private let input: ImageInput
    private let request: DecodeRequest
    private let coefficients: any BandCoefficients
    /// The coefficients libjpeg or `JPEGEighthScale` reads next. It holds a band and its rows of context where
    /// they must be decoded together (in order, or for the 1/8 rows), otherwise only the MCU row libjpeg is taking
    /// MCUs from, decoded as it gets there (`windowCapacity` rows).
    private var window: CoefficientWindow
    private let windowCapacity: Int
    /// MCU after MCU (handed to libjpeg in place) where only libjpeg reads the window, a row at a time.
    private let windowLayout: CoefficientWindow.Layout
    private let frame: JPEGFrameHeader
    /// What libjpeg reads before each band's MCUs.
    private let header: JPEGBandHeader
    /// MCU rows per band.
    let bandRows: Int
    /// MCU rows decoded below each band for libjpeg's upsampler: 1 where it reads the rows beside (fancy
    /// upsampling of vertically subsampled components, at every scale but 1/8), else 0 (`outputRows`).
    private let contextRows: Int
    /// What makes 1/8 rows from the coefficients, when the request is at 1/8 and libjpeg's scaling allows.
    private let eighthScale: JPEGEighthScale?
    /// The current band's decoder, and its rows still to hand out.
    private var band: (any RowDecoder)?
    private var bandRowsLeft = 0
    /// The next output row handed out or skipped.
    private var outputRow = 0
    /// The first MCU row of the next band.
    private var nextRow = 0
    /// The columns asked for, applied to every band, and those the bands decode.
    private var columns: Range<Int>?
    private var decodedColumns: Range<Int>
    /// The MCU rows of the current band, its context included; the row (from its first) and column of the next MCU
    /// libjpeg takes, and what stopped the feeding, if anything did.
    private var bandWindow = 0..<0
    private var fedRow = 0
    private var fedColumn = 0
    private var feedError: Error?
    /// Per block of an MCU in libjpeg's order (each component's blocks row by row): its component, row and column
    /// in the MCU; and, for the row being fed from a window of planes, where its block of the window's first MCU
    /// column is and the step to the next MCU's.
    private let slots: [(component: Int, row: Int, column: Int)]
    private let slotSources: UnsafeMutablePointer<UnsafePointer<Int16>>
    private let slotSteps: UnsafeMutablePointer<Int>
    private(set) var size: Size
    let format: PixelFormat

    /// MCU rows ahead from which a skip starts a new band fed to libjpeg instead of skipping in the current one:
    /// making a band's decoder costs about what libjpeg's entropy decoding of a few MCU rows of a region does.
    static let rowsWorthAJump = 4

    /// The most MCU rows a band of a region read from saved states at 1/8 takes (its window holds them all):
    /// rows below the region in its last band are decoded for nothing.
    static let regionBandRows = 16

    /// Decodes the image whose header `session` has read and whose frame is `frame` from `coefficients`
    /// (`JPEGDecodePlan` says when), bands of at most `maxBandRows` MCU rows when given; throws for sampling
    /// libjpeg cannot upsample.
    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest, session: JPEGSession,
         frame: JPEGFrameHeader, coefficients: any BandCoefficients, maxBandRows: Int? = nil) throws {
        self.input = input
        self.request = request
        self.frame = frame
        self.coefficients = coefficients
        guard frame.hasIntegralSampling else {
            throw TesseraError.unsupported(path: input.name, feature: "JPEG with sampling factors libjpeg cannot upsample")
        }
        guard let header = JPEGBandHeader(frame: frame, session: session) else {
            throw TesseraError.corrupt(path: input.name, detail: "a component's quantisation table is not defined")
        }
        self.header = header
        contextRows = request.scale < 8 && frame.components.contains { $0.vertical < frame.maxVertical } ? 1 : 0
        eighthScale = request.scale == 8 ? JPEGEighthScale(frame: frame, session: session) : nil
        windowLayout = coefficients.decodesInOrder || eighthScale != nil ? .planes : .mcus
        // A window of planes holds a whole band: a quarter of the budget for it, the rest for the rows made from
        // it and what takes them. One fed to libjpeg a row at a time lets a band be as tall as the rows asked for.
        let rowBytes = CoefficientWindow.bytesPerMCURow(frame)
        let tallest = windowLayout == .mcus || coefficients.decodesInOrder ? frame.mcusDown : Self.regionBandRows
        bandRows = max(1, min(maxBandRows ?? tallest,
                              windowLayout == .mcus ? frame.mcusDown : request.budget.limit / 4 / rowBytes - 2))
        windowCapacity = windowLayout == .planes ? bandRows + contextRows : 1
        try request.budget.check(4 * rowBytes * 3, for: "decoding a JPEG one band of rows at a time", path: input.name)
        // The window is made by the first band, or, for a region read from saved states, over its columns only
        // when they are known.
        window = CoefficientWindow(frame: frame, capacity: 0)
        size = reducedSize(Size(width: frame.width, height: frame.height), by: request.scale)
        decodedColumns = 0..<size.width
        format = properties.channels == 1 ? .gray8 : .rgb8
        var slots: [(component: Int, row: Int, column: Int)] = []
        for (component, info) in frame.components.enumerated() {
            for block in 0..<info.horizontal * info.vertical {
                slots.append((component, block / info.horizontal, block % info.horizontal))
            }
        }
        self.slots = slots
        slotSources = .allocate(capacity: slots.count)
        slotSteps = .allocate(capacity: slots.count)
    }

    deinit {
        slotSources.deallocate()
        slotSteps.deallocate()
    }

    /// A window of `windowCapacity` rows over MCU `columns` (nil: all), cleared only for coefficients that need it.
    private func makeWindow(columns: Range<Int>? = nil) -> CoefficientWindow {
        CoefficientWindow(frame: frame, capacity: windowCapacity, columns: columns, layout: windowLayout,
                          clearsNewRows: !coefficients.writesWholeBlocks)
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
            window = makeWindow(columns: first..<end)
        }
        // Each band crops the same way; the first band, made now, says how.
        try advance(decode: true)
        return decodedColumns
    }

    func skipRows(_ count: Int) throws {
        let target = outputRow + count
        defer { outputRow = target }
        var left = count
        if windowLayout == .mcus && left > 0 {
            // Saved states reach any row, and libjpeg can be fed a band from any: a skip reaching a few MCU rows on
            // drops the band for one starting at the row wanted, rather than have libjpeg decode the rows between.
            let row = min(mcuRow(holding: target), frame.mcusDown - 1)
            if band == nil || row >= mcuRow(holding: outputRow) + Self.rowsWorthAJump {
                band = nil
                bandRowsLeft = 0
                nextRow = row
                left = target - outputRows(ofBandAt: row).lowerBound
            }
        }
        while left > 0 {
            if bandRowsLeft > 0 && left >= bandRowsLeft && !coefficients.decodesInOrder {
                // Saved states reach any row: a band skipped whole is not decoded.
                left -= bandRowsLeft
                bandRowsLeft = 0
                band = nil
            }
            if bandRowsLeft == 0 {
                let next = outputRows(ofBandAt: nextRow).lowerBound
                if !coefficients.decodesInOrder {
                    // Go straight to the band holding the first row wanted.
                    nextRow = max(nextRow, min(mcuRow(holding: next + left), frame.mcusDown))
                    left -= outputRows(ofBandAt: nextRow).lowerBound - next
                    if left == 0 { return }
                }
                // Whole bands are skipped without decoding their rows; their coefficients are still decoded, as
                // the scans are read in order.
                let rows = outputRows(ofBandAt: nextRow)
                if rows.count <= left {
                    try advance(decode: false)
                    left -= rows.count
                    continue
                }
                try advance(decode: true)
            }
            let skipped = min(left, bandRowsLeft)
            try feeding { try band!.skipRows(skipped) }
            bandRowsLeft -= skipped
            left -= skipped
            if bandRowsLeft == 0 { band = nil }
        }
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        defer { outputRow += count }
        var done = 0
        while done < count {
            if bandRowsLeft == 0 { try advance(decode: true) }
            let take = min(count - done, bandRowsLeft)
            try feeding { try band!.decodeRows(into: rows + done * bytesPerRow, bytesPerRow: bytesPerRow, count: take) }
            bandRowsLeft -= take
            done += take
            if bandRowsLeft == 0 { band = nil }
        }
    }

    /// Output rows (after scaling) per MCU row.
    private var rowHeight: Int { mcuHeight / request.scale }

    /// The output rows (after scaling) of the band starting at MCU row `first`: its MCU rows' rows, all moved down
    /// by `contextRows`, but at the image's top. The first row of an MCU row reads the MCU row above through the
    /// upsampler, so it is made by the band above, which decodes the band's first MCU row anyway as its row of
    /// context below; so each band decodes one MCU row of context, not two.
    func outputRows(ofBandAt first: Int) -> Range<Int> {
        let end = min(first + bandRows, frame.mcusDown)
        return (first == 0 ? 0 : first * rowHeight + contextRows)..<min(end * rowHeight + contextRows, size.height)
    }

    /// The MCU row whose rows, as `outputRows` places them, include output row `row`.
    private func mcuRow(holding row: Int) -> Int { max(0, row - contextRows) / rowHeight }

    /// Moves to the next band. With `decode` set, makes its decoder: libjpeg over a header of the band's size (its
    /// row of context and its columns included), fed the band's MCUs as it asks for them, or at 1/8 the rows made
    /// from the window; and skips the output rows the band above makes. Otherwise only decodes its coefficients,
    /// when the scans must be read in order.
    private func advance(decode: Bool) throws {
        band = nil
        if window.capacity == 0 { window = makeWindow() }
        // Scans read in order go through every row: those of the last band that libjpeg did not ask for are
        // decoded now.
        if coefficients.decodesInOrder && !bandWindow.isEmpty { try fill(row: bandWindow.upperBound - 1, of: bandWindow) }
        let first = nextRow, end = min(first + bandRows, frame.mcusDown)
        let windowRows = first..<min(end + contextRows, frame.mcusDown)
        bandWindow = windowRows
        // libjpeg clears the MCUs it is handed in place once it has read them: the row of context the last band
        // took is spent.
        if windowLayout == .mcus { window.slide(to: max(first, window.firstRow), end: max(first, window.firstRow)) }
        nextRow = end
        let rows = outputRows(ofBandAt: first)
        guard decode else {
            if coefficients.decodesInOrder { try fill(row: windowRows.upperBound - 1, of: windowRows) }
            return
        }
        let left = window.columns.lowerBound * mcuWidth
        let pixelWidth = min(window.columns.upperBound * mcuWidth, frame.width) - left
        let pixelHeight = min(windowRows.upperBound * mcuHeight, frame.height) - windowRows.lowerBound * mcuHeight
        let decoder: any RowDecoder
        if let eighthScale {
            try fill(row: windowRows.upperBound - 1, of: windowRows)
            decoder = eighthScale.band(of: window, width: pixelWidth, height: pixelHeight)
        } else {
            let bytes = header.bytes(width: pixelWidth, height: pixelHeight)
            let jpeg = try JPEGDecoder(session: try JPEGSession(input: .bytes(bytes, name: input.name)), name: input.name,
                                       request: request)
            try jpeg.feedCoefficients(Self.mcuSource, context: Unmanaged.passUnretained(self).toOpaque())
            fedRow = 0
            fedColumn = 0
            decoder = jpeg
        }
        band = decoder
        try feeding {
            if let columns {
                // The band's image starts `left` pixels into the source's.
                let shift = left / request.scale
                let decoded = try decoder.restrictColumns(to: columns.lowerBound - shift..<columns.upperBound - shift)
                decodedColumns = decoded.lowerBound + shift..<decoded.upperBound + shift
                size.width = decodedColumns.count
            }
            try decoder.skipRows(rows.lowerBound - first * rowHeight)
        }
        bandRowsLeft = rows.count
    }

    /// Makes the window hold MCU row `row` of the band whose rows (context included) are `rows`: when it does not
    /// yet, slides it down, keeping what it still covers, and decodes the rows it lacks, as many as it holds.
    private func fill(row: Int, of rows: Range<Int>) throws {
        guard row >= window.endRow else { return }
        let end = min(row + window.capacity, rows.upperBound)
        let first = max(window.firstRow, rows.lowerBound, end - window.capacity)
        let held = window.endRow
        window.slide(to: first, end: end)
        try coefficients.decode(rows: max(held, first)..<end, into: window)
    }

    /// Runs a call into the band's decoder, throwing what stopped the feeding when libjpeg was stopped by it.
    private func feeding(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            if let feedError {
                self.feedError = nil
                throw feedError
            }
            throw error
        }
    }

    /// libjpeg's source of MCUs: the decoder whose `self` is `context` feeds the next one.
    private static let mcuSource: tessera_jpeg_mcu_source = { context, blocks, _ in
        Unmanaged<BandedJPEGDecoder>.fromOpaque(context!).takeUnretainedValue().feed(blocks) ? 1 : 0
    }

    /// Gives libjpeg the next MCU of the band being fed (into `blocks`; nil when it skips the MCU), decoding its
    /// row first when the window lacks it. An MCU-ordered window's blocks are handed over in place: libjpeg's
    /// single-pass coefficient controller reads the MCU through the pointers in `blocks` before asking for the
    /// next, then clears the blocks they start at, which are then spent. Otherwise they are copied. False, with
    /// `feedError` set, when decoding fails.
    private func feed(_ blocks: UnsafeMutablePointer<JBLOCKROW?>?) -> Bool {
        if fedColumn == 0 {
            let row = bandWindow.lowerBound + fedRow
            guard row < bandWindow.upperBound else {
                feedError = TesseraError.corrupt(path: input.name, detail: "libjpeg asked for more MCUs than a band holds")
                return false
            }
            do {
                try fill(row: row, of: bandWindow)
            } catch {
                feedError = error
                return false
            }
            if window.layout == .planes {
                for (index, slot) in slots.enumerated() {
                    let (first, step) = window.placement(row: row, component: slot.component, blockRow: slot.row,
                                                         blockColumn: slot.column)
                    slotSources[index] = UnsafePointer(first)
                    slotSteps[index] = step
                }
            }
        }
        if let blocks {
            switch window.layout {
            case .mcus:
                let first = UnsafeMutableRawPointer(window.mcu(row: bandWindow.lowerBound + fedRow, column: fedColumn))
                for index in 0..<slots.count {
                    blocks[index] = (first + index * 128).assumingMemoryBound(to: JBLOCK.self)
                }
            case .planes:
                for index in 0..<slots.count {
                    UnsafeMutableRawPointer(blocks[index]!).copyMemory(from: slotSources[index] + fedColumn * slotSteps[index],
                                                                       byteCount: 128)
                }
            }
        }
        fedColumn += 1
        if fedColumn == window.columns.count {
            fedColumn = 0
            fedRow += 1
        }
        return true
    }
}
