import Foundation

/// Converts rows between stored samples (8- or 16-bit, 1-4 channels) and the resampler's working pixels:
/// four Float32 lanes in 0...1, colour in lanes 0-2 (gray in lane 0), alpha in lane 3 (1 when opaque), colour
/// premultiplied by alpha and optionally in linear light. Both directions go through lookup tables.
struct SampleConversion: Sendable {
    let format: PixelFormat
    /// Stored colour sample -> working value (linear or not).
    private let decode: [Float]
    /// Linear value quantised to 16 bits -> stored sample at the output depth; nil when not in linear light.
    private let encode: [UInt16]?

    init(format: PixelFormat, linearLight: Bool) {
        self.format = format
        let sixteen = format.bitDepth == 16
        switch (sixteen, linearLight) {
        case (false, false): decode = Tables.decode8
        case (false, true): decode = Tables.decodeLinear8
        case (true, false): decode = Tables.decode16
        case (true, true): decode = Tables.decodeLinear16
        }
        encode = linearLight ? (sixteen ? Tables.encodeLinear16 : Tables.encodeLinear8) : nil
    }

    /// Loads `output.count` pixels from stored samples at `source`.
    func load(_ source: UnsafeRawPointer, into output: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        decode.withUnsafeBufferPointer { table in
            if format.bitDepth == 8 {
                Self.load(source.assumingMemoryBound(to: UInt8.self), channels: format.channels, table: table, into: output)
            } else {
                Self.load(source.assumingMemoryBound(to: UInt16.self), channels: format.channels, table: table, into: output)
            }
        }
    }

    /// Stores working pixels as samples at `target`, un-premultiplied, clamped and rounded.
    func store(_ pixels: UnsafeBufferPointer<SIMD4<Float>>, to target: UnsafeMutableRawPointer) {
        if format.bitDepth == 8 {
            store(pixels, to: target.assumingMemoryBound(to: UInt8.self), maximum: 255)
        } else {
            store(pixels, to: target.assumingMemoryBound(to: UInt16.self), maximum: 65535)
        }
    }

    private static func load<Sample: FixedWidthInteger>(_ source: UnsafePointer<Sample>, channels: PixelFormat.Channels,
                                                        table: UnsafeBufferPointer<Float>,
                                                        into output: UnsafeMutableBufferPointer<SIMD4<Float>>) {
        let alphaScale = 1 / Float(Sample.max)
        switch channels {
        case .gray:
            for x in 0..<output.count { output[x] = SIMD4(table[Int(source[x])], 0, 0, 1) }
        case .grayAlpha:
            for x in 0..<output.count {
                let alpha = Float(source[2 * x + 1]) * alphaScale
                output[x] = SIMD4(table[Int(source[2 * x])] * alpha, 0, 0, alpha)
            }
        case .rgb:
            for x in 0..<output.count {
                let p = source + 3 * x
                output[x] = SIMD4(table[Int(p[0])], table[Int(p[1])], table[Int(p[2])], 1)
            }
        case .rgba:
            for x in 0..<output.count {
                let p = source + 4 * x
                let alpha = Float(p[3]) * alphaScale
                output[x] = SIMD4(table[Int(p[0])] * alpha, table[Int(p[1])] * alpha, table[Int(p[2])] * alpha, alpha)
            }
        }
    }

    private func store<Sample: FixedWidthInteger>(_ pixels: UnsafeBufferPointer<SIMD4<Float>>,
                                                  to target: UnsafeMutablePointer<Sample>, maximum: Float) {
        let hasAlpha = format.hasAlpha
        if Sample.self == UInt8.self, encode == nil, !hasAlpha {
            return Self.storeOpaque8(pixels, to: UnsafeMutableRawPointer(target).assumingMemoryBound(to: UInt8.self),
                                     channels: format.channelCount)
        }
        let zero = SIMD4<Float>(repeating: 0)
        // Without a table, samples are `value * maximum` rounded; with one, colour is looked up by its 16-bit
        // linear value and alpha still scaled (lane 3 is alpha, so the table never sees it).
        let scale = SIMD4<Float>(repeating: encode == nil ? maximum : 65535), alphaScale = maximum
        let top = Int32(scale[0])
        encode.withUnsafeBufferPointerIfPresent { table in
            for x in 0..<pixels.count {
                var pixel = pixels[x]
                let alpha = min(max(pixel[3], 0), 1)
                if hasAlpha { pixel = alpha > 0 ? pixel / SIMD4(repeating: alpha) : zero }
                // Scalar conversions and clamps: SIMD4<Int32>(_:rounding:) and SIMD clamped(lowerBound:upperBound:)
                // are generic per-lane calls, many times slower. Lanczos overshoot is small, so Int32 cannot overflow.
                let scaled = pixel * scale + 0.5
                var quantised = SIMD4<Int32>(Int32(scaled[0]), Int32(scaled[1]), Int32(scaled[2]),
                                             Int32(alpha * alphaScale + 0.5))
                quantised = SIMD4(min(max(quantised[0], 0), top), min(max(quantised[1], 0), top),
                                  min(max(quantised[2], 0), top), quantised[3])
                if let table {
                    quantised = SIMD4(Int32(table[Int(quantised[0])]), Int32(table[Int(quantised[1])]),
                                      Int32(table[Int(quantised[2])]), quantised[3])
                }
                Self.put(quantised, channels: format.channels, at: target + x * format.channelCount)
            }
        }
    }

