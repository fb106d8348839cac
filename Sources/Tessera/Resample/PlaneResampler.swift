/// Resamples one plane of 8-bit samples (a JPEG's luma or one of its chroma planes, `JPEGPlanes`) with precomputed
/// weights on each axis, in floats: down the columns first, eight columns at a time; then across, eight rows at a
/// time (the rows turned so that each column's eight samples lie together, so every tap is one 8-lane multiply-add
/// for eight output samples). An axis whose weights pick one sample each (a length kept, a last sample repeated)
/// copies.
enum PlaneResampler {
    /// Fills `width` x `height` samples at `target` (rows `targetStride` apart) from the window of `columns`
    /// samples across at `source` (rows `sourceStride` apart): output sample (x, y) from the window's columns
    /// `across.first[x]...` and rows `down.first[y]...`, which lie inside it.
    static func resample(_ source: UnsafePointer<UInt8>, sourceStride: Int, columns: Int,
                         across: ResamplingWeights, down: ResamplingWeights,
                         into target: UnsafeMutablePointer<UInt8>, targetStride: Int, width: Int, height: Int) {
        guard width > 0, height > 0, columns > 0 else { return }
        // Float rows of whole 8-lane chunks: the source rows used, the vertical pass's row, the output row before
        // rounding; eight rows turned (8 floats per column) and the eight output rows across, turned.
        let floatWidth = (columns + 7) / 8 * 8, outputWidth = (width + 7) / 8 * 8
        let firstRow = down.first[0], lastRow = down.first[height - 1] + down.taps
        let sourceFloats = (lastRow - firstRow) * floatWidth
        let floatCount = sourceFloats + floatWidth + outputWidth + 8 * floatWidth + 8 * outputWidth
        let floats = UnsafeMutableRawPointer.allocate(byteCount: floatCount * 4, alignment: 32)
            .bindMemory(to: Float.self, capacity: floatCount)
        defer { floats.deallocate() }
        let line = floats + sourceFloats, result = line + floatWidth
        let turned = result + outputWidth, turnedOutput = turned + 8 * floatWidth
        for row in firstRow..<lastRow {
            let from = source + row &* sourceStride, to = floats + (row - firstRow) &* floatWidth
            for column in 0..<columns { to[column] = Float(from[column]) }
            (to + columns).initialize(repeating: 0, count: floatWidth - columns)
        }
        turned.initialize(repeating: 0, count: 8 * floatWidth)
        let downPicks = down.run, acrossPicks = across.run
        down.weights.withUnsafeBufferPointer { downWeights in
            across.weights.withUnsafeBufferPointer { acrossWeights in
                var y = 0
                while y < height {
                    let block = min(8, height - y)
                    for r in 0..<block {
                        let row: UnsafePointer<Float>
                        if let downPicks {
                            row = UnsafePointer(floats + (downPicks.source(y + r) - firstRow) &* floatWidth)
                        } else {
                            sumRows(floats + (down.first[y + r] - firstRow) &* floatWidth, stride: floatWidth,
                                    weights: downWeights.baseAddress! + (y + r) &* down.taps, taps: down.taps,
                                    into: line, width: floatWidth)
                            row = UnsafePointer(line)
                        }
                        if let acrossPicks {
                            let out = target + (y + r) &* targetStride
                            let kept = Swift.min(acrossPicks.count, width)
                            store(row + acrossPicks.start, count: kept, into: out)
                            (out + kept).initialize(repeating: out[kept - 1], count: width - kept)
                        } else {
                            for column in 0..<columns { turned[column &* 8 &+ r] = row[column] }
                        }
                    }
                    if acrossPicks == nil {
                        sumColumns(turned, first: across.first, weights: acrossWeights.baseAddress!, taps: across.taps,
                                   into: turnedOutput, width: width)
                        for r in 0..<block {
                            for x in 0..<width { result[x] = turnedOutput[x &* 8 &+ r] }
                            store(result, count: width, into: target + (y + r) &* targetStride)
                        }
                    }
                    y += block
                }
            }
        }
    }

    /// `line[0..<width]` = the sum over `k` of `weights[k]` x row `k` below `top` (rows `stride` floats apart).
    /// Four 8-float chunks at a time, each its own sum: one sum's chain of adds would wait on each add's latency.
    @inline(__always)
    private static func sumRows(_ top: UnsafeMutablePointer<Float>, stride: Int, weights: UnsafePointer<Float>,
                                taps: Int, into line: UnsafeMutablePointer<Float>, width: Int) {
        let source = UnsafeRawPointer(top), target = UnsafeMutableRawPointer(line), rowBytes = stride &* 4
        let bytes = width &* 4
        var chunk = 0
        while chunk &+ 128 <= bytes {
            var sum0 = SIMD8<Float>(), sum1 = SIMD8<Float>(), sum2 = SIMD8<Float>(), sum3 = SIMD8<Float>()
            var offset = chunk
            for k in 0..<taps {
                let weight = weights[k]
                sum0 += weight * source.load(fromByteOffset: offset, as: SIMD8<Float>.self)
                sum1 += weight * source.load(fromByteOffset: offset &+ 32, as: SIMD8<Float>.self)
                sum2 += weight * source.load(fromByteOffset: offset &+ 64, as: SIMD8<Float>.self)
                sum3 += weight * source.load(fromByteOffset: offset &+ 96, as: SIMD8<Float>.self)
                offset &+= rowBytes
            }
            target.storeBytes(of: sum0, toByteOffset: chunk, as: SIMD8<Float>.self)
            target.storeBytes(of: sum1, toByteOffset: chunk &+ 32, as: SIMD8<Float>.self)
            target.storeBytes(of: sum2, toByteOffset: chunk &+ 64, as: SIMD8<Float>.self)
            target.storeBytes(of: sum3, toByteOffset: chunk &+ 96, as: SIMD8<Float>.self)
            chunk &+= 128
        }
        while chunk < bytes {
            var sum = SIMD8<Float>()
            var offset = chunk
            for k in 0..<taps {
                sum += weights[k] * source.load(fromByteOffset: offset, as: SIMD8<Float>.self)
                offset &+= rowBytes
            }
            target.storeBytes(of: sum, toByteOffset: chunk, as: SIMD8<Float>.self)
            chunk &+= 32
        }
    }

