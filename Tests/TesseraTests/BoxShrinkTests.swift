import Testing
@testable import Tessera

/// The box averages a shrink by two or more starts with, against the mean of each box's samples worked out here.
@Suite struct BoxShrinkTests {
    /// The box is the largest power of two the shrink reaches, leaving the kernel under 2, and no wider than the
    /// window.
    @Test func theBoxLeavesTheKernelUnderTwo() {
        #expect([0.5, 1, 1.99, 2, 2.62, 3.99, 4, 9.7].map { BoxShrink.factor(for: $0, samples: 100) }
            == [1, 1, 1, 2, 2, 2, 4, 8])
        #expect([1, 2, 3, 7, 8].map { BoxShrink.factor(for: 9.7, samples: $0) } == [1, 2, 2, 4, 8])
    }

    /// Boxes of 2 x 2, 4 x 4, 2 x 1 and 1 x 4 over an odd-sized window (rows wider than it, starting past other
    /// samples, whose values would show if read), against halvings worked out here in doubles, an odd last column
    /// or row averaged with itself: each sample within the rounding of its halvings.
    @Test func eachSampleIsItsBoxsMean() {
        let width = 37, height = 23, rowStride = 40, offset = 5
        var samples = [UInt8](repeating: 255, count: offset + rowStride * height)
        for y in 0..<height {
            for x in 0..<width { samples[offset + y * rowStride + x] = UInt8(truncatingIfNeeded: x * 29 + y * 53 + x * y * 7) }
        }
        let original = (0..<height).map { y in (0..<width).map { Double(samples[offset + y * rowStride + $0]) } }
        /// Rows of samples averaged in pairs across, down or both.
        func halved(_ rows: [[Double]], across: Bool, down: Bool) -> [[Double]] {
            var result: [[Double]] = []
            for top in stride(from: 0, to: rows.count, by: down ? 2 : 1) {
                let bottom = down ? min(top + 1, rows.count - 1) : top
                let row: [Double] = zip(rows[top], rows[bottom]).map { ($0 + $1) / 2 }
                guard across else {
                    result.append(row)
                    continue
                }
                var pairs: [Double] = []
                for left in stride(from: 0, to: row.count, by: 2) {
                    pairs.append((row[left] + row[min(left + 1, row.count - 1)]) / 2)
                }
                result.append(pairs)
            }
            return result
        }
        for (across, down) in [(2, 2), (4, 4), (2, 1), (1, 4)] {
            var expected = original, (acrossLeft, downLeft) = (across, down), halvings = 0
            while acrossLeft > 1 || downLeft > 1 {
                expected = halved(expected, across: acrossLeft > 1, down: downLeft > 1)
                (acrossLeft, downLeft, halvings) = (max(1, acrossLeft / 2), max(1, downLeft / 2), halvings + 1)
            }
            samples.withUnsafeBufferPointer { buffer in
                BoxShrink(across: across, down: down).withSamples(buffer.baseAddress! + offset, stride: rowStride,
                                                                  width: width, height: height) {
                    shrunk, stride, boxesAcross, boxesDown in
                    #expect(boxesAcross == (width + across - 1) / across && boxesDown == (height + down - 1) / down)
                    for y in 0..<boxesDown {
                        for x in 0..<boxesAcross {
                            let got = Double(shrunk[y * stride + x])
                            #expect(abs(got - expected[y][x]) <= 0.5 * Double(halvings),
                                    "\(across) x \(down) box (\(x), \(y)): \(got) against \(expected[y][x])")
                        }
                    }
                }
            }
        }
    }
}
