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
    public static let lanczos2 = ResamplingKernel(name: "lanczos2", support: 2) { x in lanczos(x, lobes: 2) }.builtIn
    /// Lanczos windowed sinc with three lobes: the default for thumbnails, as in libvips and ImageIO.
    public static let lanczos3 = ResamplingKernel(name: "lanczos3", support: 3) { x in lanczos(x, lobes: 3) }.builtIn

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

    private static func lanczos(_ x: Double, lobes: Double) -> Double {
        if x == 0 { return 1 }
        guard x > -lobes && x < lobes else { return 0 }
        let px = Double.pi * x
        return lobes * sin(px) * sin(px / lobes) / (px * px)
    }
}
