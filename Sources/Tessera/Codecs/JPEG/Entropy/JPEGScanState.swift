/// Where one scan's decoding is: its bit reader, DC predictions, end-of-band run and restart count, with the block
/// decoding procedures of ITU T.81: a sequential block (F.2.2), and the four progressive ones of G.1.2 (DC first
/// and refinement, AC first and refinement). Coefficients are 16-bit, in natural (row-major) order, 64 per block,
/// as libjpeg keeps them. A value type for the same reason as `JPEGEntropyReader`: the block loops own it as a
/// local.
struct JPEGScanState {
    var reader: JPEGEntropyReader
    /// Each scan component's DC prediction (DC first scans).
    var predictions = SIMD4<Int>()
    /// Blocks still to skip as all zero (AC first) or as having no new coefficients (AC refinement).
    var endOfBandRun = 0
    /// Units (MCUs, or blocks in a one-component scan) left in the restart interval, and the next RSTn's n.
    var restartsLeft: Int
    var nextRestart = 0
    var started = false
    let restartInterval: Int
    /// `naturalOrder`, kept in the state: the lazily made global costs a call to check per block.
    private let order = naturalOrder

    init(scan: JPEGScanIndex.Scan, input: BufferedInput) {
        reader = JPEGEntropyReader(input: input, offset: scan.dataOffset)
        restartInterval = scan.restartInterval
        restartsLeft = scan.restartInterval
    }

    /// What resumes a sequential scan exactly at a unit boundary: the reader's position and bits, the DC
    /// predictions and where the restart interval is (the end-of-band run is always 0 there).
    struct Resumable: Equatable {
        var reader: JPEGEntropyReader.Snapshot
        var predictions: SIMD4<Int32>
        var restartsLeft: Int
        var nextRestart: Int
        var started: Bool
    }

    /// The state now, to resume from later with `resume(at:)`.
    var resumable: Resumable {
        Resumable(reader: reader.snapshot, predictions: SIMD4(truncatingIfNeeded: predictions), restartsLeft: restartsLeft,
                  nextRestart: nextRestart, started: started)
    }

    /// Goes back (or forward) to a state this scan's decoding was in.
    mutating func resume(at state: Resumable) {
        reader.resume(at: state.reader)
        predictions = SIMD4(truncatingIfNeeded: state.predictions)
        restartsLeft = state.restartsLeft
        nextRestart = state.nextRestart
        started = state.started
        endOfBandRun = 0
    }

    /// What one scan codes, and its DC tables: everything a block needs besides the state (an AC scan's table is
    /// passed on its own, bound once per row: read out of a struct per block, it would be retained and released).
    struct Coding {
        /// Spectral selection (zigzag indices) and the bit position Al.
        let start: Int
        let end: Int
        let shift: Int
        /// A first scan (Ah = 0) rather than a refinement.
        let isFirst: Bool
        let dcTables: [JPEGHuffmanTable]

        init(scan: JPEGScanIndex.Scan) {
            start = scan.spectralStart
            end = scan.spectralEnd
            shift = scan.approximationLow
            isFirst = scan.approximationHigh == 0
            dcTables = scan.dcTables
        }
    }

    /// One block of a DC scan, first or refinement; `position` is the block's component in the scan. False on
    /// an invalid code.
    @inline(__always)
    mutating func decodeDCBlock(_ coefficient: UnsafeMutablePointer<Int16>, position: Int, coding: Coding) -> Bool {
        guard coding.isFirst else {
            decodeDCRefinement(shift: coding.shift, into: coefficient)
            return true
        }
        return decodeDCFirst(position: position, table: coding.dcTables[position], shift: coding.shift, into: coefficient)
    }

    /// Called before each unit: steps over the restart marker when the interval is used up and resets the
    /// predictions and the run. Returns false when the expected marker is not there.
    @inline(__always)
    mutating func startUnit() -> Bool {
        guard restartInterval > 0 else { return true }
        var found = true
        if started && restartsLeft == 0 {
            found = reader.restart(expecting: nextRestart)
            nextRestart += 1
            restartsLeft = restartInterval
            predictions = SIMD4()
            endOfBandRun = 0
        }
        started = true
        restartsLeft -= 1
        return found
    }

    /// A DC first scan's block: the Huffman-coded difference from the prediction of scan component `position`,
    /// shifted left by `shift` (Al). False when the bits form no valid code.
    @inline(__always)
    mutating func decodeDCFirst(position: Int, table: JPEGHuffmanTable?, shift: Int,
                                into coefficient: UnsafeMutablePointer<Int16>) -> Bool {
        guard let size = table?.decode(&reader), size <= 15 else { return false }
        let difference = size == 0 ? 0 : reader.readSigned(Int(size))
        let prediction = predict(position, difference)
        coefficient.pointee = Int16(truncatingIfNeeded: prediction << shift)
        return true
    }

    /// Adds `difference` to scan component `position`'s DC prediction and returns the new prediction. The lane is
    /// replaced through a mask, not set by index: setting one lane of the vector in memory and reading it back
    /// whole stalled every block (a narrow store read back wide), a tenth of the sequential decoder's time.
    @inline(__always)
    private mutating func predict(_ position: Int, _ difference: Int) -> Int {
        let prediction = predictions[position] &+ difference
        predictions.replace(with: prediction, where: SIMD4<Int>(0, 1, 2, 3) .== SIMD4(repeating: position))
        return prediction
    }

