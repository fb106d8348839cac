import Foundation
import Synchronization

/// A whole sequential JPEG decoded on several cores through its entropy index. The image is cut into bands of MCU
/// rows, band b going to worker b % workers; each worker owns a `BandedJPEGDecoder` over `IndexedCoefficients`
/// (its own file cursor and libjpeg objects), jumps to its next band through the index's saved states and decodes
/// the band's rows in two halves, each into the next of its two slots, so it goes on with the second half while
/// the reader copies the first; `decodeRows` hands the slots' rows out in order. So the entropy decoding and
/// libjpeg's IDCT, scaling, upsampling and colour conversion all run on every core, the rows equal libjpeg's
/// one-shot decode, and memory is one band of rows per worker.
///
///     worker w: bands w, w + W, ...  (index state -> coefficients -> libjpeg -> halves into slots w.0, w.1, ...)
///     reader:   band 0 (slots 0.0, 0.1), band 1 (slots 1.0, 1.1), ..., band W (slots 0.0, 0.1), ...
final class ParallelBandDecoder: RowDecoder {
    /// The most bytes a band's output rows take, one band a worker: large enough that the MCU row
    /// decoded below a band for the upsampler (when it needs one) costs little (a band of 14 MCU rows on a
    /// 12,000-pixel-wide image decodes one more), small enough that the slots stay a few tens of megabytes.
    static let bandBytes = 8 << 20

    /// The most MCU rows a band has at 1/8, where the band's coefficients are held together: 4 hand out 8 rows of
    /// a 4:2:0 image at a time. One handed out each output row in a half band of its own: about 1,400 context
    /// switches in a 100 MP thumbnail against 400 with 4, and 1 to 7 ms more; 8 took more again.
    static let eighthBandRows = 4

    /// The most bytes of coefficients a band holds at 1/8, so that both workers' stay well inside the cache: 4 MCU
    /// rows of a 12,000-pixel-wide image (2.3 MB) were quicker than 1, but of a 37,952-pixel-wide one (7.3 MB) took
    /// 9% more CPU than 1 (1.8 MB).
    static let eighthBandCoefficientBytes = 3 << 20

    /// The fewest MCU rows a band has, but at 1/8, however wide the image: on a 37,952-pixel-wide gigapixel
    /// 11 MB a slot, a Deep Zoom build then peaking at 137 MiB (150 with 8 rows; 4 cost it about 6% more time).
    static let minimumBandRows = 6

    /// MCU rows per band of `frame` decoded at `scale` on `workers` threads: as many as `bandBytes` holds while
    /// each worker still gets two bands, from `minimumBandRows` to 32; at 1/8, where no upsampler reads a band's
    /// neighbours and the bands' rows are made from the coefficients, up to `eighthBandRows` while their
    /// coefficients fit `eighthBandCoefficientBytes`.
    static func rowsPerBand(_ frame: JPEGFrameHeader, scale: Int, workers: Int) -> Int {
        guard scale != 8 else {
            return max(1, min(eighthBandRows, eighthBandCoefficientBytes / CoefficientWindow.bytesPerMCURow(frame)))
        }
        return min(32, max(minimumBandRows, min(bandBytes / outputBytesPerMCURow(frame, scale: scale),
                                                frame.mcusDown / (2 * workers))))
    }

    /// The bytes of one MCU row's output rows at `scale`.
    private static func outputBytesPerMCURow(_ frame: JPEGFrameHeader, scale: Int) -> Int {
        reducedSize(Size(width: frame.width, height: frame.maxVertical * 8), by: scale).area
            * (frame.components.count == 1 ? 1 : 3)
    }

    /// What decoding `frame` at `scale` on `workers` threads buffers beyond the reader's rows: per worker a band
    /// of output rows (its two halves) and its coefficients, the band's MCU rows at 1/8 (`BandedJPEGDecoder` makes
    /// the rows from a window of them), else the one MCU row being fed to libjpeg. Held against the request's
    /// budget: a smaller budget keeps libjpeg's serial decode, which buffers no band.
    static func bufferBytes(_ frame: JPEGFrameHeader, scale: Int, workers: Int) -> Int {
        let rows = rowsPerBand(frame, scale: scale, workers: workers)
        return workers * (rows * outputBytesPerMCURow(frame, scale: scale)
                          + (scale == 8 ? rows : 1) * CoefficientWindow.bytesPerMCURow(frame))
    }

    let size: Size
    let format: PixelFormat
    let decodesAhead = true
    private let workers: [Worker]
    /// Each half band in order, as its worker and the slot of that worker's it is decoded into.
    private let halves: [(worker: Int, slot: Int)]
    /// The half band being handed out, whether its slot has been waited for, and its rows handed out so far.
    private var half = 0
    private var waited = false
    private var consumed = 0

