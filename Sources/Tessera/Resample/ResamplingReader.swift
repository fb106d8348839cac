import Dispatch

/// Resamples a reader's image to an exact size with a separable kernel, streaming: each source row is
/// resampled horizontally once into a ring buffer holding the vertical kernel's window of rows (plus one batch),
/// and each output row is a weighted sum of the ring's rows. Memory is bounded by the widths, never the height.
///
///     source strip -> load (premultiply, linearise) -> horizontal pass -> ring -> vertical pass -> store
///                      \________ two threads, by rows ________/          \____ two threads, by rows ____/
///
/// Pixels are filtered as four Float32 lanes (colour in lanes 0-2, alpha in lane 3), alpha premultiplied so
/// colour under transparent pixels never bleeds into its neighbours. Opaque 8-bit rows whose width is kept (a tile
/// a pixel or two off its level's height, the commonest render of a server) skip the lanes: their samples go into
/// the ring as they are and are summed in 14-bit fixed point (`FixedPointRows`), on one thread.
public final class ResamplingReader: ImageReader {
    /// How the resampler treats the samples it filters.
    public struct Options: Sendable {
        /// The filter; Lanczos3 by default.
        public var kernel: ResamplingKernel
        /// Filter in linear light (sRGB decoded before and encoded after), which keeps bright detail from
        /// darkening when shrinking; off by default, as in libvips and Pillow.
        public var linearLight: Bool

        /// Options with `kernel` (Lanczos3 by default), in linear light or not (the default).
        public init(kernel: ResamplingKernel = .lanczos3, linearLight: Bool = false) {
            self.kernel = kernel
            self.linearLight = linearLight
        }
    }

    private let source: any ImageReader
    /// The output size in pixels.
    public let size: Size
    /// The kernel and light the resampler was made with.
    public let options: Options
    public private(set) var nextRow = 0

    private let horizontal: ResamplingWeights
    private let vertical: ResamplingWeights
    /// Each axis's weights in all four lanes, to multiply a pixel without a shuffle in the inner loops (empty
    /// when the rows take the fixed-point path).
    private let horizontalLanes: [SIMD4<Float>], verticalLanes: [SIMD4<Float>]
    private let conversion: SampleConversion
    /// Source rows resampled per batch; the horizontal pass of a batch is split across two threads.
    private let batchRows = 32
    private let ring: UnsafeMutableBufferPointer<SIMD4<Float>>
    private let ringCapacity: Int
    /// Two loaded source rows per worker thread.
    private let loaded: UnsafeMutableBufferPointer<SIMD4<Float>>
    /// One output row of sums per worker thread.
    private let accumulators: UnsafeMutableBufferPointer<SIMD4<Float>>
    /// One table of the vertical window's row pointers per worker thread.
    private let windows: UnsafeMutableBufferPointer<UnsafePointer<SIMD4<Float>>>
    /// Source rows resampled into the ring so far.
    private var filled = 0
    private var input: Strip
    /// The ring of stored samples and the fixed-point weights, when the rows take that path.
    private let fixedPoint: FixedPointRows?

    /// Resamples `source` to `size` pixels (any scale up or down, independently in x and y); `sourceLag` is how
    /// far the source's pixels lie before the centres of the areas they stand for, in its pixels on both axes
    /// (`ImageSource.sampleLag`: 0 but for JPEG 2000's levels).
    public init(source: any ImageReader, size: Size, options: Options = Options(), sourceLag: Double = 0) throws {
        guard size.width > 0, size.height > 0 else {
            throw TesseraError.invalidArgument("the output size must be positive, not \(size)")
        }
        guard source.size.width > 0, source.size.height > 0 else {
            throw TesseraError.invalidArgument("cannot resample an empty \(source.size) image")
        }
        self.source = source
        self.size = size
        self.options = options
        horizontal = ResamplingWeights.shared(kernel: options.kernel, inputLength: source.size.width,
                                              outputLength: size.width, lag: sourceLag)
        vertical = ResamplingWeights.shared(kernel: options.kernel, inputLength: source.size.height,
                                            outputLength: size.height, lag: sourceLag)
        conversion = SampleConversion(format: source.format, linearLight: options.linearLight)
        ringCapacity = vertical.taps + batchRows
        let format = source.format
        fixedPoint = horizontal.isIdentity && format.bitDepth == 8 && !format.hasAlpha && !options.linearLight
            ? FixedPointRows(weights: vertical, rowBytes: size.width * format.bytesPerPixel, ringRows: ringCapacity) : nil
        let floatRows = fixedPoint == nil
        horizontalLanes = floatRows ? horizontal.weights.map { SIMD4(repeating: $0) } : []
        verticalLanes = floatRows ? vertical.weights.map { SIMD4(repeating: $0) } : []
        ring = .allocate(capacity: floatRows ? ringCapacity * size.width : 0)
        loaded = .allocate(capacity: floatRows ? 4 * source.size.width : 0)
        accumulators = .allocate(capacity: floatRows ? 2 * size.width : 0)
        windows = .allocate(capacity: floatRows ? 2 * vertical.taps : 0)
        input = source.makeStrip()
    }

