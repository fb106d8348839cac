import Dispatch

/// Resamples a reader's image to an exact size with a separable kernel, streaming: each source row is
/// resampled horizontally once into a ring buffer holding the vertical kernel's window of rows (plus one batch),
/// and each output row is a weighted sum of the ring's rows. Memory is bounded by the widths, never the height.
///
///     source strip -> load (premultiply, linearise) -> horizontal pass (2 threads) -> ring -> vertical pass -> store
///
/// Pixels are filtered as four Float32 lanes (colour in lanes 0-2, alpha in lane 3), alpha premultiplied so
/// colour under transparent pixels never bleeds into its neighbours.
public final class ResamplingReader: ImageReader {
    /// How the resampler treats the samples it filters.
    public struct Options: Sendable {
        /// The filter; Lanczos3 by default.
        public var kernel: ResamplingKernel
        /// Filter in linear light (sRGB decoded before and encoded after), which keeps bright detail from
        /// darkening when shrinking; off by default, as in libvips and Pillow.
        public var linearLight: Bool

        public init(kernel: ResamplingKernel = .lanczos3, linearLight: Bool = false) {
            self.kernel = kernel
            self.linearLight = linearLight
        }
    }

    private let source: any ImageReader
    public let size: Size
    public let options: Options
    public private(set) var nextRow = 0

    private let horizontal: ResamplingWeights
    private let vertical: ResamplingWeights
    private let conversion: SampleConversion
    /// Source rows resampled per batch; the horizontal pass of a batch is split across two threads.
    private let batchRows = 32
    private let ring: UnsafeMutableBufferPointer<SIMD4<Float>>
    private let ringCapacity: Int
    /// One loaded source row per worker thread.
    private let loaded: UnsafeMutableBufferPointer<SIMD4<Float>>
    private let accumulator: UnsafeMutableBufferPointer<SIMD4<Float>>
    /// Source rows resampled into the ring so far.
    private var filled = 0
    private var input: Strip

    /// Resamples `source` to `size` pixels (any scale up or down, independently in x and y).
    public init(source: any ImageReader, size: Size, options: Options = Options()) throws {
        guard size.width > 0, size.height > 0 else {
            throw TesseraError.invalidArgument("the output size must be positive, not \(size)")
        }
        guard source.size.width > 0, source.size.height > 0 else {
            throw TesseraError.invalidArgument("cannot resample an empty \(source.size) image")
        }
        self.source = source
        self.size = size
        self.options = options
        horizontal = ResamplingWeights(kernel: options.kernel, inputLength: source.size.width, outputLength: size.width)
        vertical = ResamplingWeights(kernel: options.kernel, inputLength: source.size.height, outputLength: size.height)
        conversion = SampleConversion(format: source.format, linearLight: options.linearLight)
        ringCapacity = vertical.taps + batchRows
        ring = .allocate(capacity: ringCapacity * size.width)
        loaded = .allocate(capacity: 2 * source.size.width)
        accumulator = .allocate(capacity: size.width)
        input = source.makeStrip()
    }

    deinit {
        ring.deallocate()
        loaded.deallocate()
        accumulator.deallocate()
    }

    public var format: PixelFormat { source.format }