    /// Decodes `input`, whose scan `scans` describes and `index` indexes, on `workers` threads.
    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest, scans: JPEGScanIndex,
         index: JPEGEntropyIndex, workers count: Int) throws {
        var decoders: [BandedJPEGDecoder] = []
        for _ in 0..<count {
            decoders.append(try BandedJPEGDecoder(
                input: input, properties: properties, request: request, session: try JPEGSession(input: input),
                frame: scans.frame, coefficients: try IndexedCoefficients(scans: scans, index: index, input: input,
                                                                          scale: request.scale),
                maxBandRows: Self.rowsPerBand(scans.frame, scale: request.scale, workers: count)))
        }
        let size = decoders[0].size, format = decoders[0].format
        self.size = size
        self.format = format
        // Band b goes to worker b % count, in two halves: the worker decodes one into a slot while the reader copies
        // the other out of the other slot, one band of rows per worker in all.
        var halves: [(worker: Int, rows: Range<Int>)] = []
        for (number, band) in stride(from: 0, to: scans.frame.mcusDown, by: decoders[0].bandRows).enumerated() {
            let rows = decoders[0].outputRows(ofBandAt: band), middle = rows.lowerBound + (rows.count + 1) / 2
            for part in [rows.lowerBound..<middle, middle..<rows.upperBound] where !part.isEmpty {
                halves.append((number % count, part))
            }
        }
        var taken = [Int](repeating: 0, count: count)
        self.halves = halves.map { half in
            defer { taken[half.worker] += 1 }
            return (half.worker, taken[half.worker] % Worker.slotCount)
        }
        let slotRows = halves.map(\.rows.count).max()!, rowBytes = size.width * format.bytesPerPixel
        workers = decoders.enumerated().map { number, decoder in
            Worker(decoder: decoder, parts: halves.filter { $0.worker == number }.map(\.rows), rowBytes: rowBytes,
                   slotRows: slotRows)
        }
        for worker in workers { Thread.detachNewThread { worker.run() } }
    }

    deinit { workers.forEach { $0.stop() } }

    /// Skipped rows are decoded all the same: the workers decode every band, ahead of the reader.
    func skipRows(_ count: Int) throws { try discardRows(count) }

    /// Hands the rows out without copying them from the workers' slots.
    func discardRows(_ count: Int) throws { try hand(count) { _, _, _ in } }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        let rowBytes = size.width * format.bytesPerPixel
        try hand(count) { done, source, taken in
            for row in 0..<taken {
                (rows + (done + row) * bytesPerRow).copyMemory(from: source + row * rowBytes, byteCount: rowBytes)
            }
        }
    }

    /// Hands out the next `count` rows, giving `take` (rows handed out before, the slot's first row, rows)
    /// each run of them from one slot.
    private func hand(_ count: Int, take: (Int, UnsafeRawPointer, Int) -> Void) throws {
        var done = 0
        while done < count {
            let slot = workers[halves[half].worker].slots[halves[half].slot]
            if !waited {
                slot.filled.wait()
                waited = true
            }
            if let error = slot.error { throw error }
            let taken = min(count - done, slot.rows - consumed)
            take(done, slot.pixels + consumed * slot.rowBytes, taken)
            done += taken
            consumed += taken
            if consumed == slot.rows {
                half += 1
                consumed = 0
                waited = false
                slot.free.signal()
            }
        }
    }

    /// Half a band's output rows, filled by a worker and emptied by the reader. Unchecked Sendable: the worker writes
    /// it only between `free.wait` and `filled.signal`, the reader reads it only between `filled.wait` and
    /// `free.signal`.
    private final class Slot: @unchecked Sendable {
        let rowBytes: Int
        let pixels: UnsafeMutableRawPointer
        var rows = 0
        /// Why the band could not be decoded; the worker stops after it.
        var error: Error?
        let filled = DispatchSemaphore(value: 0)
        /// Starts at zero and is signalled once: libdispatch traps if a semaphore dies below its initial value.
        let free = DispatchSemaphore(value: 0)

        init(rowBytes: Int, rows: Int) {
            self.rowBytes = rowBytes
            pixels = .allocate(byteCount: rowBytes * rows, alignment: 64)
            free.signal()
        }

        deinit { pixels.deallocate() }
    }

    /// One worker: its decoder, the half bands it decodes, and the slots it fills in turn, so that it decodes on
    /// while the reader copies out what it decoded last. Unchecked Sendable: the decoder is the worker thread's
    /// alone.
    private final class Worker: @unchecked Sendable {
        /// Slots per worker, each half a band.
        static let slotCount = 2
        let decoder: BandedJPEGDecoder
        let parts: [Range<Int>]
        let slots: [Slot]
        private let finished = DispatchSemaphore(value: 0)
        private let stopping = Mutex(false)

        init(decoder: BandedJPEGDecoder, parts: [Range<Int>], rowBytes: Int, slotRows: Int) {
            self.decoder = decoder
            self.parts = parts
            slots = (0..<Self.slotCount).map { _ in Slot(rowBytes: rowBytes, rows: slotRows) }
        }

        /// Decodes the half bands in turn, each into the next slot once the reader has emptied it.
        func run() {
            defer { finished.signal() }
            var next = 0
            for (number, part) in parts.enumerated() {
                let slot = slots[number % Self.slotCount]
                slot.free.wait()
                if stopping.withLock({ $0 }) { return }
                do {
                    try decoder.skipRows(part.lowerBound - next)
                    try decoder.decodeRows(into: slot.pixels, bytesPerRow: slot.rowBytes, count: part.count)
                    next = part.upperBound
                    slot.rows = part.count
                } catch {
                    slot.error = error
                    slot.filled.signal()
                    return
                }
                slot.filled.signal()
            }
        }

        /// Makes the worker return and waits for it.
        func stop() {
            stopping.withLock { $0 = true }
            slots.forEach { $0.free.signal() }
            finished.wait()
        }
    }
}
