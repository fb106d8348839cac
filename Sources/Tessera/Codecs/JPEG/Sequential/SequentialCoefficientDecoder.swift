/// Decodes the coefficients of a sequential Huffman-coded JPEG (SOF0 baseline or SOF1 extended, 8-bit) whose one
/// scan holds every component, with or without restart intervals, MCU by MCU in file order from the scan's start
/// or from any state saved on the way (`JPEGScanState.Resumable`, what `JPEGEntropyIndex` keeps). MCUs inside
/// the window given are stored there (of the components marked DC-only, the DC alone); the others are decoded for
/// their DC predictions and dropped, so nothing is allocated per block. Coefficients equal
/// `jpeg_read_coefficients`'.
///
///     JPEGScanIndex -> JPEGScanState (reader, DC predictions, restarts)
///       -> per MCU: per block, decodeSequentialBlock (T.81 F.2.2) -> CoefficientWindow (its DC alone,
///          of a DC-only component), or nowhere
final class SequentialCoefficientDecoder {
    /// Per block of an MCU: the scan component's position, its frame component and its block offset (column, row)
    /// within the MCU.
    private struct Slot {
        let position: Int
        let component: Int
        let column: Int
        let row: Int
    }

    private struct BlockCoding {
        let position: Int
        let dc: JPEGHuffmanTable.Lookup
        let ac: JPEGHuffmanTable.Lookup
        /// Whether only the DC coefficient is kept.
        let dcOnly: Bool
    }

    let frame: JPEGFrameHeader
    private let name: String
    private let scan: JPEGScanIndex.Scan
    private let slots: [Slot]
    /// Per slot, what the block loop needs: the scan component's position and its tables (pointing into `scan`'s).
    private let codings: UnsafeMutablePointer<BlockCoding>
    /// Per slot, where the current MCU row's blocks go (`binding`): the block of MCU column 0 and the step from one
    /// MCU to the next.
    private let bases: UnsafeMutablePointer<UnsafeMutablePointer<Int16>>
    private let steps: UnsafeMutablePointer<Int>
    private var state: JPEGScanState
    /// Where the DC of a block no window holds goes.
    private let scratch: UnsafeMutablePointer<Int16>
    /// The next MCU to decode, counted row by row from the top left.
    private(set) var position = 0
    /// Whether that MCU's unit has been started (`JPEGScanState.startUnit`): so it is in the states saved.
    private var unitStarted = false
    /// MCUs in the image.
    var mcuCount: Int { frame.mcusAcross * frame.mcusDown }

    /// Whether this decoder reads `index`'s file: one sequential Huffman-coded 8-bit scan of every component
    /// (interleaved, or a single component sampled 1x1), with sampling libjpeg can upsample.
    static func canDecode(_ index: JPEGScanIndex) -> Bool {
        let frame = index.frame
        guard frame.isHuffmanSequential, frame.precision == 8, frame.hasIntegralSampling, index.scans.count == 1,
              let scan = index.scans.first else { return false }
        let single = frame.components.count == 1
        return scan.components.count == frame.components.count && scan.spectralStart == 0 && scan.spectralEnd == 63
            && scan.approximationHigh == 0 && scan.approximationLow == 0
            && (!single || (frame.components[0].horizontal == 1 && frame.components[0].vertical == 1))
    }

