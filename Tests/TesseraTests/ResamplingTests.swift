import Foundation
import Testing
@testable import Tessera

/// The resampler against a direct double-precision convolution written here from the kernel's weight function:
/// every kernel, scales up and down, odd sizes, x and y independent, 8 and 16 bits, alpha and linear light.
@Suite struct ResamplingTests {
    /// A deterministic image with smooth areas, hard edges and hash noise, so every kernel lobe matters.
    static func pattern(width: Int, height: Int, format: PixelFormat) -> ImageBuffer {
        var image = ImageBuffer(width: width, height: height, format: format)
        let maximum = format.bitDepth == 16 ? 65535.0 : 255.0
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<format.channelCount {
                    var value = 0.5 + 0.4 * sin(Double(x) / 3.1 + Double(c)) * cos(Double(y) / 4.3)
                    if (x / 5 + y / 7) % 2 == 0 { value = 1 - value }
                    value += Double((x &* 7919 &+ y &* 104_729 &+ c &* 31) % 17) / 100 - 0.08
                    if format.hasAlpha && c == format.channelCount - 1 { value = Double((x * 13 + y * 7) % 11) / 10 }
                    let sample = min(maximum, max(0, (value * maximum).rounded()))
                    let index = (y * width + x) * format.channelCount + c
                    image.bytes.withUnsafeMutableBytes { raw in
                        if format.bitDepth == 8 { raw[index] = UInt8(sample) } else {
                            raw.storeBytes(of: UInt16(sample), toByteOffset: 2 * index, as: UInt16.self)
                        }
                    }
                }
            }
        }
        return image
    }

    /// Normalised weights of the source pixels for output pixel `i`, straight from the definition.
    static func referenceWeights(_ kernel: ResamplingKernel, input: Int, output: Int, i: Int) -> [(Int, Double)] {
        let scale = Double(input) / Double(output)
        let stretch = kernel.stretchesWhenShrinking ? max(1, scale) : 1
        let centre = (Double(i) + 0.5) * scale - 0.5
        var taps: [(Int, Double)] = []
        for source in 0..<input {
            let distance = Double(source) - centre
            guard abs(distance) <= kernel.support * stretch else { continue }
            let weight = kernel.weight(distance / stretch)
            if weight != 0 { taps.append((source, weight)) }
        }
        if taps.isEmpty { taps = [(min(max(Int(centre.rounded()), 0), input - 1), 1)] }
        let total = taps.reduce(0) { $0 + $1.1 }
        return taps.map { ($0.0, $0.1 / total) }
    }

    /// The resampled image by direct 2-D convolution in Double, alpha premultiplied, optionally in linear light.
    static func reference(_ image: ImageBuffer, to size: Size, kernel: ResamplingKernel, linear: Bool = false) -> ImageBuffer {
        let format = image.format, maximum = format.bitDepth == 16 ? 65535.0 : 255.0
        let channels = format.channelCount, colours = format.hasAlpha ? channels - 1 : channels
        func toLinear(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
        func fromLinear(_ v: Double) -> Double { v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055 }
        let columns = (0..<size.width).map { referenceWeights(kernel, input: image.width, output: size.width, i: $0) }
        let rows = (0..<size.height).map { referenceWeights(kernel, input: image.height, output: size.height, i: $0) }
        var out = ImageBuffer(width: size.width, height: size.height, format: format)
        for y in 0..<size.height {
            for x in 0..<size.width {
                var sums = [Double](repeating: 0, count: channels)
                for (sy, wy) in rows[y] {
                    for (sx, wx) in columns[x] {
                        let pixel = image.pixel(x: sx, y: sy).map { Double($0) / maximum }
                        let alpha = format.hasAlpha ? pixel[channels - 1] : 1
                        for c in 0..<colours { sums[c] += wx * wy * (linear ? toLinear(pixel[c]) : pixel[c]) * alpha }
                        if format.hasAlpha { sums[channels - 1] += wx * wy * alpha }
                    }
                }
                let alpha = format.hasAlpha ? min(max(sums[channels - 1], 0), 1) : 1
                for c in 0..<channels {
                    var value = c < colours ? (alpha > 0 ? sums[c] / alpha : 0) : alpha
                    value = min(max(value, 0), 1)
                    if linear && c < colours { value = fromLinear(value) }
                    let sample = (value * maximum).rounded()
                    let index = (y * size.width + x) * channels + c
                    out.bytes.withUnsafeMutableBytes { raw in
                        if format.bitDepth == 8 { raw[index] = UInt8(sample) } else {
                            raw.storeBytes(of: UInt16(sample), toByteOffset: 2 * index, as: UInt16.self)
                        }
                    }
                }
            }
        }
        return out
    }

    static func resample(_ image: ImageBuffer, to size: Size, kernel: ResamplingKernel, linear: Bool = false,
                         stripRows: Int = 7) throws -> ImageBuffer {
        let reader = try ResamplingReader(source: BufferReader(image), size: size,
                                          options: .init(kernel: kernel, linearLight: linear))
        var out = ImageBuffer(width: size.width, height: size.height, format: image.format)
        var strip = reader.makeStrip()
        while try reader.read(into: &strip, maxRows: stripRows) {
            let start = out.offset(ofRow: strip.y)
            out.bytes.replaceSubrange(start..<start + strip.height * out.bytesPerRow,
                                      with: strip.pixels.bytes.prefix(strip.height * out.bytesPerRow))
        }
        return out
    }

    static let sizes: [(Size, Size)] = [
        (Size(width: 41, height: 29), Size(width: 13, height: 11)),   // shrink ~3x, 2.6x
        (Size(width: 37, height: 23), Size(width: 17, height: 41)),   // shrink x, enlarge y
        (Size(width: 13, height: 9), Size(width: 40, height: 31)),    // enlarge ~3x
        (Size(width: 50, height: 48), Size(width: 19, height: 48)),   // x only
        (Size(width: 54, height: 64), Size(width: 54, height: 66)),   // y only, a tile two rows off its size
        (Size(width: 101, height: 7), Size(width: 10, height: 3)),    // shrink 10x
    ]

    @Test(arguments: ResamplingKernel.all.map(\.name))
    func kernelMatchesDirectConvolutionWithinOneLevel(kernelName: String) throws {
        let kernel = try #require(ResamplingKernel(named: kernelName))
        for (input, output) in Self.sizes {
            let image = Self.pattern(width: input.width, height: input.height, format: .rgb8)
            let got = try Self.resample(image, to: output, kernel: kernel)
            let expected = Self.reference(image, to: output, kernel: kernel)
            #expect(TestImages.maxDifference(got, expected) <= 1, "\(kernel) \(input) -> \(output)")
        }
    }

    /// Opaque 8-bit rows whose width is kept are summed in fixed point on their samples (`FixedPointRows`): gray and
    /// RGB, shrunk and stretched, in strips that wrap the ring, within one level of the direct convolution.
    @Test(arguments: [PixelFormat.gray8, .rgb8])
    func keptWidthsMatchDirectConvolutionInFixedPoint(format: PixelFormat) throws {
        for (input, output) in [(Size(width: 54, height: 200), Size(width: 54, height: 37)),
                                (Size(width: 31, height: 256), Size(width: 31, height: 258)),
                                (Size(width: 9, height: 5), Size(width: 9, height: 23))] {
            let image = Self.pattern(width: input.width, height: input.height, format: format)
            for kernel in [ResamplingKernel.lanczos3, .bilinear, .box] {
                let got = try Self.resample(image, to: output, kernel: kernel, stripRows: 5)
                #expect(TestImages.maxDifference(got, Self.reference(image, to: output, kernel: kernel)) <= 1,
                        "\(kernel) \(format) \(input) -> \(output)")
            }
        }
    }

    /// A kernel of the caller's whose weights do not fit 16-bit fixed point is resampled in floats instead, like
    /// any other: no trap, the same pixels as the direct convolution. This one keeps a width as it is (1 at 0, 0 at
    /// whole pixels) but doubles a height with weights 3, 3, -2.5, -2.5.
    @Test func keptWidthsOfAKernelBeyondFixedPointAreResampledInFloats() throws {
        let steep = ResamplingKernel(name: "steep", support: 2) { x in
            switch abs(x) {
            case ..<0.2: 1
            case ..<0.8: 3
            case ..<1.2: 0
            case ..<1.8: -2.5
            default: 0
            }
        }
        #expect(ResamplingWeights(kernel: steep, inputLength: 12, outputLength: 12).isIdentity)
        #expect(ResamplingWeights(kernel: steep, inputLength: 20, outputLength: 40).weights.contains { $0 > 2 })
        let image = Self.pattern(width: 12, height: 20, format: .rgb8)
        let output = Size(width: 12, height: 40)
        let got = try Self.resample(image, to: output, kernel: steep)
        #expect(TestImages.maxDifference(got, Self.reference(image, to: output, kernel: steep)) <= 1)
    }

    /// Lanczos windows' weights come from a table of the kernel, interpolated: they must be the weight function's
    /// own to within the table's bound (`LanczosTable`), at every phase and stretch, the centre and the ends of the
    /// support included.
    @Test(arguments: [ResamplingKernel.lanczos2, .lanczos3])
    func windowWeightsAreTheWeightFunctions(kernel: ResamplingKernel) {
        let steps = [1.0, 1 / 1.0039, 1 / 1.5, 1 / 7.3, 1 / 64.0]
        let firsts = (0..<97).map { -kernel.support - Double($0) / 96 }
        for step in steps {
            let count = Int(2 * kernel.support / step) + 3
            var weights = [Double](repeating: .nan, count: firsts.count * count)
            firsts.withUnsafeBufferPointer { firsts in
                weights.withUnsafeMutableBufferPointer { kernel.weights(from: firsts, step: step, into: $0) }
            }
            for (w, first) in firsts.enumerated() {
                for k in 0..<count {
                    let expected = kernel.weight(first + Double(k) * step)
                    #expect(abs(weights[w * count + k] - expected) < 1.1e-8, "step \(step), window \(w), weight \(k)")
                }
            }
        }
    }

    /// The weights a resampler takes from the shared ones are those made afresh, for every built-in kernel; a
    /// kernel made outside (whose name says nothing of its function) gets its own.
    @Test func sharedWeightsAreTheWeightsMadeAfresh() {
        for kernel in ResamplingKernel.all {
            for (input, output) in [(102, 103), (256, 258), (109, 90), (7, 300)] {
                let shared = ResamplingWeights.shared(kernel: kernel, inputLength: input, outputLength: output)
                let again = ResamplingWeights.shared(kernel: kernel, inputLength: input, outputLength: output)
                let fresh = ResamplingWeights(kernel: kernel, inputLength: input, outputLength: output)
                #expect(shared.taps == fresh.taps && shared.first == fresh.first && shared.weights == fresh.weights)
                #expect(again.weights == fresh.weights, "\(kernel) \(input) -> \(output)")
            }
        }
        let impostor = ResamplingKernel(name: "lanczos3", support: 1) { x in max(0, 1 - abs(x)) }
        let weights = ResamplingWeights.shared(kernel: impostor, inputLength: 10, outputLength: 7)
        #expect(weights.weights == ResamplingWeights(kernel: impostor, inputLength: 10, outputLength: 7).weights)
        #expect(weights.taps != ResamplingWeights.shared(kernel: .lanczos3, inputLength: 10, outputLength: 7).taps)
    }

    /// 8-bit gray and RGB without alpha are stored by their own loop: the same samples as the general one (16-bit
    /// storage, which rounds and clamps the same way at 65535, scaled back), overshoot clamped either side.
    @Test func opaqueEightBitSamplesAreStoredAsTheGeneralPathStoresThem() {
        // Every sample value, and every value halfway between two (whose rounding decides the sample).
        let steps: [Float] = (0...255).flatMap { (sample: Int) -> [Float] in
            let value = Float(sample)
            return [value / 255, (value - 0.5) / 255, (value + 0.5) / 255]
        }
        let values: [Float] = [-0.3, -0.001, 0, 0.0019, 0.002, 0.5, 0.998, 0.999, 1, 1.2] + steps
        let pixels = values.map { SIMD4<Float>($0, 1 - $0, $0 * 0.5, 1) }
        for format in [PixelFormat.gray8, .rgb8] {
            var stored = [UInt8](repeating: 0, count: pixels.count * format.channelCount)
            pixels.withUnsafeBufferPointer { pixels in
                stored.withUnsafeMutableBytes { SampleConversion(format: format, linearLight: false).store(pixels, to: $0.baseAddress!) }
            }
            let expected = pixels.flatMap { pixel in
                (0..<format.channelCount).map { UInt8(Swift.min(Swift.max(Int32(pixel[$0] * 255 + 0.5), 0), 255)) }
            }
            #expect(stored == expected, "\(format)")
        }
    }

    @Test(arguments: [PixelFormat.gray8, .grayAlpha8, .rgba8])
    func otherChannelLayoutsMatchDirectConvolution(format: PixelFormat) throws {
        let image = Self.pattern(width: 33, height: 27, format: format)
        for output in [Size(width: 12, height: 10), Size(width: 50, height: 19)] {
            let got = try Self.resample(image, to: output, kernel: .lanczos3)
            #expect(TestImages.maxDifference(got, Self.reference(image, to: output, kernel: .lanczos3)) <= 1)
        }
    }

    @Test func sixteenBitMatchesDirectConvolution() throws {
        let image = Self.pattern(width: 35, height: 26, format: PixelFormat(.rgba, bitDepth: 16))
        for output in [Size(width: 11, height: 9), Size(width: 52, height: 40)] {
            let got = try Self.resample(image, to: output, kernel: .catmullRom)
            // Float32 sums carry about 24 bits; a few 16-bit levels is 1/20 of an 8-bit level.
            #expect(TestImages.maxDifference(got, Self.reference(image, to: output, kernel: .catmullRom)) <= 4)
        }
    }

    @Test func linearLightMatchesDirectConvolution() throws {
        let image = Self.pattern(width: 31, height: 22, format: .rgb8)
        let output = Size(width: 9, height: 14)
        let got = try Self.resample(image, to: output, kernel: .lanczos3, linear: true)
        #expect(TestImages.maxDifference(got, Self.reference(image, to: output, kernel: .lanczos3, linear: true)) <= 1)
        // Black and white averaged in linear light are sRGB 188, not 128.
        let stripes = ImageBuffer(width: 2, height: 1, format: .gray8, bytes: [0, 255])
        #expect(try Self.resample(stripes, to: Size(width: 1, height: 1), kernel: .box, linear: true).bytes[0] == 188)
    }

    @Test func colourUnderTransparentPixelsDoesNotBleed() throws {
        // Opaque red on the left, fully transparent bright green on the right.
        var image = ImageBuffer(width: 20, height: 6, format: .rgba8)
        for y in 0..<6 {
            for x in 0..<20 {
                let i = (y * 20 + x) * 4
                image.bytes.replaceSubrange(i..<i + 4, with: x < 10 ? [255, 0, 0, 255] : [0, 255, 0, 0])
            }
        }
        for kernel in ResamplingKernel.all {
            let out = try Self.resample(image, to: Size(width: 7, height: 3), kernel: kernel)
            for y in 0..<3 {
                for x in 0..<7 {
                    let pixel = out.pixel(x: x, y: y)
                    if pixel[3] > 0 { #expect(pixel[0] >= 254 && pixel[1] == 0, "\(kernel) at \(x),\(y): \(pixel)") }
                }
            }
        }
    }

    @Test func stripHeightDoesNotChangeTheResult() throws {
        let image = Self.pattern(width: 64, height: 90, format: .rgb8)
        let output = Size(width: 23, height: 31)
        let one = try Self.resample(image, to: output, kernel: .lanczos3, stripRows: 1)
        let many = try Self.resample(image, to: output, kernel: .lanczos3, stripRows: 64)
        #expect(one.bytes == many.bytes)
    }

    /// A source whose pixels sit early (a JPEG 2000 level reduced 4 times holds the image at full-resolution pixels
    /// 0, 4, 8, ...: 1.5 pixels, 0.375 of its own, before its blocks' centres) resampled with that lag: on a ramp,
    /// each output pixel of the 8-times reduction takes the value at the centre of its 8-pixel block.
    @Test func aLaggingSourceIsResampledAtTheBlocksCentres() {
        let level = (0..<64).map { Double(4 * $0) }
        // Far from the ends; Lanczos3's sampled weights keep a ramp to within a few hundredths.
        for (kernel, tolerance) in [(ResamplingKernel.bilinear, 1e-3), (.lanczos3, 0.05)] {
            let weights = ResamplingWeights(kernel: kernel, inputLength: 64, outputLength: 32, lag: 0.375)
            for o in 8..<24 {
                let value = (0..<weights.taps).reduce(0.0) { total, k in
                    total + Double(weights.weights[o * weights.taps + k]) * level[weights.first[o] + k]
                }
                #expect(abs(value - Double(8 * o) - 3.5) < tolerance, "\(kernel) output \(o): \(value)")
            }
        }
        let lagged = ResamplingWeights.shared(kernel: .lanczos3, inputLength: 16, outputLength: 8, lag: 0.375)
        #expect(lagged.weights != ResamplingWeights.shared(kernel: .lanczos3, inputLength: 16, outputLength: 8).weights)
    }

    /// A length kept as it is costs one tap per pixel with an interpolating kernel (its zeros at whole pixels are
    /// dropped), and the resampler loads such rows without a horizontal pass; a smoothing kernel keeps its taps.
    @Test func aLengthKeptIsTheIdentityForInterpolatingKernels() {
        for kernel in [ResamplingKernel.lanczos3, .lanczos2, .catmullRom, .nearest, .bilinear] {
            let weights = ResamplingWeights(kernel: kernel, inputLength: 108, outputLength: 108)
            #expect(weights.taps == 1 && weights.isIdentity, "\(kernel)")
        }
        #expect(!ResamplingWeights(kernel: .mitchell, inputLength: 108, outputLength: 108).isIdentity)
        #expect(!ResamplingWeights(kernel: .lanczos3, inputLength: 108, outputLength: 108, lag: 0.5).isIdentity)
        #expect(!ResamplingWeights(kernel: .lanczos3, inputLength: 108, outputLength: 54).isIdentity)
    }

    /// At a scale given, an output pixel whose centre is past the source's last pixel by the kernel's zeros (a
    /// length kept with one more pixel asked for: a last column repeated) takes that last pixel, whatever rounding
    /// left in the zeros (their sum once made its weights -1 and 2).
    @Test func aWindowOfZerosTakesTheClosestPixel() {
        let weights = ResamplingWeights(kernel: .lanczos3, inputLength: 107, outputLength: 108, scale: 1)
        for i in 106..<108 {
            let taps = (0..<weights.taps).map { weights.weights[i * weights.taps + $0] }
            #expect(taps.filter { $0 != 0 } == [1] && weights.first[i] + taps.firstIndex(of: 1)! == 106, "pixel \(i): \(taps)")
        }
    }

    /// A window whose span misses the source entirely (its centre shifted past the last pixel by more than the
    /// kernel reaches) takes the closest pixel, for every kernel: the span is empty, not an error.
    @Test func aWindowPastTheSourceTakesItsClosestPixel() {
        for kernel in ResamplingKernel.all {
            let weights = ResamplingWeights(kernel: kernel, inputLength: 4, outputLength: 2, lag: 10)
            for i in 0..<2 {
                let taps = (0..<weights.taps).map { weights.weights[i * weights.taps + $0] }
                #expect(taps.filter { $0 != 0 } == [1] && weights.first[i] + taps.firstIndex(of: 1)! == 3,
                        "\(kernel), pixel \(i): \(taps)")
            }
        }
    }

    @Test func weightsSumToOneAndStayInsideTheImage() {
        for kernel in ResamplingKernel.all {
            for (input, output) in [(100, 37), (7, 30), (5, 5), (1, 9), (9, 1)] {
                let weights = ResamplingWeights(kernel: kernel, inputLength: input, outputLength: output)
                for i in 0..<output {
                    #expect(weights.first[i] >= 0 && weights.first[i] + weights.taps <= input)
                    let sum = weights.weights[i * weights.taps..<(i + 1) * weights.taps].reduce(0) { $0 + $1 }
                    #expect(abs(sum - 1) < 1e-5)
                }
            }
        }
    }

    @Test(arguments: [PixelFormat.gray8, .rgb8, .rgba8, PixelFormat(.rgb, bitDepth: 16)])
    func boxShrinkIsTheExactRoundedBlockMean(format: PixelFormat) throws {
        let image = Self.pattern(width: 47, height: 31, format: format)
        for factor in [1, 2, 3, 5, 8, 47] {
            let got = try BoxShrinkReader(source: BufferReader(image), factor: factor).readAll()
            #expect(got.size == Size(width: (47 + factor - 1) / factor, height: (31 + factor - 1) / factor))
            for y in 0..<got.height {
                for x in 0..<got.width {
                    var sums = [Int](repeating: 0, count: format.channelCount), count = 0
                    for sy in y * factor..<min(31, (y + 1) * factor) {
                        for sx in x * factor..<min(47, (x + 1) * factor) {
                            for (c, v) in image.pixel(x: sx, y: sy).enumerated() { sums[c] += v }
                            count += 1
                        }
                    }
                    #expect(got.pixel(x: x, y: y) == sums.map { ($0 + count / 2) / count }, "factor \(factor) at \(x),\(y)")
                }
            }
        }
    }

    @Test func prefetchingFeedsTheResamplerTheSameRows() throws {
        let image = Self.pattern(width: 57, height: 301, format: .rgb8)
        let size = Size(width: 20, height: 111)
        let direct = try ResamplingReader(source: BufferReader(image), size: size).readAll()
        for stripRows in [1, 5, 32, 500] {
            let ahead = PrefetchingReader(source: BufferReader(image), stripRows: stripRows)
            #expect(try ResamplingReader(source: ahead, size: size).readAll().bytes == direct.bytes)
        }
        // A reader dropped halfway stops its thread without reading further.
        var strip = Strip(width: 57, format: .rgb8)
        let partial = PrefetchingReader(source: BufferReader(image), stripRows: 8)
        #expect(try partial.read(into: &strip, maxRows: 3) && strip.height == 3)
    }
}
