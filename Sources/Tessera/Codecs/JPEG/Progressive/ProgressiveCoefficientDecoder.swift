/// Decodes every coefficient of a Huffman-coded progressive JPEG a few rows of MCUs at a time, into a window
/// that holds only those rows: all scans are read in lockstep, one file cursor each, and for each run of MCU
/// rows every scan (in file order, as refinements need what earlier scans set) decodes its part of those rows
/// before any scan moves on. One pass over the file; memory is the window plus a 64 KB buffer per scan, where
/// libjpeg holds the whole image's coefficients until the last scan.
///
///     JPEGScanIndex -> one JPEGScanState per scan
///       -> decode(rows:) : for each scan, for each block of those rows: DC/AC first or refinement (T.81 G.1.2)
///       -> CoefficientWindow (rows firstRow..<endRow, 64 Int16 per block, natural order)
final class ProgressiveCoefficientDecoder: BandCoefficients {
    /// One scan being read: its header, its state and, for an interleaved scan, where each block of an MCU goes.
    private struct Cursor {
        let scan: JPEGScanIndex.Scan
        /// Per block of an MCU: the scan component's position, its frame component, and its block offset
        /// (column, row) within the MCU.
        let slots: [(position: Int, component: Int, column: Int, row: Int)]
        var state: JPEGScanState
        /// Set after an invalid code when partial output was asked for: the scan adds nothing more.
        var failed = false
    }

    let frame: JPEGFrameHeader
    private let name: String
    private let allowPartial: Bool
    private var cursors: [Cursor]
    /// MCU rows decoded so far by every scan.
    private(set) var decodedRows = 0

    /// Opens one cursor per scan of `index`; throws for what this decoder cannot do (scan parameters outside
    /// T.81's progressive limits).
    init(index: JPEGScanIndex, input: ImageInput, allowPartial: Bool) throws {
        frame = index.frame
        name = input.name
        self.allowPartial = allowPartial
        let frame = index.frame
        cursors = try index.scans.map { scan in
            let valid = scan.isDC ? scan.spectralEnd == 0 && (scan.approximationHigh > 0 || !scan.dcTables.isEmpty)
                : scan.components.count == 1 && scan.spectralEnd <= 63 && scan.spectralStart <= scan.spectralEnd
            guard valid else {
                throw TesseraError.corrupt(path: input.name, detail: "a progressive scan codes coefficients"
                                           + " \(scan.spectralStart) to \(scan.spectralEnd) of \(scan.components.count) components")
            }
            var slots: [(position: Int, component: Int, column: Int, row: Int)] = []
            for (position, component) in scan.components.enumerated() {
                let info = frame.components[component]
                for block in 0..<info.horizontal * info.vertical {
                    slots.append((position, component, block % info.horizontal, block / info.horizontal))
                }
            }
            return Cursor(scan: scan, slots: slots, state: JPEGScanState(scan: scan, input: try BufferedInput(input)))
        }
    }

    /// Decodes MCU rows `decodedRows..<end` from every scan into `window`, which must hold them (zeroed).
    func decode(through end: Int, into window: CoefficientWindow) throws {
        let rows = decodedRows..<min(end, frame.mcusDown)
        guard !rows.isEmpty else { return }
        for index in cursors.indices where !cursors[index].failed {
            try decode(&cursors[index], rows: rows, into: window)
            let reader = cursors[index].state.reader
            guard reader.overran && !allowPartial else { continue }
            if reader.marker == 0 { throw TesseraError.truncated(path: name, detail: "in scan \(index + 1), \(place(rows))") }
            throw TesseraError.corrupt(path: name, detail: "scan \(index + 1)'s data ends early, \(place(rows))")
        }
        decodedRows = rows.upperBound
    }

    /// The scans are read in order, across the whole width.
    var decodesInOrder: Bool { true }

    /// Refinement scans add to what earlier scans set.
    var writesWholeBlocks: Bool { false }

    /// Decodes MCU rows `rows`, which must start where the last call ended.
    func decode(rows: Range<Int>, into window: CoefficientWindow) throws {
        precondition(rows.isEmpty || rows.lowerBound == decodedRows)
        try decode(through: rows.upperBound, into: window)
    }

    private func place(_ rows: Range<Int>) -> String {
        "before row \((rows.upperBound * frame.maxVertical * 8).grouped) of \(frame.height.grouped)"
    }

    private func decode(_ cursor: inout Cursor, rows: Range<Int>, into window: CoefficientWindow) throws {
        let scan = cursor.scan
        // The state is a plain local, touched by no closure, so the block loops keep it in registers; the tables
        // are read out of the scan once, as a copy per block would retain and release their arrays.
        var state = cursor.state
        defer { cursor.state = state }
        let coding = JPEGScanState.Coding(scan: scan)
        if scan.components.count == 1 {
            // A one-component scan codes that component's blocks in raster order, with no MCU padding.
            let component = scan.components[0], info = frame.components[component]
            let firstRow = rows.lowerBound * info.vertical, lastRow = min(rows.upperBound * info.vertical, info.blocksDown)
            // AC scans, nearly all the work, call their procedure directly with the table bound once here.
            let acTable = scan.acTable ?? JPEGHuffmanTable.empty
            for blockRow in firstRow..<max(firstRow, lastRow) {
                let base = window.blockRow(component: component, row: blockRow)
                for column in 0..<info.blocksAcross {
                    guard try startUnit(&state, failed: &cursor.failed, rows: rows) else { return }
                    let block = base + column * 64, decoded: Bool
                    switch (coding.start == 0, coding.isFirst) {
                    case (true, _): decoded = state.decodeDCBlock(block, position: 0, coding: coding)
                    case (false, true):
                        decoded = state.decodeACFirst(block, table: acTable, start: coding.start, end: coding.end, shift: coding.shift)
                    case (false, false):
                        decoded = state.decodeACRefinement(block, table: acTable, start: coding.start, end: coding.end,
                                                           shift: coding.shift)
                    }
                    guard decoded else { return try invalid(failed: &cursor.failed, rows: rows) }
                }
            }
            return
        }
        for mcuRow in rows {
            let bases = cursor.slots.map { slot in
                window.blockRow(component: slot.component, row: mcuRow * frame.components[slot.component].vertical + slot.row)
                    + slot.column * 64
            }
            let steps = cursor.slots.map { frame.components[$0.component].horizontal * 64 }
            for mcu in 0..<frame.mcusAcross {
                guard try startUnit(&state, failed: &cursor.failed, rows: rows) else { return }
                for index in bases.indices {
                    guard state.decodeDCBlock(bases[index] + mcu * steps[index], position: cursor.slots[index].position,
                                              coding: coding) else { return try invalid(failed: &cursor.failed, rows: rows) }
                }
            }
        }
    }

    /// Starts a unit; false once the scan's data has run out and partial output was asked for: like libjpeg, the
    /// scan then adds nothing more, where decoding the zero bits fed past its end would add noise.
    @inline(__always)
    private func startUnit(_ state: inout JPEGScanState, failed: inout Bool, rows: Range<Int>) throws -> Bool {
        if state.reader.overran {
            guard allowPartial else { return true }
            failed = true
            return false
        }
        guard state.startUnit() || allowPartial else {
            throw TesseraError.corrupt(path: name, detail: "restart marker \((state.nextRestart - 1) & 7) is missing, \(place(rows))")
        }
        return true
    }

    private func invalid(failed: inout Bool, rows: Range<Int>) throws {
        guard allowPartial else {
            throw TesseraError.corrupt(path: name, detail: "a scan holds an invalid Huffman code, \(place(rows))")
        }
        failed = true
    }
}