    /// Opens the scan of `index`, whose file is `input`, keeping only the DC coefficient of the frame components
    /// `dcOnly` marks (where a window is given; none is kept where not); throws `unsupported` for files
    /// `canDecode` refuses.
    init(index: JPEGScanIndex, input: ImageInput, dcOnly: [Bool] = []) throws {
        guard Self.canDecode(index), let scan = index.scans.first else {
            throw TesseraError.unsupported(path: input.name, feature: "this kind of JPEG in Tessera's sequential decoder"
                                           + " (it reads one baseline or extended 8-bit scan of every component)")
        }
        frame = index.frame
        name = input.name
        self.scan = scan
        var slots: [Slot] = []
        for (position, component) in scan.components.enumerated() {
            let info = frame.components[component]
            for block in 0..<info.horizontal * info.vertical {
                slots.append(Slot(position: position, component: component, column: block % info.horizontal,
                                  row: block / info.horizontal))
            }
        }
        self.slots = slots
        state = JPEGScanState(scan: scan, input: try BufferedInput(input))
        scratch = UnsafeMutablePointer<Int16>.allocate(capacity: 1)
        codings = UnsafeMutablePointer<BlockCoding>.allocate(capacity: slots.count)
        for (index, slot) in slots.enumerated() {
            (codings + index).initialize(to: BlockCoding(position: slot.position, dc: scan.dcTables[slot.position].lookup,
                                                         ac: scan.acTables[slot.position].lookup,
                                                         dcOnly: dcOnly.indices.contains(slot.component) && dcOnly[slot.component]))
        }
        bases = UnsafeMutablePointer<UnsafeMutablePointer<Int16>>.allocate(capacity: slots.count)
        steps = UnsafeMutablePointer<Int>.allocate(capacity: slots.count)
    }

    deinit {
        scratch.deallocate()
        codings.deallocate()
        bases.deallocate()
        steps.deallocate()
    }

    /// Continues from `state`, saved before MCU `position` (its unit started: past the restart marker before it).
    func resume(at state: JPEGScanState.Resumable, position: Int) {
        self.state.resume(at: state)
        self.position = position
        unitStarted = true
    }

    /// Decodes MCUs `position..<end`, storing those `window` holds (its rows and columns).
    func decode(through end: Int, into window: CoefficientWindow?) throws {
        var ignored: [JPEGScanState.Resumable] = []
        try decode(through: end, into: window, recordEvery: 0, states: &ignored)
    }

    /// Decodes MCUs `position..<end`, storing those `window` holds (none when nil) and appending to `states` the
    /// state before every MCU whose column is a multiple of `every`, in order, each taken once its unit has
    /// started, so past any restart marker before it and at a bit position (what an entropy index keeps).
    func record(through end: Int, every: Int, into states: inout [JPEGScanState.Resumable],
                window: CoefficientWindow? = nil) throws {
        try decode(through: end, into: window, recordEvery: every, states: &states)
    }

    /// Continues from a guessed state: bit `bit` of the file taken as an MCU's start with every DC prediction 0,
    /// counted as MCU 0 (speculative decoding, `SpeculativeIndexBuild`). Only scans without restart intervals.
    func guess(bit: Int) {
        state.resume(at: JPEGScanState.Resumable(reader: JPEGEntropyReader.Snapshot(offset: bit / 8, skip: bit % 8),
                                                 predictions: SIMD4(), restartsLeft: 0, nextRestart: 0, started: false))
        position = 0
        unitStarted = false
    }

    /// How `trace` stopped.
    enum TraceEnd: Equatable {
        /// At an MCU's start at or past the bit asked for (that MCU not traced).
        case reached
        /// At an MCU's start (the last traced) that `against` traced too, at the MCU given there.
        case synchronised(theirs: Int)
        /// `against` ends before the bits reached: nothing of it can be met any more.
        case passed
        /// With `limit` states traced, or where the data ends (the MCU being decoded then not complete).
        case ended
        /// At bits that form no valid code before the data's end: the guess was wrong, or the data is damaged.
        case invalid
    }

