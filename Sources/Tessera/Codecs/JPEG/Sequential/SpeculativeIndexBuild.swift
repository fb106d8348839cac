import Foundation

/// An entropy index's states found on several cores at once, with no index to start from (speculative decoding,
/// after Weißenberger and Schmidt's self-synchronising Huffman decoding of JPEG on GPUs). The scan's data is cut
/// into one segment per core by byte offset. The first is decoded from the scan's start; each later one from a
/// guess: its first byte's first bit taken as an MCU's start, every DC prediction 0 (moved on a bit when the
/// guess meets an invalid code). Every segment records the state before each MCU it decodes (`MCUTrace`).
/// Huffman codes resynchronise: a decode from a wrong start soon meets the true MCU boundaries, after which it is
/// exact but for its MCU count and a constant error in each DC prediction. So each segment's decoder then goes
/// on past its end until it starts an MCU at a bit where the next segment started one: from there the next
/// segment's trace is the true decode, its MCUs renumbered and its predictions corrected by the difference there.
/// A segment never met is decoded by the one before it going on (serially): the work wasted is at most the
/// segments' own, done in parallel. Anything else (a damaged scan, the data ending early) gives nil, and the
/// caller decodes serially, which says where the damage is.
///
///     segment 0: scan start ─────────► end 0 ─ goes on ─ meets 1 at bit b
///     segment 1:            guess at end 0 ~~~ b ──────► end 1 ─ goes on ─ meets 2 ...
enum SpeculativeIndexBuild {
    /// The most guesses a segment makes before it is left to the one before it.
    static let maxGuesses = 64
    /// The fewest MCUs per segment worth a thread.
    static let minimumMCUsPerSegment = 4096

    /// One segment's decoder, its own stretch's trace and the trace of its going on past it; touched only by
    /// its own task while the tasks run (the going on reads only other segments' own traces, finished by then).
    private final class Segment: @unchecked Sendable {
        let decoder: SequentialCoefficientDecoder
        let start: Int
        let stop: Int
        var own: MCUTrace
        var onward: MCUTrace
        var end: SequentialCoefficientDecoder.TraceEnd = .ended
        /// MCUs its own stretch decoded, wrong guesses included.
        var decoded = 0
        /// Where the going on met a later segment: its own MCU there (counted from its start), that segment and
        /// that segment's MCU in its own trace.
        var meeting: (mine: Int, segment: Int, theirs: Int)?

        init(decoder: SequentialCoefficientDecoder, start: Int, stop: Int, components: Int) {
            self.decoder = decoder
            self.start = start
            self.stop = stop
            own = MCUTrace(components: components)
            onward = MCUTrace(components: components)
        }

        var count: Int { own.count + onward.count }

        /// MCU `index`'s state, counted from the segment's start, its predictions corrected by `correction`.
        func state(_ index: Int, plus correction: SIMD4<Int16>) -> (JPEGEntropyReader.Snapshot, SIMD4<Int16>) {
            let trace = index < own.count ? own : onward, at = index < own.count ? index : index - own.count
            return (trace.snapshot(at), trace.predictions(at, plus: correction))
        }
    }

    /// What a build found: the states, and the MCUs decoded in all (the scan's own, plus guesses and goings on:
    /// the work spent).
    struct Found {
        let states: [JPEGScanState.Resumable]
        let decodedMCUs: Int
    }

