import Foundation
import Synchronization
import Tessera

/// `tessera thumbnail`: vipsthumbnail's interface over `Thumbnailer`: many inputs on every core, each failure
/// reported on one line and skipped, the exit status 1 if any failed.
enum ThumbnailCommand: Command {
    static let spec = CommandSpec(
        name: "thumbnail", usage: "thumbnail IN... [-s SIZE] [-o PATTERN] [--crop MODE] [options]",
        summary: "make thumbnails of many images: shrink-on-load, box shrink, then Lanczos3, upright",
        details: """
            SIZE is N (fits N x N), WxH, Wx or xH, optionally suffixed > (only shrink, the default), < (only
            enlarge) or ! (exactly WxH, distorting). PATTERN names each output: %s is the input's name without its
            extension; a relative pattern is relative to the input's folder (default tn_%s.jpg, beside the input).
            """,
        options: [
            Option("size", short: "s", value: "SIZE", "the box to fit (default 128)"),
            Option("output", short: "o", value: "PATTERN", "output name, %s = input name (default tn_%s.jpg)"),
            Option("crop", value: "MODE", "fill the box and crop: centre, attention (most edges) or entropy"),
            Option("kernel", value: "NAME", "kernel for the last reduction (default lanczos3)"),
            Option("linear", "filter in linear light"),
            Option("no-rotate", "keep the stored orientation instead of applying the EXIF orientation"),
            Option("embedded", "use a JPEG's EXIF thumbnail when it is large enough"),
            Option("threads", value: "N", "images processed at once (default: one per core)"),
        ] + EncodeFlags.options)

    static func run(_ arguments: Arguments) throws {
        let inputs = arguments.positionals
        guard !inputs.isEmpty else { throw UsageError("expected at least one input image") }
        let encoding = try EncodeFlags.parse(arguments)
        let pattern = arguments.value("output") ?? "tn_%s.jpg"
        guard pattern.contains("%s") || inputs.count == 1 else {
            throw UsageError("--output needs %s when there are several inputs, or they would overwrite each other")
        }
        _ = try ImageWriter.format(forPath: pattern)
        let thumbnailer = Thumbnailer(options: try options(arguments, budget: encoding.budget))
        let threads = try arguments.integer("threads", in: 1...256) ?? ProcessInfo.processInfo.activeProcessorCount
        let next = Atomic(0), failures = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: min(threads, inputs.count)) { _ in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < inputs.count else { return }
                do {
                    let image = try thumbnailer.thumbnail(path: inputs[index])
                    let output = outputPath(for: inputs[index], pattern: pattern)
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
        let size: ThumbnailSize
        do {
            size = try ThumbnailSize(parsing: arguments.value("size") ?? "128")
        } catch let error as TesseraError {
            throw UsageError("--size: \(error)")
        }
        let crop: ThumbnailCrop = switch try arguments.choice("crop", from: ["centre", "center", "attention", "entropy"]) {
        case "centre", "center": .centre
        case "attention": .attention
        case "entropy": .entropy
        default: .none
        }
        if crop != .none && (size.width == nil || size.height == nil) {
            throw UsageError("--crop needs both a width and a height in --size, such as 200x200")
        }
        return Thumbnailer.Options(size: size, kernel: try ResizeCommand.kernel(arguments),
                                   linearLight: arguments.flag("linear"), appliesOrientation: !arguments.flag("no-rotate"),
                                   crop: crop, usesEmbeddedThumbnail: arguments.flag("embedded"), budget: budget)
    }

    /// The output path for `input`: `%s` replaced by its name without extension, relative to its folder unless
    /// the pattern is absolute.
    static func outputPath(for input: String, pattern: String) -> String {
        let name = ((input as NSString).lastPathComponent as NSString).deletingPathExtension
        let file = pattern.replacingOccurrences(of: "%s", with: name)
        if file.hasPrefix("/") { return file }
        let folder = (input as NSString).deletingLastPathComponent
        return folder.isEmpty ? file : folder + "/" + file
    }
}
