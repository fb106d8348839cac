/// One axis of a plane's resampling as the loops read it: for output sample `i`, its first source sample
/// `first[i]` and `taps` weights from `weights + i * taps` (`ResamplingWeights`' arrays); `copied` when every output
/// sample takes one source sample as it is, `start + min(i, count - 1)`.
public struct AxisTaps {
    public let first: UnsafePointer<Int>
    public let weights: UnsafePointer<Float>
    public let taps: Int
    public let copied: (start: Int, count: Int)?

    /// An axis of `taps` weights per output sample (see the type).
    @inlinable
    public init(first: UnsafePointer<Int>, weights: UnsafePointer<Float>, taps: Int, copied: (start: Int, count: Int)?) {
        self.first = first
        self.weights = weights
        self.taps = taps
        self.copied = copied
    }
}

/// Fills `width` x `height` 8-bit samples at `target` (rows `targetStride` apart) from the window of `columns`
/// samples across at `source` (rows `sourceStride` apart), in floats: down the columns first, eight columns at a
/// time; then across, eight rows at a time (the rows turned so that each column's eight samples lie together, so
/// every tap is one 8-lane multiply and add for eight output samples). An axis that only copies (`AxisTaps.copied`)
/// copies. Inlinable, so that a module built for a newer CPU (`ResamplingLoopsAVX2`) compiles these loops for it:
/// its results are the same to the bit (each product and sum rounded as here, none fused).
@inlinable @inline(__always)
public func resamplePlane(_ source: UnsafePointer<UInt8>, sourceStride: Int, columns: Int, across: AxisTaps,
                          down: AxisTaps, into target: UnsafeMutablePointer<UInt8>, targetStride: Int, width: Int,
                          height: Int) {
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
    var y = 0
    while y < height {
        let block = min(8, height - y)
        for r in 0..<block {
            let row: UnsafePointer<Float>
            if let copied = down.copied {
                row = UnsafePointer(floats + (copied.start + min(y + r, copied.count - 1) - firstRow) &* floatWidth)
            } else {
                sumRows(floats + (down.first[y + r] - firstRow) &* floatWidth, stride: floatWidth,
                        weights: down.weights + (y + r) &* down.taps, taps: down.taps, into: line, width: floatWidth)
                row = UnsafePointer(line)
            }
            if let copied = across.copied {
                let out = target + (y + r) &* targetStride
                let kept = min(copied.count, width)
                storeRounded(row + copied.start, count: kept, into: out)
                (out + kept).initialize(repeating: out[kept - 1], count: width - kept)
            } else {
                for column in 0..<columns { turned[column &* 8 &+ r] = row[column] }
            }
        }
        if across.copied == nil {
            sumColumns(turned, first: across.first, weights: across.weights, taps: across.taps, into: turnedOutput,
                       width: width)
            for r in 0..<block {
                for x in 0..<width { result[x] = turnedOutput[x &* 8 &+ r] }
                storeRounded(result, count: width, into: target + (y + r) &* targetStride)
            }
        }
        y += block
    }
}

/// `line[0..<width]` = the sum over `k` of `weights[k]` x row `k` below `top` (rows `stride` floats apart).
/// Four 8-float chunks at a time, each its own sum: one sum's chain of adds would wait on each add's latency.
@inlinable @inline(__always)
func sumRows(_ top: UnsafeMutablePointer<Float>, stride: Int, weights: UnsafePointer<Float>, taps: Int,
             into line: UnsafeMutablePointer<Float>, width: Int) {
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
@inlinable @inline(__always)
func sumColumns(_ turned: UnsafeMutablePointer<Float>, first: UnsafePointer<Int>, weights: UnsafePointer<Float>,
                taps: Int, into output: UnsafeMutablePointer<Float>, width: Int) {
    let source = UnsafeRawPointer(turned), target = UnsafeMutableRawPointer(output)
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

/// `count` float samples rounded to 8 bits: clamped, then rounded by adding 1.5 x 2^23, whose sum's low mantissa
/// bits are the nearest whole number (a loop the compiler vectorises; Swift's checked conversions would not be).
@inlinable @inline(__always)
func storeRounded(_ values: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<UInt8>) {
    for index in 0..<count {
        let clamped = min(max(values[index], 0), 255)
        output[index] = UInt8(truncatingIfNeeded: (clamped + 12_582_912).bitPattern)
    }
}
