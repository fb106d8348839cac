import Foundation
import Synchronization
import Tessera

/// `tessera thumbnail`: vipsthumbnail's interface over `Thumbnailer`: many inputs on every core, each failure
/// reported on one line and skipped, the exit status 1 if any failed.
enum ThumbnailCommand: Command {
    static let name = "thumbnail"
    static let spec = CommandSpec(
        name: name, usage: "thumbnail IN... [-s SIZE] [-o PATTERN] [--crop MODE] [options]",
        summary: "make thumbnails of many images: shrink-on-load, box shrink, then a filtered reduction, upright",
        details: """
            SIZE is N (fits N x N), WxH, Wx or xH, optionally suffixed > (only shrink, the default), < (only
            enlarge) or ! (exactly WxH, distorting). PATTERN names each output: %s is the input's name without its
            extension; a relative pattern is relative to the input's folder, so the default writes beside the input.
            IN - reads the image from standard input (whole, within --memory-limit); its %s is stdin, and a
            relative pattern is relative to the current folder.
            """,
        options: [size, output, crop, kernel, linear, noRotate, embedded, threads, PyramidCacheOptions.folder]
            + EncodingOptions.standard.all)

    static let size = Option("size", short: "s", .thumbnailSize, default: ThumbnailSize(width: 128, height: 128),
                             "the box to fit")
    static let output = Option("output", short: "o", .text("PATTERN"), default: "tn_%s.jpg",
                               "output name, %s = input name")
    static let crop = Option("crop", .choice([("centre", .centre), ("attention", .attention), ("entropy", .entropy)],
                                             aliases: [("center", .centre)], placeholder: "MODE"),
                             default: ThumbnailCrop.none,
                             "fill the box and crop: attention keeps the most edges, entropy the most varied tones")
    static let kernel = Option("kernel", .kernel, default: .lanczos3, "kernel for the last reduction")
    static let linear = Option(flag: "linear", "filter in linear light")
    static let noRotate = Option(flag: "no-rotate",
                                 "keep the stored orientation instead of applying the EXIF orientation")
    static let embedded = Option(flag: "embedded", "use a JPEG's EXIF thumbnail when it is large enough")
    static let threads = CommonOptions.threads("images processed at once")

    static func run(_ arguments: Arguments) throws {
        let inputs = arguments.positionals
        guard !inputs.isEmpty else { throw UsageError("expected at least one input image") }
        try StandardStreams.requireReadOnce(inputs)
        let encoding = EncodingOptions.standard.read(arguments)
        let template = OutputTemplate(pattern: arguments[output])
        guard template.namesEachInput || inputs.count == 1 else {
            throw UsageError("--output needs %s when there are several inputs, or they would overwrite each other")
        }
        _ = try ImageWriter.format(forPath: template.pattern)
        let thumbnailer = Thumbnailer(options: try options(arguments, budget: encoding.budget))
        let threads = arguments[Self.threads]
        let next = Atomic(0), failures = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: min(threads, inputs.count)) { _ in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < inputs.count else { return }
                do {
                    let image = try thumbnailer.thumbnail(of: StandardStreams.source(inputs[index],
                                                                                     budget: encoding.budget))
                    let output = template.path(for: inputs[index])
                    let folder = (output as NSString).deletingLastPathComponent
                    if !folder.isEmpty {
                        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                    }
                    try ImageWriter.write(BufferReader(image), to: output, options: encoding)
                } catch {
                    printError("\(error)")
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        if failures.load(ordering: .relaxed) > 0 { throw CommandFailure(status: .failure) }
    }

    private static func options(_ arguments: Arguments, budget: MemoryBudget) throws -> Thumbnailer.Options {
        let size = arguments[Self.size], crop = arguments[Self.crop]
        if crop != .none && (size.width == nil || size.height == nil) {
            throw UsageError("--crop needs both a width and a height in --size, such as 200x200")
        }
        return Thumbnailer.Options(size: size, kernel: arguments[kernel], linearLight: arguments[linear],
                                   appliesOrientation: !arguments[noRotate], crop: crop,
                                   usesEmbeddedThumbnail: arguments[embedded], budget: budget,
                                   entropyIndexFolder: arguments[PyramidCacheOptions.folder])
    }
}

extension ValueKind where Value == ThumbnailSize {
    /// A thumbnail's box: N, WxH, Wx or xH, optionally suffixed >, < or !.
    static var thumbnailSize: Self {
        ValueKind(placeholder: "SIZE", requirement: "be N, WxH, Wx or xH with positive whole numbers",
                  read: { try? ThumbnailSize(parsing: $0) }, show: { $0.description })
    }
}
