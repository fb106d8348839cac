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
    /// `function` each (Lanczos: two sines and cosines per window, not two sines per weight); see `weights(from:)`.
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
    /// `w * weights.count / firsts.count`. The same values as `weight` to within rounding.
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
    public static let lanczos2 = lanczos(lobes: 2)
    /// Lanczos windowed sinc with three lobes: the default for thumbnails, as in libvips and ImageIO.
    public static let lanczos3 = lanczos(lobes: 3)

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

    /// The Lanczos kernel with `lobes` lobes, its windows' weights by rotation: sin(pi x) and sin(pi x / lobes)
    /// at evenly spaced distances follow from the first by the angle-sum identities, so a weight costs no sine
    /// (the weights of a thumbnail's axes cost as much as resampling it). A window's first angles follow from the
    /// previous window's the same way when it has moved by a distance already seen (an axis's windows move by one
    /// of two whole numbers of pixels less the scale): only every `anchorEvery`th window, and a window that moves
    /// by a new distance, takes sines and cosines, so rounding cannot build up along an axis.
    private static func lanczos(lobes: Int) -> ResamplingKernel {
        let a = Double(lobes)
        var kernel = ResamplingKernel(name: "lanczos\(lobes)", support: a) { x in
            if x == 0 { return 1 }
            guard x > -a && x < a else { return 0 }
            let px = Double.pi * x
            return a * sin(px) * sin(px / a) / (px * px)
        }
        kernel.series = { firsts, step, weights in
            let count = firsts.isEmpty ? 0 : weights.count / firsts.count
            /// The sines and cosines of pi x and of pi x / a.
            func angles(_ x: Double) -> (fast: SineCosine, slow: SineCosine) {
                (SineCosine(Double.pi * x), SineCosine(Double.pi * x / a))
            }
            let turn = angles(step)
            // The moves from one window's first distance to the next seen so far, with their angles.
            var moves: [(distance: Double, angles: (fast: SineCosine, slow: SineCosine))] = []
            var previous: (first: Double, angles: (fast: SineCosine, slow: SineCosine))?
            for (w, first) in firsts.enumerated() {
                let moved = previous.map { first - $0.first }
                let seen = moved.flatMap { moved in moves.first { abs($0.distance - moved) < 1e-12 } }
                var (angle, slowAngle): (SineCosine, SineCosine)
                if w % anchorEvery != 0, let previous, let seen {
                    (angle, slowAngle) = (previous.angles.fast.rotated(by: seen.angles.fast),
                                          previous.angles.slow.rotated(by: seen.angles.slow))
                } else {
                    (angle, slowAngle) = angles(first)
                    if let moved, seen == nil, moves.count < 4 { moves.append((moved, angles(moved))) }
                }
                previous = (first, (angle, slowAngle))
                for k in 0..<count {
                    let x = first + Double(k) * step, px = Double.pi * x
                    // Near the centre the rotated sines' rounding is larger than they are: the weight there is 1.
                    weights[w * count + k] = abs(x) < 1e-6 ? 1
                        : x <= -a || x >= a ? 0 : a * angle.sine * slowAngle.sine / (px * px)
                    angle = angle.rotated(by: turn.fast)
                    slowAngle = slowAngle.rotated(by: turn.slow)
                }
            }
        }
        return kernel.builtIn
    }

    /// How many Lanczos windows at most follow one whose first angles were taken afresh (`lanczos(lobes:)`).
    private static let anchorEvery = 16
}

/// The sine and cosine of an angle, turned by another's by the angle-sum identities.
private struct SineCosine {
    var sine: Double, cosine: Double

    init(_ angle: Double) {
        sine = sin(angle)
        cosine = cos(angle)
    }

    private init(sine: Double, cosine: Double) {
        self.sine = sine
        self.cosine = cosine
    }

    /// This angle plus `other`'s.
    @inline(__always)
    func rotated(by other: SineCosine) -> SineCosine {
        SineCosine(sine: sine * other.cosine + cosine * other.sine, cosine: cosine * other.cosine - sine * other.sine)
    }
}
