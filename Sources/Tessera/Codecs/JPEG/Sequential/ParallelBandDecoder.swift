import Foundation
import Synchronization

/// A whole sequential JPEG decoded on several cores through its entropy index. The image is cut into bands of MCU
/// rows, band b going to worker b % workers; each worker owns a `BandedJPEGDecoder` over `IndexedCoefficients`
/// (its own file cursor and libjpeg objects), jumps to its next band through the index's saved states and decodes
/// the band's rows into its next slot (two each, so it goes on while the reader copies the last); `decodeRows`
/// hands the slots' rows out in order. So the entropy decoding and libjpeg's IDCT, scaling, upsampling and colour
/// conversion all run on every core, the rows equal libjpeg's one-shot decode, and memory is two bands per
/// worker.
///
///     worker w: bands w, w + W, ...  (index state -> coefficients -> libjpeg -> slots w.0, w.1, w.0, ...)
///     reader:   band 0 (slot 0.0), band 1 (slot 1.0), ..., band W (slot 0.1), ...
final class ParallelBandDecoder: RowDecoder {
    /// The most bytes a band's output rows take, of which each worker holds two: large enough that the MCU row
    /// decoded below a band for the upsampler (when it needs one) costs little (a band of 14 MCU rows on a
    /// 12,000-pixel-wide image decodes one more), small enough that the slots stay a few tens of megabytes.
    static let bandBytes = 8 << 20

    /// The fewest MCU rows a band has, but at 1/8, however wide the image: on a 37,952-pixel-wide gigapixel
    /// 11 MB a slot, a Deep Zoom build then peaking at 137 MiB (150 with 8 rows; 4 cost it about 6% more time).
    static let minimumBandRows = 6

    /// MCU rows per band of `frame` decoded at `scale` on `workers` threads: as many as `bandBytes` holds while
    /// each worker still gets two bands, from `minimumBandRows` to 32; at 1/8, where no upsampler reads a band's
    /// neighbours and the bands' rows are made from the coefficients, one, which keeps the coefficients in the
    /// cache.
    static func rowsPerBand(_ frame: JPEGFrameHeader, scale: Int, workers: Int) -> Int {
        guard scale != 8 else { return 1 }
        let rowBytes = reducedSize(Size(width: frame.width, height: frame.maxVertical * 8), by: scale).area
            * (frame.components.count == 1 ? 1 : 3)
        return min(32, max(minimumBandRows, min(bandBytes / rowBytes, frame.mcusDown / (2 * workers))))
    }

    let size: Size
    let format: PixelFormat
    private let workers: [Worker]
    /// The band being handed out, whether its worker's slot has been waited for, and its rows handed out so far.
    private var band = 0
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
        let bands = stride(from: 0, to: scans.frame.mcusDown, by: decoders[0].bandRows).map {
            decoders[0].outputRows(ofBandAt: $0)
        }
        let rowsPerBand = bands.map(\.count).max()!
        let rowBytes = size.width * format.bytesPerPixel
        workers = decoders.enumerated().map { number, decoder in
            Worker(decoder: decoder, bands: Swift.stride(from: number, to: bands.count, by: count).map { bands[$0] },
                   rowBytes: rowBytes, rowsPerBand: rowsPerBand)
        }
        for worker in workers { Thread.detachNewThread { worker.run() } }
    }

    deinit { workers.forEach { $0.stop() } }

    func skipRows(_ count: Int) throws { try hand(count) { _, _, _ in } }

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
            let slot = workers[band % workers.count].slots[band / workers.count % Worker.slotCount]
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
                band += 1
                consumed = 0
                waited = false
                slot.free.signal()
            }
        }
    }

    /// One band's output rows, filled by a worker and emptied by the reader. Unchecked Sendable: the worker writes
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

    /// One worker: its decoder, its bands, and the slots it fills in turn, so that it decodes its next band while
    /// the reader takes the one before. Unchecked Sendable: the decoder is the worker thread's alone.
    private final class Worker: @unchecked Sendable {
        /// Slots per worker: two, so a worker never waits for the reader to copy out the band it just decoded.
        static let slotCount = 2
        let decoder: BandedJPEGDecoder
        let bands: [Range<Int>]
        let slots: [Slot]
        private let finished = DispatchSemaphore(value: 0)
        private let stopping = Mutex(false)

        init(decoder: BandedJPEGDecoder, bands: [Range<Int>], rowBytes: Int, rowsPerBand: Int) {
            self.decoder = decoder
            self.bands = bands
            slots = (0..<Self.slotCount).map { _ in Slot(rowBytes: rowBytes, rows: rowsPerBand) }
        }

        /// Decodes the bands in turn, each into the next slot once the reader has emptied it.
        func run() {
            defer { finished.signal() }
            var next = 0
            for (number, band) in bands.enumerated() {
                let slot = slots[number % Self.slotCount]
                slot.free.wait()
                if stopping.withLock({ $0 }) { return }
                do {
                    try decoder.skipRows(band.lowerBound - next)
                    try decoder.decodeRows(into: slot.pixels, bytesPerRow: slot.rowBytes, count: band.count)
                    next = band.upperBound
                    slot.rows = band.count
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
