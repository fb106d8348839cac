/// The vertical pass of `ResamplingReader` for opaque 8-bit rows whose width is kept: the source rows' samples are
/// kept in a ring as they are, and each output sample is the weighted sum of the window's samples in 14-bit fixed
/// point, rounded and clamped, as Pillow and libvips resample 8-bit images. No pixel goes through four float lanes
/// (load, sum, store), and the sums run over whole rows of samples, which the compiler vectorises: each product
/// of an 8-bit sample and a 16-bit weight is a lane of SSE2's multiply-add (`pmaddwd`). The result is within one
/// level of the float path's (the weights' rounding is at most 255 * taps / 32768 of a level).
final class FixedPointRows {
    /// The weights in units of 1/16384, each output row's summing to exactly 16384: its `taps`, as in `weights`,
    /// then zeros to a whole group of six, from `row * stride`.
    private let weights: [Int16]
    private let first: [Int]
    private let taps: Int
    private let stride: Int
    /// Bytes per row (width times samples per pixel), and the rows the ring holds.
    private let rowBytes: Int
    private let ringRows: Int
    private let ring: UnsafeMutablePointer<UInt8>
    /// One output row's sums.
    private let sums: UnsafeMutablePointer<Int32>
    /// The ring rows of the window being summed.
    private let window: UnsafeMutablePointer<UnsafePointer<UInt8>>

    static let fractionBits = 14
    /// Taps summed in one expression.
    static let group = 6

    /// For `weights`' output rows from rows of `rowBytes` samples, with a ring of `ringRows` rows; nil when a
    /// weight does not fit 16 bits in fixed point (never for the built-in kernels, whose weights stay below 2).
    init?(weights: ResamplingWeights, rowBytes: Int, ringRows: Int) {
        let one = 1 << Self.fractionBits, taps = weights.taps
        let stride = (taps + Self.group - 1) / Self.group * Self.group
        var fixed = [Int16](repeating: 0, count: weights.first.count * stride)
        let fits = weights.weights.withUnsafeBufferPointer { floats in
            fixed.withUnsafeMutableBufferPointer { fixed in
                for row in 0..<weights.first.count {
                    var total = 0, largest = 0, largestMagnitude: Float = -1
                    for k in 0..<taps {
                        let weight = floats[row * taps + k], value = Int((Double(weight) * Double(one)).rounded())
                        guard let sample = Int16(exactly: value) else { return false }
                        fixed[row * stride + k] = sample
                        total += value
                        // What rounding lost or added goes to the largest weight, so a flat area stays exactly flat.
                        if abs(weight) > largestMagnitude { (largest, largestMagnitude) = (k, abs(weight)) }
                    }
                    let corrected = Int(fixed[row * stride + largest]) + one - total
                    guard let sample = Int16(exactly: corrected) else { return false }
                    fixed[row * stride + largest] = sample
                }
                return true
            }
        }
        guard fits else { return nil }
        self.weights = fixed
        first = weights.first
        self.taps = taps
        self.stride = stride
        self.rowBytes = rowBytes
        self.ringRows = ringRows
        ring = .allocate(capacity: ringRows * rowBytes)
        sums = .allocate(capacity: rowBytes)
        window = .allocate(capacity: taps)
    }

    deinit {
        ring.deallocate()
        sums.deallocate()
        window.deallocate()
    }

    /// Copies the rows of `pixels` into the ring as source rows `firstRow...`.
    func store(_ pixels: ImageBuffer, firstRow: Int) {
        pixels.bytes.withUnsafeBytes { bytes in
            for row in 0..<pixels.height {
                (ring + (firstRow + row) % ringRows * rowBytes).update(
                    from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * pixels.bytesPerRow, count: rowBytes)
            }
        }
    }

    /// Output rows `outputRows ..< outputRows + count`, whose windows the ring holds, into `target` from row `at`.
    /// Six taps are summed in one expression per sample (a stretch's whole window), which the compiler vectorises
    /// across samples; a wider window adds six at a time into `sums`. The compiler uses `pmaddwd` only where it
    /// sees that each weight fits 16 bits and cannot see that the rows come from one base: so the weights are read
    /// as they are (a group short of six has zeros), never picked by a condition, and the rows' pointers are set
    /// by a function it does not inline (`point`).
    func sum(outputRows: Int, count: Int, into target: inout ImageBuffer, at row: Int) {
        let bytesPerRow = target.bytesPerRow
        target.bytes.withUnsafeMutableBytes { bytes in
            weights.withUnsafeBufferPointer { weights in
                for index in 0..<count {
                    let y = outputRows + index
                    Self.point(window, count: taps) { UnsafePointer(ring + (first[y] + $0) % ringRows * rowBytes) }
                    Self.sumRow(window, weights: weights.baseAddress! + y * stride, taps: taps, count: rowBytes, sums: sums,
                                into: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + (row + index) * bytesPerRow)
                }
            }
        }
    }

    /// `output[i]` for `i < count`: the sum of `weights[k] * rows[k][i]` over the `taps` rows, rounded and clamped;
    /// `weights` runs on in zeros to a whole group of six.
    @inline(__always)
    private static func sumRow(_ rows: UnsafePointer<UnsafePointer<UInt8>>, weights: UnsafePointer<Int16>, taps: Int,
                               count: Int, sums: UnsafeMutablePointer<Int32>, into output: UnsafeMutablePointer<UInt8>) {
        let half = Int32(1) << (fractionBits - 1), shift = Int32(fractionBits)
        for group in Swift.stride(from: 0, to: taps, by: Self.group) {
            // A group short of six repeats its first row, at weight 0.
            func tap(_ k: Int) -> (UnsafePointer<UInt8>, Int32) {
                (rows[group + k < taps ? group + k : group], Int32(weights[group + k]))
            }
            let (r0, w0) = tap(0), (r1, w1) = tap(1), (r2, w2) = tap(2)
            let (r3, w3) = tap(3), (r4, w4) = tap(4), (r5, w5) = tap(5)
            @inline(__always) func terms(_ i: Int) -> Int32 {
                let sum = Int32(r0[i]) &* w0 &+ Int32(r1[i]) &* w1 &+ Int32(r2[i]) &* w2
                return sum &+ Int32(r3[i]) &* w3 &+ Int32(r4[i]) &* w4 &+ Int32(r5[i]) &* w5
            }
            // Four loops without a branch inside, so that each vectorises.
            switch (group == 0, group + Self.group >= taps) {
            case (true, true):
                for i in 0..<count { output[i] = UInt8(clamping: (half &+ terms(i)) &>> shift) }
            case (true, false):
                for i in 0..<count { sums[i] = half &+ terms(i) }
            case (false, true):
                for i in 0..<count { output[i] = UInt8(clamping: (sums[i] &+ terms(i)) &>> shift) }
            case (false, false):
                for i in 0..<count { sums[i] &+= terms(i) }
            }
        }
    }

    /// Fills `window` with `row(0 ..< count)`.
    @inline(never)
    private static func point(_ window: UnsafeMutablePointer<UnsafePointer<UInt8>>, count: Int,
                              _ row: (Int) -> UnsafePointer<UInt8>) {
        for k in 0..<count { window[k] = row(k) }
    }
}
