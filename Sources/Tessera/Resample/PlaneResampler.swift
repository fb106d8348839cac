import CCPUFeatures
import ResamplingLoops
import ResamplingLoopsAVX2

/// Resamples one plane of 8-bit samples (a JPEG's luma or one of its chroma planes, `JPEGPlanes`) with precomputed
/// weights on each axis, in floats (`resamplePlane`): compiled for AVX2 where the CPU has it, eight float lanes to
/// a register rather than SSE2's four, with the same results to the bit.
enum PlaneResampler {
    /// The instruction sets the loops are compiled for.
    enum Loops: Sendable {
        case baseline, avx2

        /// Those this CPU runs, the fastest last.
        static let available: [Loops] = tessera_cpu_runs_haswell_code() == 1 ? [.baseline, .avx2] : [.baseline]
        /// The fastest this CPU runs, which renders use.
        static let fastest = available[available.count - 1]
    }

    /// Fills `width` x `height` samples at `target` (rows `targetStride` apart) from the window of `columns`
    /// samples across at `source` (rows `sourceStride` apart): output sample (x, y) from the window's columns
    /// `across.first[x]...` and rows `down.first[y]...`, which lie inside it.
    static func resample(_ source: UnsafePointer<UInt8>, sourceStride: Int, columns: Int,
                         across: ResamplingWeights, down: ResamplingWeights,
                         into target: UnsafeMutablePointer<UInt8>, targetStride: Int, width: Int, height: Int,
                         loops: Loops = Loops.fastest) {
        across.withAxisTaps { across in
            down.withAxisTaps { down in
                switch loops {
                case .baseline:
                    resamplePlane(source, sourceStride: sourceStride, columns: columns, across: across, down: down,
                                  into: target, targetStride: targetStride, width: width, height: height)
                case .avx2:
                    resamplePlaneAVX2(source, sourceStride: sourceStride, columns: columns, across: across,
                                      down: down, into: target, targetStride: targetStride, width: width,
                                      height: height)
                }
            }
        }
    }
}

extension ResamplingWeights {
    /// These weights as the resampling loops read them, for the duration of `body`.
    fileprivate func withAxisTaps<Result>(_ body: (AxisTaps) -> Result) -> Result {
        first.withUnsafeBufferPointer { first in
            weights.withUnsafeBufferPointer { weights in
                body(AxisTaps(first: first.baseAddress!, weights: weights.baseAddress!, taps: taps,
                              copied: run.map { ($0.start, $0.count) }))
            }
        }
    }
}

