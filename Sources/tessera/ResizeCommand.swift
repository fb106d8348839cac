import Tessera

/// `tessera resize`: resamples an image to any scale or exact size with a chosen kernel, streaming strips so
/// memory stays bounded by the widths.
enum ResizeCommand: Command {
    static let name = "resize"
    static let spec = CommandSpec(
        name: name, usage: "resize IN OUT (--scale S | --size WxH) [--kernel NAME] [--linear] [options]",
        summary: "resample an image by any scale or to an exact size with a chosen kernel, streaming",
        details: """
            --scale takes one factor or two (SX,SY); the output is round(side * factor) pixels.
            Alpha is premultiplied while filtering. Kernels: \(ResamplingKernel.all.map(\.name).joined(separator: ", ")).
            \(StandardStreams.help)
            """,
        options: [scale, size, kernel, linear, StandardStreams.format] + EncodingOptions.standard.allWithTIFF)

    static let scale = Option("scale", ValueKind.scaleFactors.optional,
                              "scale factor, such as 0.37 or 2 (x and y may differ: 0.5,0.25)")
    static let size = Option("size", ValueKind.pixelSize.optional,
                             "exact output size in pixels (the aspect ratio may change)")
    static let kernel = Option("kernel", .kernel, default: .lanczos3, "resampling kernel; bicubic is catmullrom")
    static let linear = Option(flag: "linear", "filter in linear light (sRGB decoded first, encoded after)")

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        let options = EncodingOptions.standard.read(arguments)
        let resampling = ResamplingReader.Options(kernel: arguments[kernel], linearLight: arguments[linear])
        let output = try StandardStreams.Output(paths[1], arguments)
        let source = try StandardStreams.source(paths[0], budget: options.budget)
        let size = try outputSize(arguments, source: source.properties.size)
        // Decoding runs ahead on threads of its own while the resampler's passes use both cores.
        let reader = try ResamplingReader(source: try source.makeReader().readingAhead(), size: size,
                                          options: resampling)
        try output.write(reader, options: options)
    }

    private static func outputSize(_ arguments: Arguments, source: Size) throws -> Size {
        switch (arguments[scale], arguments[size]) {
        case let (factors?, nil):
            return Size(width: max(1, Int((Double(source.width) * factors.x).rounded())),
                        height: max(1, Int((Double(source.height) * factors.y).rounded())))
        case let (nil, size?):
            return size
        default:
            throw UsageError("give either --scale or --size")
        }
    }
}

/// A resize's factors along x and y.
struct ScaleFactors: Sendable {
    let x: Double
    let y: Double
}

extension ValueKind where Value == ScaleFactors {
    /// One positive factor up to 1000, or two written SX,SY.
    static var scaleFactors: Self {
        ValueKind(placeholder: "S[,SY]", requirement: "be a positive number or two (SX,SY)", read: { text in
            let parts = text.split(separator: ",")
            let factors = parts.compactMap { Double($0) }
            guard (1...2).contains(factors.count), factors.count == parts.count,
                  factors.allSatisfy({ $0 > 0 && $0 <= 1000 }) else { return nil }
            return ScaleFactors(x: factors[0], y: factors[factors.count - 1])
        }, show: { $0.x == $0.y ? "\($0.x)" : "\($0.x),\($0.y)" })
    }
}

extension ValueKind where Value == Size {
    /// An exact size in pixels written WxH.
    static var pixelSize: Self {
        ValueKind(placeholder: "WxH", requirement: "be WxH in pixels, such as 800x600", read: { text in
            let parts = text.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ $0 > 0 && $0 <= 1 << 24 }) else { return nil }
            return Size(width: parts[0], height: parts[1])
        }, show: { "\($0.width)x\($0.height)" })
    }
}

extension ValueKind where Value == ResamplingKernel {
    /// A resampling kernel by name (`bicubic` is `catmullrom`), as `resize` and `thumbnail` take it.
    static var kernel: Self {
        let names = ResamplingKernel.all.map(\.name)
        return ValueKind(placeholder: "NAME", requirement: "be one of \(names.joined(separator: ", "))",
                         read: { ResamplingKernel(named: $0) }, show: { $0.name })
    }
}