    /// Decodes MCUs without keeping their coefficients, appending the state before each to `trace`, until an MCU
    /// starts at or after bit `stop`, `trace` holds `limit` states, the data ends, a code is invalid, or an MCU
    /// starts where `against` (another trace of the same scan, from `cursor` on) has one: from there both decode
    /// the same, DC predictions apart. The restart interval must be 0.
    func trace(into trace: inout MCUTrace, stop: Int, limit: Int, against: MCUTrace?, cursor: inout Int) -> TraceEnd {
        var state = self.state
        defer {
            self.state = state
        }
        let blocks = slots.count, codings = self.codings, scratch = self.scratch
        while true {
            let snapshot = state.reader.snapshot
            let bit = snapshot.isBitPosition ? snapshot.offset * 8 + snapshot.skip : -1
            if against == nil && bit >= stop { return .reached }
            if let against, bit >= 0 {
                while cursor < against.count && against.bits[cursor] < bit { cursor += 1 }
                if cursor == against.count { return .passed }
                if against.bits[cursor] == bit {
                    trace.append(snapshot: snapshot, bit: bit, predictions: state.predictions)
                    return .synchronised(theirs: cursor)
                }
            }
            trace.append(snapshot: snapshot, bit: bit, predictions: state.predictions)
            if trace.count == limit { return .ended }
            position += 1
            for index in 0..<blocks {
                let coding = codings[index]
                guard state.decodeSequentialBlock(scratch, position: coding.position, dc: coding.dc, ac: coding.ac,
                                                  keepingAC: false)
                else { return state.reader.marker == nil ? .invalid : .ended }
            }
            if state.reader.overran { return .ended }
        }
    }

    private func decode(through end: Int, into window: CoefficientWindow?, recordEvery: Int,
                        states: inout [JPEGScanState.Resumable]) throws {
        let end = min(end, mcuCount)
        guard position < end else { return }
        // The state is a plain local, touched by no closure, so the loops keep it in registers.
        var state = self.state
        defer {
            self.state = state
        }
        let across = frame.mcusAcross, blocks = slots.count, codings = self.codings, scratch = self.scratch
        let bases = self.bases, steps = self.steps
        var row = position / across, column = position % across
        var held = binding(row, window: window)
        for mcu in position..<end {
            if unitStarted {
                unitStarted = false
            } else if !state.startUnit() {
                self.position = mcu
                throw TesseraError.corrupt(path: name, detail: "restart marker \((state.nextRestart - 1) & 7) is"
                                           + " missing, \(place(row))")
            }
            if recordEvery > 0 && column % recordEvery == 0 { states.append(state.resumable) }
            let inside = held.contains(column)
            for index in 0..<blocks {
                let coding = codings[index]
                // An MCU outside the window is decoded for its DC predictions and its end alone.
                let block = inside ? bases[index] + column &* steps[index] : scratch
                guard state.decodeSequentialBlock(block, position: coding.position, dc: coding.dc, ac: coding.ac,
                                                  keepingAC: inside && !coding.dcOnly) else {
                    self.position = mcu
                    throw TesseraError.corrupt(path: name, detail: "the scan holds an invalid Huffman code, \(place(row))")
                }
            }
            column += 1
            if column == across {
                // Data that ended in this row is reported here, not after decoding the rest of the batch as zeros.
                if state.reader.overran {
                    self.position = mcu + 1
                    throw endedEarly(row, marker: state.reader.marker)
                }
                column = 0
                row += 1
                if mcu + 1 < end { held = binding(row, window: window) }
            }
        }
        position = end
        if state.reader.overran { throw endedEarly(row, marker: state.reader.marker) }
    }

    /// The error for a scan whose data ran out in MCU row `row`: the file truncated when no marker followed
    /// (`marker` 0), else corrupt.
    private func endedEarly(_ row: Int, marker: UInt8?) -> TesseraError {
        marker == 0 ? .truncated(path: name, detail: place(row))
            : .corrupt(path: name, detail: "the scan's data ends early, \(place(row))")
    }

    /// Points `bases` and `steps` at where the blocks of MCU row `row` go in `window`: per slot, the block of MCU
    /// column 0 (whether held or not) and the step from one MCU to the next. Returns the columns the window holds;
    /// none when it lacks the row.
    private func binding(_ row: Int, window: CoefficientWindow?) -> Range<Int> {
        guard let window, row >= window.firstRow, row < window.endRow else { return 0..<0 }
        for (index, slot) in slots.enumerated() {
            let (first, step) = window.placement(row: row, component: slot.component, blockRow: slot.row,
                                                 blockColumn: slot.column)
            bases[index] = first - window.columns.lowerBound * step
            steps[index] = step
        }
        return window.columns
    }

    private func place(_ row: Int) -> String {
        "in MCU row \(row.grouped) of \(frame.mcusDown.grouped)"
    }
}
