import Foundation

/// A separable resampling filter: a weight function of the distance in source pixels, non-zero within
/// `support` pixels of the centre. When shrinking, the kernel is stretched by the scale (its support and its
/// argument), so every source pixel contributes, as libvips and Pillow do.
public struct ResamplingKernel: Sendable, CustomStringConvertible {
    /// The name the CLI and error messages use (`lanczos3`).
    public let name: String
    /// Half-width of the kernel in source pixels at scale 1.
    public let support: Double
    /// Whether shrinking stretches the kernel; false for nearest neighbour, which always picks one pixel.
    public let stretchesWhenShrinking: Bool
    /// Whether this is one of the kernels below (`all`), which its name alone tells apart: what lets resampling
    /// weights be kept by name (`ResamplingWeights.shared`).
    private(set) var isBuiltIn = false
    private let function: @Sendable (Double) -> Double
    /// The weights of windows of evenly spaced distances, when the kernel has a faster way than one call of
    /// `function` each (Lanczos: a table, not two sines per weight); see `weights(from:)`.
    private var series: (@Sendable (_ firsts: UnsafeBufferPointer<Double>, _ step: Double,
                                    _ into: UnsafeMutableBufferPointer<Double>) -> Void)?

    /// A kernel from its half-width in pixels and its weight function of the distance `x` (pixels).
    public init(name: String, support: Double, stretchesWhenShrinking: Bool = true,
                weight: @escaping @Sendable (_ x: Double) -> Double) {
        self.name = name
        self.support = support
        self.stretchesWhenShrinking = stretchesWhenShrinking
        self.function = weight
    }

    /// The same kernel marked as one of `all`.
    private var builtIn: ResamplingKernel {
        var kernel = self
        kernel.isBuiltIn = true
        return kernel
    }

    /// The weight at distance `x` (pixels, at scale 1) from the centre; need not be normalised.
    public func weight(_ x: Double) -> Double { function(x) }

    /// The weights of windows of evenly spaced distances (a resampling axis's, whose source pixels are one apart):
    /// window `w`'s at distances `firsts[w]`, `firsts[w] + step`, ... (pixels, at scale 1) fill `weights` from
    /// `w * weights.count / firsts.count`. The same values as `weight`, to within 1.1e-8 for a tabulated kernel
    /// (`LanczosTable`).
    public func weights(from firsts: UnsafeBufferPointer<Double>, step: Double, into weights: UnsafeMutableBufferPointer<Double>) {
        if let series { return series(firsts, step, weights) }
        let count = firsts.isEmpty ? 0 : weights.count / firsts.count
        for (w, first) in firsts.enumerated() {
            for k in 0..<count { weights[w * count + k] = function(first + Double(k) * step) }
        }
    }

    public var description: String { name }

    /// The nearest source pixel, never averaged.
    public static let nearest = ResamplingKernel(name: "nearest", support: 0.5, stretchesWhenShrinking: false) { x in
        x >= -0.5 && x < 0.5 ? 1 : 0
    }.builtIn
    /// Area average when shrinking (each output pixel the mean of the source pixels it covers).
    public static let box = ResamplingKernel(name: "box", support: 0.5) { x in x >= -0.5 && x < 0.5 ? 1 : 0 }.builtIn
    /// Linear interpolation (a triangle).
    public static let bilinear = ResamplingKernel(name: "bilinear", support: 1) { x in max(0, 1 - abs(x)) }.builtIn
    /// Catmull-Rom cubic (Mitchell-Netravali B = 0, C = 1/2): sharp, Pillow's and libvips' "bicubic".
    public static let catmullRom = ResamplingKernel(name: "catmullrom", support: 2) { x in cubic(x, b: 0, c: 0.5) }.builtIn
    /// Mitchell-Netravali cubic with B = C = 1/3: softer, less ringing.
    public static let mitchell = ResamplingKernel(name: "mitchell", support: 2) { x in cubic(x, b: 1.0 / 3, c: 1.0 / 3) }.builtIn
    /// Lanczos windowed sinc with two lobes.
    public static let lanczos2 = lanczos(lobes: 2) { LanczosTable.two }
    /// Lanczos windowed sinc with three lobes: the default for thumbnails, as in libvips and ImageIO.
    public static let lanczos3 = lanczos(lobes: 3) { LanczosTable.three }

    /// Every built-in kernel, in order of cost.
    public static let all: [ResamplingKernel] = [.nearest, .box, .bilinear, .catmullRom, .mitchell, .lanczos2, .lanczos3]

    /// The built-in kernel called `name` (case-insensitive; `bicubic` means Catmull-Rom), or nil.
    public init?(named name: String) {
        let key = name.lowercased() == "bicubic" ? "catmullrom" : name.lowercased()
        guard let kernel = Self.all.first(where: { $0.name == key }) else { return nil }
        self = kernel
    }