    public func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, size.height - nextRow)
        strip.prepare(y: nextRow, rows: max(rows, 0), width: size.width, format: format)
        guard rows > 0 else { return false }
        let stride = strip.pixels.bytesPerRow
        for row in 0..<rows {
            let y = nextRow + row
            let first = vertical.first[y]
            try fill(through: first + vertical.taps, keeping: first)
            sumRows(first: first, weights: y * vertical.taps)
            strip.pixels.bytes.withUnsafeMutableBytes { bytes in
                conversion.store(UnsafeBufferPointer(accumulator), to: bytes.baseAddress! + row * stride)
            }
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
                throw TesseraError.invalidArgument("resampling: the source ended at row \(filled) of \(source.size.height)")
            }
            resampleBatch()
            filled += input.height
        }
    }

    /// The horizontal pass over the strip just read, split by rows across two threads when it is worth it.
    private func resampleBatch() {
        let rows = input.height
        let workers = rows * size.width * horizontal.taps >= 1 << 18 && rows > 1 ? 2 : 1
        input.pixels.bytes.withUnsafeBytes { bytes in
            horizontal.first.withUnsafeBufferPointer { first in
                horizontal.weights.withUnsafeBufferPointer { weights in
                    let job = HorizontalPass(
                        source: bytes.baseAddress!, rowBytes: input.pixels.bytesPerRow, rows: rows, firstRow: input.y,
                        workers: workers, inputWidth: source.size.width, conversion: conversion, scratch: loaded,
                        first: first, weights: weights, taps: horizontal.taps, ring: ring, ringCapacity: ringCapacity,
                        outputWidth: size.width)
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
    /// own scratch row.
    private struct HorizontalPass: @unchecked Sendable {
        let source: UnsafeRawPointer, rowBytes: Int, rows: Int, firstRow: Int, workers: Int, inputWidth: Int
        let conversion: SampleConversion
        let scratch: UnsafeMutableBufferPointer<SIMD4<Float>>
        let first: UnsafeBufferPointer<Int>, weights: UnsafeBufferPointer<Float>, taps: Int
        let ring: UnsafeMutableBufferPointer<SIMD4<Float>>, ringCapacity: Int, outputWidth: Int

        /// Resamples rows `worker`, `worker + workers`, ... of the batch.
        func run(worker: Int) {
            let row = UnsafeMutableBufferPointer(rebasing: scratch[worker * inputWidth..<(worker + 1) * inputWidth])
            for index in stride(from: worker, to: rows, by: workers) {
                conversion.load(source + index * rowBytes, into: row)
                let slot = (firstRow + index) % ringCapacity
                let target = UnsafeMutableBufferPointer(rebasing: ring[slot * outputWidth..<(slot + 1) * outputWidth])
                ResamplingReader.resampleRow(UnsafeBufferPointer(row), into: target, first: first, weights: weights,
                                             taps: taps)
            }
        }
    }

    /// Sums the ring's rows `first ..< first + taps` with output row weights starting at `weights`.
    private func sumRows(first: Int, weights offset: Int) {
        let width = size.width
        vertical.weights.withUnsafeBufferPointer { weights in
            for k in 0..<vertical.taps {
                let weight = weights[offset + k]
                let slot = (first + k) % ringCapacity
                let row = UnsafeBufferPointer(rebasing: ring[slot * width..<(slot + 1) * width])
                Self.accumulate(row, weight: weight, into: accumulator, replacing: k == 0)
            }
        }
    }

    /// One row's horizontal pass: output pixel `i` is the weighted sum of `taps` pixels from `first[i]`.
    static func resampleRow(_ row: UnsafeBufferPointer<SIMD4<Float>>, into output: UnsafeMutableBufferPointer<SIMD4<Float>>,
                            first: UnsafeBufferPointer<Int>, weights: UnsafeBufferPointer<Float>, taps: Int) {
        let pixels = row.baseAddress!, w = weights.baseAddress!
        for i in 0..<output.count {
            let base = pixels + first[i], weight = w + i * taps
            var sum = SIMD4<Float>(repeating: 0)
            for k in 0..<taps { sum += base[k] * weight[k] }
            output[i] = sum
        }
    }

    /// `output += weight * row`, or `output = weight * row` for the first row of a window.
    static func accumulate(_ row: UnsafeBufferPointer<SIMD4<Float>>, weight: Float,
                           into output: UnsafeMutableBufferPointer<SIMD4<Float>>, replacing: Bool) {
        let scale = SIMD4<Float>(repeating: weight)
        if replacing {
            for x in 0..<output.count { output[x] = row[x] * scale }
        } else {
            for x in 0..<output.count { output[x] += row[x] * scale }
        }
    }
}