    /// The state before every MCU whose column is a multiple of `stride`, row by row, of the scan `scans`
    /// found in `input` (with no restart interval), decoded on `workers` threads, each segment at least
    /// `minimumMCUs`; nil when the scan is too small to split or could not be decoded this way.
    static func states(scans: JPEGScanIndex, input: ImageInput, workers: Int, stride: Int,
                       minimumMCUs: Int = minimumMCUsPerSegment) throws -> Found? {
        let frame = scans.frame, scan = scans.scans[0]
        let mcuCount = frame.mcusAcross * frame.mcusDown
        let count = min(workers, mcuCount / max(1, minimumMCUs))
        guard count > 1, scan.restartInterval == 0 else { return nil }
        let dataEnd = try input.byteCount()
        let bytes = try BufferedInput(input)
        var starts = [scan.dataOffset]
        for number in 1..<count {
            // Not the stuffed zero after an 0xFF.
            var offset = scan.dataOffset + (dataEnd - scan.dataOffset) * number / count
            bytes.seek(to: offset - 1)
            if try bytes.readByte() == 0xFF { offset += 1 }
            starts.append(offset)
        }
        let segments = try (0..<count).map { number in
            Segment(decoder: try SequentialCoefficientDecoder(index: scans, input: input), start: starts[number],
                    stop: number + 1 < count ? starts[number + 1] * 8 : Int.max, components: frame.components.count)
        }
        DispatchQueue.concurrentPerform(iterations: count) { number in
            decodeOwn(segments[number], first: number == 0, limit: mcuCount + 1)
        }
        DispatchQueue.concurrentPerform(iterations: count - 1) { number in
            goOn(segments[number], number: number, segments: segments, limit: mcuCount + 1)
        }
        guard let states = join(segments, frame: frame, stride: stride) else { return nil }
        return Found(states: states, decodedMCUs: segments.reduce(0) { $0 + $1.decoded + $1.onward.count })
    }

    /// A segment's own stretch: from the scan's start (the first) or from guesses, up to the next one's start.
    private static func decodeOwn(_ segment: Segment, first: Bool, limit: Int) {
        var cursor = 0, guess = segment.start * 8
        for _ in 0..<(first ? 1 : maxGuesses) {
            if !first { segment.decoder.guess(bit: guess) }
            segment.own.removeAll()
            segment.end = segment.decoder.trace(into: &segment.own, stop: segment.stop, limit: limit, against: nil,
                                                cursor: &cursor)
            segment.decoded += segment.own.count
            guard segment.end == .invalid, !first else { return }
            guess += 1
        }
        segment.own.removeAll()
    }

    /// A segment going on past its stretch until it starts an MCU where a later segment's trace has one.
    private static func goOn(_ segment: Segment, number: Int, segments: [Segment], limit: Int) {
        guard segment.end == .reached else { return }
        var next = number + 1
        while true {
            var cursor = 0
            let against = next < segments.count ? segments[next].own : nil
            let end = segment.decoder.trace(into: &segment.onward, stop: Int.max, limit: limit - segment.own.count,
                                            against: against, cursor: &cursor)
            segment.end = end
            switch end {
            case let .synchronised(theirs):
                segment.meeting = (segment.count - 1, next, theirs)
                return
            case .passed:
                next += 1
            case .reached, .ended, .invalid:
                return
            }
        }
    }

    /// The segments' traces joined into the whole scan's, and its states at the index's positions; nil unless
    /// the joined trace covers every MCU and the state after the last (so every MCU was decoded whole).
    private static func join(_ segments: [Segment], frame: JPEGFrameHeader, stride: Int) -> [JPEGScanState.Resumable]? {
        let across = frame.mcusAcross, mcuCount = across * frame.mcusDown
        var states: [JPEGScanState.Resumable] = []
        states.reserveCapacity(JPEGEntropyIndex.stateCount(frame, stride: stride))
        var number = 0, first = 0, correction = SIMD4<Int16>(), position = 0
        while true {
            let segment = segments[number]
            let end = segment.meeting?.mine ?? segment.count
            guard first <= end else { return nil }
            for index in first..<end where position <= mcuCount {
                if position < mcuCount && position % across % stride == 0 {
                    let (reader, predictions) = segment.state(index, plus: correction)
                    states.append(JPEGScanState.Resumable(reader: reader, predictions: SIMD4(truncatingIfNeeded: predictions),
                                                          restartsLeft: 0, nextRestart: 0, started: false))
                }
                position += 1
            }
            if position > mcuCount { return states }
            guard let meeting = segment.meeting else { return nil }
            correction = segment.state(meeting.mine, plus: correction).1
                &- segments[meeting.segment].state(meeting.theirs, plus: SIMD4()).1
            number = meeting.segment
            first = meeting.theirs
        }
    }
}