extension JPEGPlanes {
    /// The planes of `region` (in this image's pixels) resampled to `size` pixels with `kernel`, laid out for the
    /// encoder at `subsampling`. `extent` is the region's size as the output maps it: larger than the region on an
    /// axis whose last pixel is repeated (a level halved rounding down lost the image's last pixels: the size asked
    /// for is the region's and one). Each plane is resampled at its own sampling, its samples' centres placed as
    /// JPEG places them (a 4:2:0 chroma sample at the centre of its 2 x 2 pixels). A plane's window at least twice
    /// the samples asked for on an axis is first averaged over boxes of the largest power of two that leaves the
    /// kernel a shrink under 2 (`BoxShrink`), as libvips shrinks before its kernel: the kernel's window, and its
    /// sums, stay a few samples wide. The axes' weights are kept for later calls (`ResamplingWeights.shared`) when
    /// `keepingWeights`, for the sizes that recur (a tile grid's: the tiles of an edge column share theirs); else
    /// made here, a plane's taken again by the next plane with the same axis: for sizes no later call asks (an
    /// image's thumbnails from its whole level), whose weights cost less to make than to keep (a 90-pixel
    /// thumbnail's took 15 us instead of 22 in a server, a new server's first 29 instead of 43: BENCHMARKS,
    /// "Session 51").
    public func resampled(region: Rect, extent: Size, to size: Size, subsampling: EncodeOptions.Subsampling,
                          kernel: ResamplingKernel, keepingWeights: Bool = true) -> JPEGPlanes {
        var output = JPEGPlanes(size: size, gray: planes.count == 1, subsampling: subsampling)
        let targets = output.planes
        /// One axis's weights, from `inputLength` to `outputLength` samples `scale` apart from `lag`.
        struct Axis: Equatable {
            let inputLength: Int, outputLength: Int, scale: Double, lag: Double
        }
        var made: [(axis: Axis, weights: ResamplingWeights)] = []
        func weights(_ axis: Axis) -> ResamplingWeights {
            guard !keepingWeights else {
                return .shared(kernel: kernel, inputLength: axis.inputLength, outputLength: axis.outputLength,
                               scale: axis.scale, lag: axis.lag)
            }
            if let found = made.first(where: { $0.axis == axis }) { return found.weights }
            let weights = ResamplingWeights(kernel: kernel, inputLength: axis.inputLength,
                                            outputLength: axis.outputLength, scale: axis.scale, lag: axis.lag)
            made.append((axis, weights))
            return weights
        }
        /// The samples of a plane that an axis reads, and how the output maps them: the region's `start` and
        /// `length` in pixels, `extent` pixels mapped to `length` output pixels, `step` and `outputStep` pixels per
        /// sample in the plane and in the output plane; `first` and `count` samples of the plane's `samples`, the
        /// output's samples `scale` of them apart, starting `lag` into the first (`ResamplingWeights`).
        func axis(start: Int, length: Int, extent: Int, output outputLength: Int, samples: Int, step: Double,
                  outputStep: Double) -> (first: Int, count: Int, scale: Double, lag: Double) {
            let begin = Double(start) / step
            let first = min(Int(begin.rounded(.down)), samples - 1)
            let end = min(samples, Int((Double(start + length) / step).rounded(.up)))
            return (first, max(1, end - first), Double(extent) / Double(outputLength) * outputStep / step,
                    begin - Double(first))
        }
        samples.withUnsafeBufferPointer { source in
            output.samples.withUnsafeMutableBufferPointer { target in
                for (plane, out) in zip(planes, targets) {
                    CooperativeYield.point()
                    let across = axis(start: region.x, length: region.width, extent: extent.width, output: size.width,
                                      samples: plane.width, step: plane.pixelsPerSample.x,
                                      outputStep: out.pixelsPerSample.x)
                    let down = axis(start: region.y, length: region.height, extent: extent.height,
                                    output: size.height, samples: plane.height, step: plane.pixelsPerSample.y,
                                    outputStep: out.pixelsPerSample.y)
                    // The window's samples averaged over boxes first when the shrink is by two or more: the box's
                    // samples stand for `factor` of the window's each, its first starting where the window does.
                    let shrink = BoxShrink(across: BoxShrink.factor(for: across.scale, samples: across.count),
                                           down: BoxShrink.factor(for: down.scale, samples: down.count))
                    let window = source.baseAddress! + plane.offset + down.first * plane.stride + across.first
                    shrink.withSamples(window, stride: plane.stride, width: across.count, height: down.count) {
                        samples, stride, width, height in
                        let acrossWeights = weights(Axis(
                            inputLength: width, outputLength: out.width,
                            scale: across.scale / Double(shrink.across), lag: across.lag / Double(shrink.across)))
                        let downWeights = weights(Axis(
                            inputLength: height, outputLength: out.height,
                            scale: down.scale / Double(shrink.down), lag: down.lag / Double(shrink.down)))
                        CooperativeYield.point()
                        PlaneResampler.resample(
                            samples, sourceStride: stride, columns: (acrossWeights.first.last ?? 0) + acrossWeights.taps,
                            across: acrossWeights, down: downWeights,
                            into: target.baseAddress! + out.offset, targetStride: out.stride, width: out.width,
                            height: out.height)
                    }
                }
            }
        }
        return output
    }
}
