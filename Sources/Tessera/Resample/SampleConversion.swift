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
        let channels = format.channelCount, hasAlpha = format.hasAlpha, colours = hasAlpha ? channels - 1 : channels
        let zero = SIMD4<Float>(repeating: 0), one = SIMD4<Float>(repeating: 1)
        for x in 0..<pixels.count {
            var pixel = pixels[x]
            let alpha = min(max(pixel[3], 0), 1)
            if hasAlpha { pixel = alpha > 0 ? pixel / SIMD4(repeating: alpha) : zero }
            pixel = pixel.clamped(lowerBound: zero, upperBound: one)
            let out = target + x * channels
            if let encode {
                for c in 0..<colours { out[c] = Sample(encode[Int(pixel[c] * 65535 + 0.5)]) }
            } else {
                for c in 0..<colours { out[c] = Sample(pixel[c] * maximum + 0.5) }
            }
            if hasAlpha { out[colours] = Sample(alpha * maximum + 0.5) }
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