    /// The common case, 8-bit gray or RGB without alpha or tables (every render a server makes of a JPEG): the
    /// same samples as the general path (`value * 255` rounded, clamped). Every lane of a run of pixels is
    /// converted by one flat loop the compiler vectorises, then the wanted lanes are packed: converting pixel by
    /// pixel cost more than the resampling itself on small renders. A clamped value's floor comes from its float
    /// bits (`flooredFromBits`).
    private static func storeOpaque8(_ pixels: UnsafeBufferPointer<SIMD4<Float>>, to out: UnsafeMutablePointer<UInt8>,
                                     channels: Int) {
        guard let base = pixels.baseAddress, !pixels.isEmpty else { return }
        let run = 64
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4 * run) { lanes in
            let lane = lanes.baseAddress!
            UnsafeRawPointer(base).withMemoryRebound(to: Float.self, capacity: 4 * pixels.count) { values in
                for start in stride(from: 0, to: pixels.count, by: run) {
                    let count = min(run, pixels.count - start), first = values + 4 * start
                    for i in 0..<4 * count {
                        let clamped = Swift.min(Swift.max(first[i] * 255 + 0.5, 0), 255)
                        lane[i] = UInt8(truncatingIfNeeded: clamped.flooredFromBits)
                    }
                    let target = out + channels * start
                    if channels == 1 {
                        for x in 0..<count { target[x] = lane[4 * x] }
                        continue
                    }
                    // Each pixel's four lanes are stored whole, the fourth overwritten by the next pixel's first;
                    // the row's last pixel is stored by its three bytes, so nothing is written past the row.
                    let whole = start + count == pixels.count ? count - 1 : count
                    for x in 0..<whole {
                        UnsafeMutableRawPointer(target + 3 * x).storeBytes(
                            of: UnsafeRawPointer(lane + 4 * x).loadUnaligned(as: UInt32.self), as: UInt32.self)
                    }
                    for x in whole..<count {
                        target[3 * x] = lane[4 * x]; target[3 * x + 1] = lane[4 * x + 1]; target[3 * x + 2] = lane[4 * x + 2]
                    }
                }
            }
        }
    }

    /// Writes lanes 0-2 (colour) and 3 (alpha) to the stored channels.
    @inline(__always)
    private static func put<Sample: FixedWidthInteger>(_ value: SIMD4<Int32>, channels: PixelFormat.Channels,
                                                       at out: UnsafeMutablePointer<Sample>) {
        switch channels {
        case .gray:
            out[0] = Sample(truncatingIfNeeded: value[0])
        case .grayAlpha:
            out[0] = Sample(truncatingIfNeeded: value[0]); out[1] = Sample(truncatingIfNeeded: value[3])
        case .rgb:
            out[0] = Sample(truncatingIfNeeded: value[0]); out[1] = Sample(truncatingIfNeeded: value[1])
            out[2] = Sample(truncatingIfNeeded: value[2])
        case .rgba:
            out[0] = Sample(truncatingIfNeeded: value[0]); out[1] = Sample(truncatingIfNeeded: value[1])
            out[2] = Sample(truncatingIfNeeded: value[2]); out[3] = Sample(truncatingIfNeeded: value[3])
        }
    }

    /// The tables, built once on first use and shared by every resampler.
    private enum Tables {
        static let decode8 = (0...255).map { Float($0) / 255 }
        static let decodeLinear8 = (0...255).map { Float(toLinear(Double($0) / 255)) }
        static let decode16 = (0...65535).map { Float($0) / 65535 }
        static let decodeLinear16 = (0...65535).map { Float(toLinear(Double($0) / 65535)) }
        static let encodeLinear8 = (0...65535).map { UInt16((fromLinear(Double($0) / 65535) * 255).rounded()) }
        static let encodeLinear16 = (0...65535).map { UInt16((fromLinear(Double($0) / 65535) * 65535).rounded()) }

        /// The sRGB transfer function (IEC 61966-2-1), encoded value to linear light.
        static func toLinear(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
        static func fromLinear(_ v: Double) -> Double { v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055 }
    }
}

extension Optional where Wrapped == [UInt16] {
    /// Runs `body` with the array's storage, or with nil when there is no array.
    fileprivate func withUnsafeBufferPointerIfPresent<Result>(_ body: (UnsafeBufferPointer<UInt16>?) -> Result) -> Result {
        guard let self else { return body(nil) }
        return self.withUnsafeBufferPointer { body($0) }
    }
}

extension Float {
    /// This value (0 to 2^23) rounded down, from its bits rather than a call: added to 2^23 a Float keeps only whole
    /// units, rounded to the nearest, in the low bits of its pattern; one less where that rounded up. No call and no
    /// branch, so loops of it vectorise.
    @inline(__always)
    var flooredFromBits: UInt32 {
        let bias: Float = 8_388_608, biased = self + bias
        return (biased - bias > self ? biased.bitPattern &- 1 : biased.bitPattern) &- bias.bitPattern
    }
}