    /// A sequential scan's block (F.2.2): the DC difference from scan component `position`'s prediction, then
    /// run/size symbols placing AC coefficients 1...63 until EOB. With `keepingAC` the block is cleared first and
    /// every coefficient stored; without, only the DC is (a block dropped, or one scaled by a 1x1 IDCT), the AC
    /// coefficients decoded and dropped. False on an invalid code or a run past the block's end.
    @_transparent
    mutating func decodeSequentialBlock(_ block: UnsafeMutablePointer<Int16>, position: Int, dc: JPEGHuffmanTable.Lookup,
                                        ac: JPEGHuffmanTable.Lookup, keepingAC: Bool) -> Bool {
        if keepingAC { block.update(repeating: 0, count: 64) }
        guard let (run, _, difference) = dc.decodeCoefficient(&reader), run == 0 else { return false }
        block.pointee = Int16(truncatingIfNeeded: predict(position, difference))
        return ac.decodeSequentialAC(&reader, into: block, order: order, keeping: keepingAC)
    }

    /// A DC refinement scan's block: one more bit, at `shift`.
    @inline(__always)
    mutating func decodeDCRefinement(shift: Int, into coefficient: UnsafeMutablePointer<Int16>) {
        if reader.read(1) != 0 { coefficient.pointee |= Int16(truncatingIfNeeded: 1 << shift) }
    }

    /// An AC first scan's block (G.1.2.2): run/size symbols place coefficients `start...end` (zigzag
    /// positions) shifted by `shift`; ZRL skips 16 zeros; EOBn starts a run of all-zero blocks.
    @inline(__always)
    mutating func decodeACFirst(_ block: UnsafeMutablePointer<Int16>, table: JPEGHuffmanTable, start: Int, end: Int,
                                shift: Int) -> Bool {
        if endOfBandRun > 0 {
            endOfBandRun -= 1
            return true
        }
        let naturalOrder = order
        var k = start
        while k <= end {
            guard let symbol = table.decode(&reader) else { return false }
            let run = Int(symbol >> 4), size = Int(symbol & 15)
            if size != 0 {
                k += run
                guard k <= end else { return false }
                block[naturalOrder[k]] = Int16(truncatingIfNeeded: reader.readSigned(size) << shift)
                k += 1
            } else if run == 15 {
                k += 16
            } else {
                endOfBandRun = (1 << run) - 1 + reader.read(run)
                break
            }
        }
        return true
    }

    /// An AC refinement scan's block (G.1.2.3): every coefficient already nonzero gets a correction bit; new
    /// coefficients, of magnitude 1 << `shift`, land after `run` zero-history coefficients; in an end-of-band
    /// run only the correction bits are read.
    @inline(__always)
    mutating func decodeACRefinement(_ block: UnsafeMutablePointer<Int16>, table: JPEGHuffmanTable, start: Int,
                                     end: Int, shift: Int) -> Bool {
        let plus = 1 << shift, naturalOrder = order
        var k = start
        if endOfBandRun == 0 {
            while k <= end {
                guard let symbol = table.decode(&reader) else { return false }
                var run = Int(symbol >> 4)
                let size = Int(symbol & 15)
                var value = 0
                if size != 0 {
                    guard size == 1 else { return false }
                    value = reader.read(1) != 0 ? plus : -plus
                } else if run != 15 {
                    endOfBandRun = (1 << run) + reader.read(run)
                    break
                }
                // Pass `run` zero coefficients (correcting the nonzero ones on the way); the new one goes in the
                // next zero, or ZRL's sixteenth zero is passed.
                while k <= end {
                    let position = naturalOrder[k]
                    if block[position] != 0 {
                        refine(block + position, plus: plus)
                    } else {
                        if run == 0 { break }
                        run -= 1
                    }
                    k += 1
                }
                if value != 0 {
                    guard k <= end else { return false }
                    block[naturalOrder[k]] = Int16(truncatingIfNeeded: value)
                }
                k += 1
            }
        }
        if endOfBandRun > 0 {
            while k <= end {
                let position = naturalOrder[k]
                if block[position] != 0 { refine(block + position, plus: plus) }
                k += 1
            }
            endOfBandRun -= 1
        }
        return true
    }

    /// One correction bit for a coefficient with history: when set and not yet applied, moves it one step
    /// further from zero.
    @inline(__always)
    private mutating func refine(_ coefficient: UnsafeMutablePointer<Int16>, plus: Int) {
        guard reader.read(1) != 0 else { return }
        let value = Int(coefficient.pointee)
        if value & plus == 0 { coefficient.pointee = Int16(truncatingIfNeeded: value >= 0 ? value + plus : value - plus) }
    }

    /// The natural (row-major) position of each zigzag index (T.81 figure A.6), as a pointer: the block loops
    /// index it without bounds checks (indices are at most the scan's end, checked <= 63 when it is opened).
    /// Written once, then only read: safe to share.
    nonisolated(unsafe) static let naturalOrder: UnsafePointer<Int> = {
        let order = [
            0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
            28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54,
            47, 55, 62, 63,
        ]
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: order.count)
        pointer.initialize(from: order, count: order.count)
        return UnsafePointer(pointer)
    }()
}
