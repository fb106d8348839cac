import Foundation
import Synchronization

/// A whole sequential JPEG decoded on several cores through its entropy index. The image is cut into bands of MCU
/// rows, band b going to worker b % workers; each worker owns a `BandedJPEGDecoder` over `IndexedCoefficients`
/// (its own file cursor and libjpeg objects), jumps to its next band through the index's saved states and decodes
/// the band's rows into its slot; `decodeRows` hands the slots' rows out in order. So the entropy decoding, the
/// band's re-encoding and libjpeg's IDCT, scaling, upsampling and colour conversion all run on every core, the
/// rows equal libjpeg's one-shot decode, and memory is one band per worker.
///
///     worker w: bands w, w + W, ...  (index state -> coefficients -> band JPEG -> libjpeg -> slot w)
///     reader:   slot 0, slot 1, ..., slot W - 1, slot 0, ...
final class ParallelBandDecoder: RowDecoder {
    /// MCU rows per band: small enough that a band per worker stays a few megabytes on a 100 MP image, large
    /// enough that the MCU row decoded above and below a band for the upsampler (when it needs them) costs little.
    static let bandRows = 8

    /// MCU rows per band at `scale`: at 1/8 no upsampler reads a band's neighbours and the bands' rows are made
    /// from the coefficients, so one MCU row a band keeps the coefficients in the cache.
    static func rowsPerBand(scale: Int) -> Int { scale == 8 ? 1 : bandRows }

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
                frame: scans.frame, coefficients: try IndexedCoefficients(scans: scans, index: index, input: input),
                maxBandRows: Self.rowsPerBand(scale: request.scale)))
        }
        let size = decoders[0].size, format = decoders[0].format
        self.size = size
        self.format = format
        let rowsPerBand = decoders[0].bandRows * scans.frame.maxVertical * 8 / request.scale
        let bands = stride(from: 0, to: size.height, by: rowsPerBand).map { $0..<min($0 + rowsPerBand, size.height) }
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
            let worker = workers[band % workers.count]
            if !waited {
                worker.filled.wait()
                waited = true
            }
            if let error = worker.error { throw error }
            let taken = min(count - done, worker.rows - consumed)
            worker.pixels.withUnsafeBytes { take(done, $0.baseAddress! + consumed * worker.rowBytes, taken) }
            done += taken
            consumed += taken
            if consumed == worker.rows {
                band += 1
                consumed = 0
                waited = false
                worker.free.signal()
            }
        }
    }

    /// One worker: its decoder, its bands' output rows, and the slot it fills. Unchecked Sendable: the worker
    /// writes the slot only between `free.wait` and `filled.signal`, the reader reads it only between
    /// `filled.wait` and `free.signal`, and the decoder is the worker thread's alone.
    private final class Worker: @unchecked Sendable {
        let decoder: BandedJPEGDecoder
        let bands: [Range<Int>]
        let rowBytes: Int
        var pixels: [UInt8]
        var rows = 0
        var error: Error?
        let filled = DispatchSemaphore(value: 0)
        /// Starts at zero and is signalled once: libdispatch traps if a semaphore dies below its initial value.
        let free = DispatchSemaphore(value: 0)
        private let finished = DispatchSemaphore(value: 0)
        private let stopping = Mutex(false)

        init(decoder: BandedJPEGDecoder, bands: [Range<Int>], rowBytes: Int, rowsPerBand: Int) {
            self.decoder = decoder
            self.bands = bands
            self.rowBytes = rowBytes
            pixels = [UInt8](repeating: 0, count: rowBytes * rowsPerBand)
            free.signal()
        }

        /// Decodes the bands in turn, each once the reader has taken the one before.
        func run() {
            defer { finished.signal() }
            var next = 0
            for band in bands {
                free.wait()
                if stopping.withLock({ $0 }) { return }
                do {
                    try decoder.skipRows(band.lowerBound - next)
                    try pixels.withUnsafeMutableBytes {
                        try decoder.decodeRows(into: $0.baseAddress!, bytesPerRow: rowBytes, count: band.count)
                    }
                    next = band.upperBound
                    rows = band.count
                } catch {
                    self.error = error
                    filled.signal()
                    return
                }
                filled.signal()
            }
        }

        /// Makes the worker return and waits for it.
        func stop() {
            stopping.withLock { $0 = true }
            free.signal()
            finished.wait()
        }
    }
}