    deinit {
        ring.deallocate()
        loaded.deallocate()
        accumulators.deallocate()
        windows.deallocate()
    }

    public var format: PixelFormat { source.format }

    public func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, size.height - nextRow)
        strip.prepare(y: nextRow, rows: max(rows, 0), width: size.width, format: format)
        guard rows > 0 else { return false }
        var row = 0
        while row < rows {
            let first = vertical.first[nextRow + row]
            try fill(through: first + vertical.taps, keeping: first)
            // Every following output row whose window the ring already holds goes in the same pass.
            var count = 1
            while row + count < rows, vertical.first[nextRow + row + count] + vertical.taps <= filled { count += 1 }
            if let fixedPoint {
                fixedPoint.sum(outputRows: nextRow + row, count: count, into: &strip.pixels, at: row)
            } else {
                verticalPass(outputRow: nextRow + row, count: count, into: &strip, at: row)
            }
            row += count
        }
        nextRow += rows
        return true
    }

    /// Resamples source rows horizontally into the ring until it holds rows up to `end` (exclusive), never
    /// overwriting rows from `keeping` on.
    private func fill(through end: Int, keeping: Int) throws {
        while filled < end {
            let room = keeping + ringCapacity - filled
            let wanted = min(batchRows, room, source.size.height - filled)
            guard try source.read(into: &input, maxRows: wanted), input.y == filled else {
                throw TesseraError.truncated(path: "the image being resampled",
                                             detail: "after row \(filled.grouped) of \(source.size.height.grouped)")
            }
            if let fixedPoint { fixedPoint.store(input.pixels, firstRow: filled) } else { resampleBatch() }
            filled += input.height
        }
    }

    /// The horizontal pass over the strip just read, split by rows across two threads when it is worth it.
    private func resampleBatch() {
        let rows = input.height
        let workers = rows * size.width * horizontal.taps >= 1 << 18 && rows > 1 ? 2 : 1
        input.pixels.bytes.withUnsafeBytes { bytes in
            horizontal.first.withUnsafeBufferPointer { first in
                horizontalLanes.withUnsafeBufferPointer { weights in
                    let job = HorizontalPass(
                        source: bytes.baseAddress!, rowBytes: input.pixels.bytesPerRow, rows: rows, firstRow: input.y,
                        workers: workers, inputWidth: source.size.width, conversion: conversion, scratch: loaded,
                        first: first, weights: weights, taps: horizontal.taps, identity: horizontal.isIdentity,
                        ring: ring, ringCapacity: ringCapacity, outputWidth: size.width)
                    if workers == 1 {
                        job.run(worker: 0)
                    } else {
                        DispatchQueue.concurrentPerform(iterations: workers) { job.run(worker: $0) }
                    }
                }
            }
        }
    }

    /// The horizontal pass over one batch of source rows, as one value the worker threads share. Unchecked
    /// Sendable because the pointers outlive the pass and each worker writes only its own rows of the ring and its
    /// own scratch rows.
    private struct HorizontalPass: @unchecked Sendable {
        let source: UnsafeRawPointer, rowBytes: Int, rows: Int, firstRow: Int, workers: Int, inputWidth: Int
        let conversion: SampleConversion
        let scratch: UnsafeMutableBufferPointer<SIMD4<Float>>
        let first: UnsafeBufferPointer<Int>, weights: UnsafeBufferPointer<SIMD4<Float>>, taps: Int, identity: Bool
        let ring: UnsafeMutableBufferPointer<SIMD4<Float>>, ringCapacity: Int, outputWidth: Int

        /// Resamples the pairs of rows `2 * worker`, `2 * (worker + workers)`, ... of the batch (the last row
        /// of an odd batch is paired with itself); rows kept at their width are loaded straight into the ring.
        func run(worker: Int) {
            if identity {
                for index in stride(from: worker, to: rows, by: workers) {
                    conversion.load(source + index * rowBytes,
                                    into: UnsafeMutableBufferPointer(start: ringRow(firstRow + index), count: outputWidth))
                }
                return
            }
            let rowsA = UnsafeMutableBufferPointer(rebasing: scratch[2 * worker * inputWidth..<(2 * worker + 1) * inputWidth])
            let rowsB = UnsafeMutableBufferPointer(rebasing: scratch[(2 * worker + 1) * inputWidth..<(2 * worker + 2) * inputWidth])
            for index in stride(from: 2 * worker, to: rows, by: 2 * workers) {
                let second = min(index + 1, rows - 1)
                conversion.load(source + index * rowBytes, into: rowsA)
                conversion.load(source + second * rowBytes, into: rowsB)
                ResamplingReader.resampleRows(UnsafeBufferPointer(rowsA), UnsafeBufferPointer(rowsB),
                                              into: ringRow(firstRow + index), ringRow(firstRow + second),
                                              first: first, weights: weights, taps: taps)
            }
        }

        private func ringRow(_ y: Int) -> UnsafeMutablePointer<SIMD4<Float>> {
            ring.baseAddress! + y % ringCapacity * outputWidth
        }
    }

    /// Output rows `outputRow ..< outputRow + count` from the ring into `strip` from row `at`, split by rows
    /// across two threads when it is worth it.
    private func verticalPass(outputRow: Int, count: Int, into strip: inout Strip, at row: Int) {
        let workers = count * size.width * vertical.taps >= 1 << 17 && count > 1 ? 2 : 1
        let rowBytes = strip.pixels.bytesPerRow
        strip.pixels.bytes.withUnsafeMutableBytes { bytes in
            vertical.first.withUnsafeBufferPointer { first in
                verticalLanes.withUnsafeBufferPointer { weights in
                    let job = VerticalPass(
                        target: bytes.baseAddress! + row * rowBytes, rowBytes: rowBytes, firstOutputRow: outputRow,
                        count: count, workers: workers, first: first, weights: weights, taps: vertical.taps,
                        ring: ring, ringCapacity: ringCapacity, width: size.width, accumulators: accumulators,
                        windows: windows, conversion: conversion)
                    if workers == 1 {
                        job.run(worker: 0)
                    } else {
                        DispatchQueue.concurrentPerform(iterations: workers) { job.run(worker: $0) }
                    }
                }
            }
        }
    }

    /// The vertical pass over output rows whose windows are all in the ring, shared by the worker threads.
    /// Unchecked Sendable for the same reason as `HorizontalPass`: each worker reads the ring and writes only its
    /// own output rows, accumulator and window table.
    private struct VerticalPass: @unchecked Sendable {
        let target: UnsafeMutableRawPointer, rowBytes: Int, firstOutputRow: Int, count: Int, workers: Int
        let first: UnsafeBufferPointer<Int>, weights: UnsafeBufferPointer<SIMD4<Float>>, taps: Int
        let ring: UnsafeMutableBufferPointer<SIMD4<Float>>, ringCapacity: Int, width: Int
        let accumulators: UnsafeMutableBufferPointer<SIMD4<Float>>
        let windows: UnsafeMutableBufferPointer<UnsafePointer<SIMD4<Float>>>
        let conversion: SampleConversion

        /// Computes rows `worker`, `worker + workers`, ... of the pass.
        func run(worker: Int) {
            let sums = UnsafeMutableBufferPointer(rebasing: accumulators[worker * width..<(worker + 1) * width])
            let window = windows.baseAddress! + worker * taps
            for index in stride(from: worker, to: count, by: workers) {
                let y = firstOutputRow + index
                for k in 0..<taps {
                    window[k] = UnsafePointer(ring.baseAddress! + (first[y] + k) % ringCapacity * width)
                }
                ResamplingReader.sumRows(window, weights: weights.baseAddress! + y * taps, taps: taps, into: sums)
                conversion.store(UnsafeBufferPointer(sums), to: target + index * rowBytes)
            }
        }
    }

    /// One output row of the vertical pass: pixel `x` is the weighted sum of pixel `x` of the `taps` rows.
    static func sumRows(_ rows: UnsafePointer<UnsafePointer<SIMD4<Float>>>, weights: UnsafePointer<SIMD4<Float>>, taps: Int,
                        into output: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        // Four pixels per step share each row pointer and weight load, and their four sums are independent chains
        // of adds (two kept each add waiting on the one before, four cycles each).
        var x = 0
        while x + 4 <= output.count {
            var s0 = SIMD4<Float>(repeating: 0), s1 = s0, s2 = s0, s3 = s0
            for k in 0..<taps {
                let row = rows[k] + x, weight = weights[k]
                s0 += row[0] * weight
                s1 += row[1] * weight
                s2 += row[2] * weight
                s3 += row[3] * weight
            }
            output[x] = s0
            output[x + 1] = s1
            output[x + 2] = s2
            output[x + 3] = s3
            x += 4
        }
        while x < output.count {
            output[x] = dot(taps: taps) { rows[$0][x] * weights[$0] }
            x += 1
        }
    }

    /// The horizontal pass of two rows at once: output pixel `i` of each is the weighted sum of `taps` pixels
    /// from `first[i]`. Sharing each weight load between two rows halves the weight traffic, which streams from
    /// the L2 cache for wide images, and gives the adds independent chains.
    static func resampleRows(_ a: UnsafeBufferPointer<SIMD4<Float>>, _ b: UnsafeBufferPointer<SIMD4<Float>>,
                             into outputA: UnsafeMutablePointer<SIMD4<Float>>, _ outputB: UnsafeMutablePointer<SIMD4<Float>>,
                             first: UnsafeBufferPointer<Int>, weights: UnsafeBufferPointer<SIMD4<Float>>, taps: Int) {
        let w = weights.baseAddress!
        for i in 0..<first.count {
            let baseA = a.baseAddress! + first[i], baseB = b.baseAddress! + first[i], weight = w + i * taps
            var a0 = SIMD4<Float>(repeating: 0), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0
            var k = 0
            while k + 4 <= taps {
                let w0 = weight[k], w1 = weight[k + 1], w2 = weight[k + 2], w3 = weight[k + 3]
                a0 += baseA[k] * w0
                b0 += baseB[k] * w0
                a1 += baseA[k + 1] * w1
                b1 += baseB[k + 1] * w1
                a2 += baseA[k + 2] * w2
                b2 += baseB[k + 2] * w2
                a3 += baseA[k + 3] * w3
                b3 += baseB[k + 3] * w3
                k += 4
            }
            while k < taps {
                a0 += baseA[k] * weight[k]
                b0 += baseB[k] * weight[k]
                k += 1
            }
            outputA[i] = (a0 + a1) + (a2 + a3)
            outputB[i] = (b0 + b1) + (b2 + b3)
        }
    }

    /// The sum of `term(0) ..< term(taps)` in four independent partial sums: one running sum would make every
    /// add wait for the previous one (four cycles each), which made both passes latency-bound.
    @inline(__always)
    static func dot(taps: Int, _ term: (Int) -> SIMD4<Float>) -> SIMD4<Float> {
        var s0 = SIMD4<Float>(repeating: 0), s1 = s0, s2 = s0, s3 = s0
        var k = 0
        while k + 4 <= taps {
            s0 += term(k)
            s1 += term(k + 1)
            s2 += term(k + 2)
            s3 += term(k + 3)
            k += 4
        }
        while k < taps {
            s0 += term(k)
            k += 1
        }
        return (s0 + s1) + (s2 + s3)
    }
}
