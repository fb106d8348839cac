import Tessera

/// `tessera resize`: resamples an image to any scale or exact size with a chosen kernel, streaming strips so
/// memory stays bounded by the widths.
enum ResizeCommand: Command {
    static let spec = CommandSpec(
        name: "resize", usage: "resize IN OUT (--scale S | --size WxH) [--kernel NAME] [--linear] [options]",
        summary: "resample an image by any scale or to an exact size (Lanczos3 by default), streaming",
        details: """
            --scale takes one factor or two (SX,SY); the output is round(side * factor) pixels.
            Alpha is premultiplied while filtering. Kernels: \(ResamplingKernel.all.map(\.name).joined(separator: ", ")).
            """,
        options: [
            Option("scale", value: "S[,SY]", "scale factor, such as 0.37 or 2 (x and y may differ: 0.5,0.25)"),
            Option("size", value: "WxH", "exact output size in pixels (the aspect ratio may change)"),
            Option("kernel", value: "NAME", "resampling kernel (default lanczos3; bicubic is catmullrom)"),
            Option("linear", "filter in linear light (sRGB decoded first, encoded after)"),
        ] + EncodeFlags.options + EncodeFlags.tiffOptions)

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        let options = try EncodeFlags.parseWithTIFF(arguments)
        let resampling = ResamplingReader.Options(kernel: try kernel(arguments), linearLight: arguments.flag("linear"))
        let format = try ImageWriter.format(forPath: paths[1])
        let source = try ImageSource(path: paths[0], budget: options.budget)
        let size = try outputSize(arguments, source: source.properties.size)
        // Decoding runs ahead on its own thread while the resampler's passes use both cores.
        let reader = try ResamplingReader(source: PrefetchingReader(source: try source.makeReader()), size: size,
                                          options: resampling)
        try ConvertCommand.write(reader, to: paths[1], format: format, options: options)
    }

    /// The kernel named by `--kernel`, Lanczos3 by default; shared with `thumbnail`.
    static func kernel(_ arguments: Arguments) throws -> ResamplingKernel {
        guard let name = arguments.value("kernel") else { return .lanczos3 }
        guard let kernel = ResamplingKernel(named: name) else {
            throw UsageError("--kernel must be one of \(ResamplingKernel.all.map(\.name).joined(separator: ", ")), not '\(name)'")
        }
        return kernel
    }

    private static func outputSize(_ arguments: Arguments, source: Size) throws -> Size {
        switch (arguments.value("scale"), arguments.value("size")) {
        case let (scale?, nil):
            let factors = scale.split(separator: ",").compactMap { Double($0) }
            guard (1...2).contains(factors.count), factors.count == scale.split(separator: ",").count,
                  factors.allSatisfy({ $0 > 0 && $0 <= 1000 }) else {
                throw UsageError("--scale must be a positive number or two (SX,SY), not '\(scale)'")
            }
            let sx = factors[0], sy = factors.last!
            return Size(width: max(1, Int((Double(source.width) * sx).rounded())),
                        height: max(1, Int((Double(source.height) * sy).rounded())))
        case let (nil, size?):
            let parts = size.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ $0 > 0 && $0 <= 1 << 24 }) else {
                throw UsageError("--size must be WxH in pixels, such as 800x600, not '\(size)'")
            }
            return Size(width: parts[0], height: parts[1])
        default:
            throw UsageError("give either --scale or --size")
        }
    }
}
