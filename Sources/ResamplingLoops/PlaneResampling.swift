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
/// samples across at `source` (rows `sourceStride` apart), in floats: down the columns first, eight output rows at
/// a time; then across those eight rows at once, turned (`turn`) so that each column's eight samples lie
/// together and every tap is one 8-lane multiply and add for eight output samples; then turned back. An axis that
/// only copies (`AxisTaps.copied`) copies. Inlinable, so that a module built for a newer CPU
/// (`ResamplingLoopsAVX2`) compiles these loops for it: its results are the same to the bit (each product and sum
/// rounded as here, none fused).
@inlinable @inline(__always)
public func resamplePlane(_ source: UnsafePointer<UInt8>, sourceStride: Int, columns: Int, across: AxisTaps,
                          down: AxisTaps, into target: UnsafeMutablePointer<UInt8>, targetStride: Int, width: Int,
                          height: Int) {
    guard width > 0, height > 0, columns > 0 else { return }
    // Float rows of whole 8-lane chunks: the source rows used; eight rows of the vertical pass, and the same
    // turned (8 floats per column); eight output rows across, turned, and turned back before rounding.
    let floatWidth = (columns + 7) / 8 * 8, outputWidth = (width + 7) / 8 * 8
    let firstRow = down.first[0], lastRow = down.first[height - 1] + down.taps
    let sourceFloats = (lastRow - firstRow) * floatWidth
    let floatCount = sourceFloats + 16 * floatWidth + 16 * outputWidth
    let floats = UnsafeMutableRawPointer.allocate(byteCount: floatCount * 4, alignment: 32)
        .bindMemory(to: Float.self, capacity: floatCount)
    defer { floats.deallocate() }
    let lines = floats + sourceFloats, turned = lines + 8 * floatWidth
    let turnedOutput = turned + 8 * floatWidth, results = turnedOutput + 8 * outputWidth
    for row in firstRow..<lastRow {
        let from = source + row &* sourceStride, to = floats + (row - firstRow) &* floatWidth
        // The row's last chunk zeroed in one store, then the samples over its start: a narrow window's row (a
        // sliver's) cost as much again in a call to zero its few floats past the samples.
        UnsafeMutableRawPointer(to + floatWidth - 8).storeBytes(of: SIMD8<Float>(), as: SIMD8<Float>.self)
        for column in 0..<columns { to[column] = Float(from[column]) }
    }
    // The columns past the last output's, turned back with the rest and never stored.
    (turnedOutput + 8 * width).initialize(repeating: 0, count: 8 * (outputWidth - width))
    withUnsafeTemporaryAllocation(of: UnsafePointer<Float>.self, capacity: 8) { rows in
        var y = 0
        while y < height {
            let block = min(8, height - y)
            for r in 0..<block {
                if let copied = down.copied {
                    let source = copied.start + min(y + r, copied.count - 1) - firstRow
                    rows[r] = UnsafePointer(floats + source &* floatWidth)
                } else {
                    let line = lines + r &* floatWidth
                    sumRows(floats + (down.first[y + r] - firstRow) &* floatWidth, stride: floatWidth,
                            weights: down.weights + (y + r) &* down.taps, taps: down.taps, into: line,
                            width: floatWidth)
                    rows[r] = UnsafePointer(line)
                }
                if let copied = across.copied {
                    let out = target + (y + r) &* targetStride
                    let kept = min(copied.count, width)
                    storeRounded(rows[r] + copied.start, count: kept, into: out)
                    (out + kept).initialize(repeating: out[kept - 1], count: width - kept)
                }
            }
            if across.copied == nil {
                // Lanes past the block's rows repeat its last; their sums are not stored.
                for r in block..<8 { rows[r] = rows[block - 1] }
                for chunk in Swift.stride(from: 0, to: floatWidth, by: 8) {
                    turn(rows.baseAddress!, offset: chunk, into: turned + chunk &* 8)
                }
                sumColumns(turned, first: across.first, weights: across.weights, taps: across.taps,
                           into: turnedOutput, width: width)
                for chunk in Swift.stride(from: 0, to: outputWidth, by: 8) {
                    turnBack(turnedOutput + chunk &* 8, into: results + chunk, stride: outputWidth)
                }
                for r in 0..<block {
                    storeRounded(results + r &* outputWidth, count: width, into: target + (y + r) &* targetStride)
                }
            }
            y += block
        }
    }
}

