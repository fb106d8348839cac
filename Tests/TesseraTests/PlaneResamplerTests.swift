import Testing
@testable import Tessera

/// The plane resampler's loops, in each instruction set this CPU runs, against sums worked out here in doubles.
@Suite struct PlaneResamplerTests {
    /// A shrink with many taps, a stretch by a pixel, an axis kept and an axis whose last sample is repeated, an
    /// output narrower and shorter than the loops' eight lanes, from a window inside wider rows: every output sample
    /// within a level of its weighted sum in doubles (rounded and clamped), and the same to the bit whichever loops
    /// made it (AVX2's or SSE2's on x86-64).
    @Test func everyLoopGivesTheWeightedSums() {
        let rowStride = 300, rows = 180, offset = 7
        var samples = [UInt8](repeating: 0, count: offset + rowStride * rows)
        for index in samples.indices { samples[index] = UInt8(truncatingIfNeeded: index * 37 + index / 301 * 11) }
        // Window and output sizes, and source samples per output sample where not their ratio: 1 keeps the
        // samples as they are (the last one repeated past the window's end), the others stretch by about a pixel.
        let cases: [(columns: Int, across: Double?, down: Int, vertical: Double?, width: Int, height: Int)] = [
            (219, nil, 157, nil, 125, 90), (102, 103 / 102.25, 170, 171 / 172.0, 103, 172),
            (64, 1, 33, 33 / 41.5, 65, 41), (201, nil, 120, 1, 13, 120), (19, nil, 11, nil, 5, 3),
        ]
        for (columns, acrossScale, down, verticalScale, width, height) in cases {
            let across = ResamplingWeights(kernel: .lanczos3, inputLength: columns, outputLength: width, scale: acrossScale)
            let vertical = ResamplingWeights(kernel: .lanczos3, inputLength: down, outputLength: height,
                                             scale: verticalScale)
            var answers: [[UInt8]] = []
            for loops in PlaneResampler.Loops.available {
                var output = [UInt8](repeating: 0, count: width * height)
                samples.withUnsafeBufferPointer { source in
                    output.withUnsafeMutableBufferPointer { target in
                        PlaneResampler.resample(source.baseAddress! + offset, sourceStride: rowStride,
                                                columns: columns, across: across, down: vertical,
                                                into: target.baseAddress!, targetStride: width, width: width,
                                                height: height, loops: loops)
                    }
                }
                answers.append(output)
            }
            #expect(answers.allSatisfy { $0 == answers[0] }, "\(columns) x \(down) to \(width) x \(height)")
            var worst = 0.0
            for y in 0..<height {
                for x in 0..<width {
                    var sum = 0.0
                    for j in 0..<vertical.taps {
                        var row = 0.0
                        for i in 0..<across.taps {
                            let sample = samples[offset + (vertical.first[y] + j) * rowStride + across.first[x] + i]
                            row += Double(across.weights[x * across.taps + i]) * Double(sample)
                        }
                        sum += Double(vertical.weights[y * vertical.taps + j]) * row
                    }
                    worst = max(worst, abs(Double(answers[0][y * width + x]) - min(max(sum, 0), 255).rounded()))
                }
            }
            #expect(worst <= 1, "\(columns) x \(down) to \(width) x \(height): \(worst) levels off")
        }
    }
}