    /// For each output column `x`, eight rows at once: the sum over `k` of `weights[x * taps + k]` x the eight
    /// samples of column `first[x] + k` of `turned` (8 floats per column), into `output`'s 8 floats of column `x`.
    /// Four columns at a time, each its own sum, as in `sumRows`.
    @inline(__always)
    private static func sumColumns(_ turned: UnsafeMutablePointer<Float>, first: [Int], weights: UnsafePointer<Float>,
                                   taps: Int, into output: UnsafeMutablePointer<Float>, width: Int) {
        let source = UnsafeRawPointer(turned), target = UnsafeMutableRawPointer(output)
        first.withUnsafeBufferPointer { first in
            var x = 0
            while x &+ 4 <= width {
                var sum0 = SIMD8<Float>(), sum1 = SIMD8<Float>(), sum2 = SIMD8<Float>(), sum3 = SIMD8<Float>()
                let weights0 = weights + x &* taps, weights1 = weights0 + taps, weights2 = weights1 + taps,
                    weights3 = weights2 + taps
                let column0 = source + first[x] &* 32, column1 = source + first[x &+ 1] &* 32,
                    column2 = source + first[x &+ 2] &* 32, column3 = source + first[x &+ 3] &* 32
                var offset = 0
                for k in 0..<taps {
                    sum0 += weights0[k] * column0.load(fromByteOffset: offset, as: SIMD8<Float>.self)
                    sum1 += weights1[k] * column1.load(fromByteOffset: offset, as: SIMD8<Float>.self)
                    sum2 += weights2[k] * column2.load(fromByteOffset: offset, as: SIMD8<Float>.self)
                    sum3 += weights3[k] * column3.load(fromByteOffset: offset, as: SIMD8<Float>.self)
                    offset &+= 32
                }
                target.storeBytes(of: sum0, toByteOffset: x &* 32, as: SIMD8<Float>.self)
                target.storeBytes(of: sum1, toByteOffset: x &* 32 &+ 32, as: SIMD8<Float>.self)
                target.storeBytes(of: sum2, toByteOffset: x &* 32 &+ 64, as: SIMD8<Float>.self)
                target.storeBytes(of: sum3, toByteOffset: x &* 32 &+ 96, as: SIMD8<Float>.self)
                x &+= 4
            }
            while x < width {
                var sum = SIMD8<Float>()
                let tapWeights = weights + x &* taps
                var offset = first[x] &* 32
                for k in 0..<taps {
                    sum += tapWeights[k] * source.load(fromByteOffset: offset, as: SIMD8<Float>.self)
                    offset &+= 32
                }
                target.storeBytes(of: sum, toByteOffset: x &* 32, as: SIMD8<Float>.self)
                x &+= 1
            }
        }
    }

    /// `count` float samples rounded to 8 bits: clamped, then rounded by adding 1.5 x 2^23, whose sum's low
    /// mantissa bits are the nearest whole number (a loop the compiler vectorises; Swift's checked conversions
    /// would not be).
    @inline(__always)
    private static func store(_ values: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<UInt8>) {
        for index in 0..<count {
            let clamped = Swift.min(Swift.max(values[index], 0), 255)
            output[index] = UInt8(truncatingIfNeeded: (clamped + 12_582_912).bitPattern)
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
    /// sums, stay a few samples wide.
    public func resampled(region: Rect, extent: Size, to size: Size, subsampling: EncodeOptions.Subsampling,
                          kernel: ResamplingKernel) -> JPEGPlanes {
        var output = JPEGPlanes(size: size, gray: planes.count == 1, subsampling: subsampling)
        let targets = output.planes
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
                        let acrossWeights = ResamplingWeights.shared(
                            kernel: kernel, inputLength: width, outputLength: out.width,
                            scale: across.scale / Double(shrink.across), lag: across.lag / Double(shrink.across))
                        let downWeights = ResamplingWeights.shared(
                            kernel: kernel, inputLength: height, outputLength: out.height,
                            scale: down.scale / Double(shrink.down), lag: down.lag / Double(shrink.down))
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
