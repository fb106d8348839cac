/// The vertical pass of `ResamplingReader` for opaque 8-bit rows whose width is kept: the source rows' samples are
/// kept in a ring as they are, and each output sample is the weighted sum of the window's samples in 14-bit fixed
/// point, rounded and clamped, as Pillow and libvips resample 8-bit images. No pixel goes through four float lanes
/// (load, sum, store), and the sums run over whole rows of samples, which the compiler vectorises. The result is
/// within one level of the float path's (the weights' rounding is at most 255 * taps / 32768 of a level).
final class FixedPointRows {
    /// The weights in units of 1/16384, each output row's summing to exactly 16384; `taps` per row, as in `weights`.
    private let weights: [Int32]
    private let first: [Int]
    private let taps: Int
    /// Bytes per row (width times samples per pixel), and the rows the ring holds.
    private let rowBytes: Int
    private let ringRows: Int
    private let ring: UnsafeMutablePointer<UInt8>
    /// One output row's sums.
    private let sums: UnsafeMutablePointer<Int32>

    static let fractionBits: Int32 = 14

    /// For `weights`' output rows from rows of `rowBytes` samples, with a ring of `ringRows` rows.
    init(weights: ResamplingWeights, rowBytes: Int, ringRows: Int) {
        let one = Int32(1) << Self.fractionBits
        var fixed = [Int32](repeating: 0, count: weights.weights.count)
        for row in 0..<weights.first.count {
            let range = row * weights.taps..<(row + 1) * weights.taps
            for k in range { fixed[k] = Int32((Double(weights.weights[k][0]) * Double(one)).rounded()) }
            // What rounding lost or added goes to the largest weight, so a flat area stays exactly flat.
            let largest = range.max { abs(weights.weights[$0][0]) < abs(weights.weights[$1][0]) }!
            fixed[largest] += one - fixed[range].reduce(0, +)
        }
        self.weights = fixed
        first = weights.first
        taps = weights.taps
        self.rowBytes = rowBytes
        self.ringRows = ringRows
        ring = .allocate(capacity: ringRows * rowBytes)
        sums = .allocate(capacity: rowBytes)
    }

    deinit {
        ring.deallocate()
        sums.deallocate()
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
    /// across samples; a wider window adds six at a time into `sums`.
    func sum(outputRows: Int, count: Int, into target: inout ImageBuffer, at row: Int) {
        let bytesPerRow = target.bytesPerRow, width = rowBytes, half = Int32(1) << (Self.fractionBits - 1)
        target.bytes.withUnsafeMutableBytes { bytes in
            weights.withUnsafeBufferPointer { weights in
                for index in 0..<count {
                    let y = outputRows + index
                    let out = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + (row + index) * bytesPerRow
                    for group in stride(from: 0, to: taps, by: 6) {
                        // A group short of six repeats its first row at weight 0.
                        func tap(_ k: Int) -> (UnsafePointer<UInt8>, Int32) {
                            let tap = group + k < taps ? group + k : group
                            return (UnsafePointer(ring + (first[y] + tap) % ringRows * rowBytes),
                                    group + k < taps ? weights[y * taps + tap] : 0)
                        }
                        let (r0, w0) = tap(0), (r1, w1) = tap(1), (r2, w2) = tap(2)
                        let (r3, w3) = tap(3), (r4, w4) = tap(4), (r5, w5) = tap(5)
                        @inline(__always) func terms(_ i: Int) -> Int32 {
                            let sum = Int32(r0[i]) &* w0 &+ Int32(r1[i]) &* w1 &+ Int32(r2[i]) &* w2
                            return sum &+ Int32(r3[i]) &* w3 &+ Int32(r4[i]) &* w4 &+ Int32(r5[i]) &* w5
                        }
                        // Four loops without a branch inside, so that each vectorises.
                        switch (group == 0, group + 6 >= taps) {
                        case (true, true):
                            for i in 0..<width { out[i] = UInt8(clamping: (half &+ terms(i)) >> Self.fractionBits) }
                        case (true, false):
                            for i in 0..<width { sums[i] = half &+ terms(i) }
                        case (false, true):
                            for i in 0..<width { out[i] = UInt8(clamping: (sums[i] &+ terms(i)) >> Self.fractionBits) }
                        case (false, false):
                            for i in 0..<width { sums[i] &+= terms(i) }
                        }
                    }
                }
            }
        }
    }
}