    private static func cubic(_ x: Double, b: Double, c: Double) -> Double {
        let x = abs(x)
        if x < 1 {
            return ((12 - 9 * b - 6 * c) * x * x * x + (-18 + 12 * b + 6 * c) * x * x + (6 - 2 * b)) / 6
        }
        if x < 2 {
            return ((-b - 6 * c) * x * x * x + (6 * b + 30 * c) * x * x + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6
        }
        return 0
    }

    /// The Lanczos kernel with `lobes` lobes (`table` its values, made on first use), its windows' weights from
    /// the table (`LanczosTable`): a new size's weights cost as much as resampling a tile when each takes two sines.
    private static func lanczos(lobes: Int, table: @escaping @Sendable () -> LanczosTable) -> ResamplingKernel {
        let a = Double(lobes)
        var kernel = ResamplingKernel(name: "lanczos\(lobes)", support: a) { x in
            LanczosTable.exact(x, lobes: a)
        }
        kernel.series = { firsts, step, weights in table().fill(from: firsts, step: step, into: weights) }
        return kernel.builtIn
    }
}

/// The Lanczos kernel as a cubic on each 1/`resolution` of a pixel from 0 to its support, the Hermite cubic of the
/// kernel's values and slopes at the interval's ends, so that a weight is one interval's four coefficients and three
/// multiply-adds rather than two sines. The table (4 KiB for two lobes, 6 KiB for three) stays in the L1 cache:
/// values interpolated linearly needed 96 KiB to be about as exact, which a server idle for a moment no longer held,
/// and a new thumbnail size's weights waited on its loads. Its error is at most h^4 / 384 x |f''''| <= 1.1e-8
/// (h = 1 / 64; |f''''| <= 67 for two lobes and 45 for three, from |sinc^(k)| <= pi^k / (k + 1)), below a Float
/// weight's own rounding.
struct LanczosTable: Sendable {
    /// Intervals per pixel of distance.
    static let resolution = 64
    /// The kernels' tables, each made the first time its weights are asked for.
    static let two = LanczosTable(lobes: 2), three = LanczosTable(lobes: 3)

    /// Interval `i`'s cubic in `t`, the fraction of the interval from its start `i / resolution`:
    /// `c[0] + c[1] t + c[2] t^2 + c[3] t^3`, for `i` in 0..<lobes x resolution.
    private let coefficients: [SIMD4<Double>]
    private let lobes: Double

    private init(lobes: Int) {
        let a = Double(lobes), h = 1 / Double(Self.resolution)
        self.lobes = a
        coefficients = (0..<lobes * Self.resolution).map { i in
            let start = Double(i) * h
            let f0 = Self.exact(start, lobes: a), f1 = Self.exact(start + h, lobes: a)
            let m0 = Self.slope(start, lobes: a) * h, m1 = Self.slope(start + h, lobes: a) * h
            return SIMD4(f0, m0, 3 * (f1 - f0) - 2 * m0 - m1, 2 * (f0 - f1) + m0 + m1)
        }
    }

    /// The Lanczos kernel with `lobes` lobes at distance `x` (pixels), by its definition.
    static func exact(_ x: Double, lobes a: Double) -> Double {
        if x == 0 { return 1 }
        guard x > -a && x < a else { return 0 }
        let px = Double.pi * x
        return a * sin(px) * sin(px / a) / (px * px)
    }

    /// The kernel's slope at distance `x` (pixels, at least 0): 0 at the centre and from the support on.
    static func slope(_ x: Double, lobes a: Double) -> Double {
        guard x > 0 && x < a else { return 0 }
        let px = Double.pi * x, s1 = sin(px), s2 = sin(px / a)
        return Double.pi * (a * cos(px) * s2 + s1 * cos(px / a) - 2 * a * s1 * s2 / px) / (px * px)
    }

    /// `ResamplingKernel.weights(from:step:into:)` from the table: window `w`'s weights at distances `firsts[w]`,
    /// `firsts[w] + step`, ... from `w * weights.count / firsts.count`.
    func fill(from firsts: UnsafeBufferPointer<Double>, step: Double, into weights: UnsafeMutableBufferPointer<Double>) {
        let count = firsts.isEmpty ? 0 : weights.count / firsts.count
        let perPixel = Double(Self.resolution), end = lobes * perPixel
        coefficients.withUnsafeBufferPointer { table in
            for (w, first) in firsts.enumerated() {
                let window = weights.baseAddress! + w &* count
                for k in 0..<count {
                    let position = abs(first + Double(k) * step) * perPixel
                    guard position < end else {
                        window[k] = 0
                        continue
                    }
                    let index = Int(position), t = position - Double(index), c = table[index]
                    window[k] = c[0] + t * (c[1] + t * (c[2] + t * c[3]))
                }
            }
        }
    }
}