/// Eight rows of 8 floats.
@usableFromInline
typealias Block8x8 = (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>,
                      SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)

/// `block` turned: row r's lane c to row c's lane r. Three rounds that split each pair of rows into their even and
/// their odd lanes: each is a perfect unshuffle of the 64 floats (their index's bits rotated right by one), and
/// three rotate a row's index into a column's. Shuffles only: no float is loaded or stored on its own.
@inlinable @inline(__always)
func transposed(_ block: Block8x8) -> Block8x8 {
    @inline(__always)
    func split(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> (even: SIMD8<Float>, odd: SIMD8<Float>) {
        let pair = SIMD16(lowHalf: a, highHalf: b)
        return (pair.evenHalf, pair.oddHalf)
    }
    var m = block
    for _ in 0..<3 {
        let (n0, n4) = split(m.0, m.1), (n1, n5) = split(m.2, m.3)
        let (n2, n6) = split(m.4, m.5), (n3, n7) = split(m.6, m.7)
        m = (n0, n1, n2, n3, n4, n5, n6, n7)
    }
    return m
}

/// The 8 floats from `offset` in each of the eight rows at `rows` (`offset` a multiple of 8, the rows 32-byte
/// aligned), turned (`transposed`) into the 64 floats at `target`: column c's eight samples at `8 * c`.
@inlinable @inline(__always)
func turn(_ rows: UnsafePointer<UnsafePointer<Float>>, offset: Int, into target: UnsafeMutablePointer<Float>) {
    @inline(__always)
    func load(_ r: Int) -> SIMD8<Float> { UnsafeRawPointer(rows[r] + offset).load(as: SIMD8<Float>.self) }
    store(transposed((load(0), load(1), load(2), load(3), load(4), load(5), load(6), load(7))),
          into: target, stride: 8)
}

/// The 64 floats at `source` (column c's eight samples at `8 * c`, 32-byte aligned) turned back into eight rows of
/// 8 at `target`, rows `stride` floats apart.
@inlinable @inline(__always)
func turnBack(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>, stride: Int) {
    let raw = UnsafeRawPointer(source)
    @inline(__always)
    func load(_ c: Int) -> SIMD8<Float> { raw.load(fromByteOffset: c &* 32, as: SIMD8<Float>.self) }
    store(transposed((load(0), load(1), load(2), load(3), load(4), load(5), load(6), load(7))),
          into: target, stride: stride)
}

/// Stores `block`'s rows at `target`, `stride` floats apart (32-byte aligned).
@inlinable @inline(__always)
func store(_ block: Block8x8, into target: UnsafeMutablePointer<Float>, stride: Int) {
    let raw = UnsafeMutableRawPointer(target), step = stride &* 4
    raw.storeBytes(of: block.0, as: SIMD8<Float>.self)
    raw.storeBytes(of: block.1, toByteOffset: step, as: SIMD8<Float>.self)
    raw.storeBytes(of: block.2, toByteOffset: 2 &* step, as: SIMD8<Float>.self)
    raw.storeBytes(of: block.3, toByteOffset: 3 &* step, as: SIMD8<Float>.self)
    raw.storeBytes(of: block.4, toByteOffset: 4 &* step, as: SIMD8<Float>.self)
    raw.storeBytes(of: block.5, toByteOffset: 5 &* step, as: SIMD8<Float>.self)
    raw.storeBytes(of: block.6, toByteOffset: 6 &* step, as: SIMD8<Float>.self)
    raw.storeBytes(of: block.7, toByteOffset: 7 &* step, as: SIMD8<Float>.self)
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
