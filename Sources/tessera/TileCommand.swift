import Foundation
import Tessera

/// `tessera tile`: cuts an image into a tile pyramid (Deep Zoom, Zoomify, XYZ, IIIF level 0, a plain grid, a
/// pyramidal TIFF) in one streaming pass, encoding tiles on every core.
enum TileCommand: Command {
    static let spec = CommandSpec(
        name: "tile", usage: "tile IN OUT [--layout dz|zoomify|xyz|iiif|grid|tiff] [options]",
        summary: "cut an image into a tile pyramid: Deep Zoom, Zoomify, XYZ, IIIF level 0, a grid or a pyramidal TIFF",
        details: """
            OUT names the output: for Deep Zoom, OUT.dzi beside OUT_files/; for the others, the folder OUT/
            (or OUT.zip with --container zip). It is built under a hidden temporary name and moved into place
            when complete; a killed build can be finished with --resume. For tiff, OUT is the .tif file: JPEG
            tiles (--format jpg), WebP tiles (webp) or deflated pixels (png), each level a page (or a SubIFD), BigTIFF
            when it passes 4 GiB; it cannot resume, skip blank tiles or go in a zip.
            """,
        options: [
            Option("layout", value: "NAME", "dz (default), zoomify, xyz, iiif, grid or tiff"),
            Option("tile-size", value: "N", "tile side in pixels (default: dz 254, iiif 512, others 256; tiff: a multiple of 16)"),
            Option("overlap", value: "N", "pixels tiles share with their neighbours (default: dz 1, others 0)"),
            Option("depth", value: "NAME", "onepixel, onetile or one (default: dz onepixel, grid one, others onetile)"),
            Option("format", value: "jpg|png|webp", "tile format (default jpg)"),
            Option("tiff-levels", value: "pages|subifd", "tiff: reduced levels as pages (default) or SubIFDs"),
            Option("container", value: "dir|zip", "a folder tree (default) or one uncompressed zip file"),
            Option("skip-blank", "leave out tiles that are all background colour (listed in blank-tiles.json)"),
            Option("resume", "finish a build that was interrupted, reusing the tiles it completed"),
            Option("id", value: "URL", "IIIF: the URL the pyramid will be served at (info.json's id)"),
            Option("threads", value: "N", "encoding threads (default: one per core)"),
        ] + ReadFlags.options.filter { $0.name != "scale" } + EncodeFlags.options)

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        let layoutName = try arguments.choice("layout", from: ["dz", "zoomify", "xyz", "iiif", "grid", "tiff"]) ?? "dz"
        var encoding = try EncodeFlags.parse(arguments)
        if arguments.value("quality") == nil { encoding.quality = 75 }
        let format: TileFormat = switch try arguments.choice("format", from: ["jpg", "jpeg", "png", "webp"]) {
        case "png": .png
        case "webp": .webp
        default: .jpeg
        }
        let depth = try arguments.choice("depth", from: PyramidPlan.Depth.allCases.map(\.rawValue))
            .flatMap(PyramidPlan.Depth.init(rawValue:))
            ?? (layoutName == "dz" ? .onePixel : layoutName == "grid" ? .one : .oneTile)
        let defaultTile = layoutName == "dz" ? DeepZoomLayout.defaultTileSize
            : layoutName == "iiif" ? IIIFLayout.defaultTileSize : ZoomifyLayout.defaultTileSize
        let tileSize = try arguments.integer("tile-size", in: 1...8192) ?? defaultTile
        let overlap = try arguments.integer("overlap", in: 0...4096) ?? (layoutName == "dz" ? DeepZoomLayout.defaultOverlap : 0)
        if overlap > 0 && layoutName != "dz" {
            throw UsageError("--overlap is for Deep Zoom only: the \(layoutName) layout has no overlap")
        }
        if arguments.value("tiff-levels") != nil && layoutName != "tiff" {
            throw UsageError("--tiff-levels is for --layout tiff only")
        }
        let container = try arguments.choice("container", from: ["dir", "zip"]) ?? "dir"
        var builderOptions = PyramidBuilder.Options()
        builderOptions.tileFormat = format
        builderOptions.encoding = encoding
        builderOptions.skipBlank = arguments.flag("skip-blank")
        builderOptions.resume = arguments.flag("resume")
        builderOptions.threads = try arguments.integer("threads", in: 1...256) ?? builderOptions.threads
        let read = try ReadFlags.parse(arguments)

        let source = try ImageSource(path: paths[0], budget: encoding.budget)
        let reader = try source.makeReader(read)
        let plan = try PyramidPlan(imageSize: reader.size, tileSize: tileSize, overlap: overlap, depth: depth)
        let sink: any TileSink
        if layoutName == "tiff" {
            sink = try tiffSink(path: paths[1], plan: plan, pixelFormat: reader.format.with(bitDepth: 8),
                                options: builderOptions, arguments: arguments)
        } else {
            let output = OutputName(paths[1], layout: layoutName, container: container)
            let layout: any PyramidLayout = switch layoutName {
            case "zoomify": ZoomifyLayout(plan: plan, name: output.name, tileFormat: format)
            case "xyz": XYZLayout(plan: plan, name: output.name, tileFormat: format)
            case "iiif": IIIFLayout(plan: plan, name: output.name, tileFormat: format,
                                    baseURI: arguments.value("id") ?? "http://localhost:8000/\(output.name)")
            case "grid": GridLayout(plan: plan, name: output.name, tileFormat: format)
            default: DeepZoomLayout(plan: plan, name: output.name, tileFormat: format)
            }
            let buildKey = try buildKey(source: paths[0], arguments: arguments, plan: plan)
            let store: any PyramidContainer = container == "zip"
                ? try ZipContainer(path: "\(output.parent)/\(output.name).zip", resume: builderOptions.resume,
                                   buildKey: buildKey)
                : try DirectoryContainer(parent: output.parent, entries: layout.topLevelEntries, buildKey: buildKey,
                                         resume: builderOptions.resume)
            sink = LayoutSink(layout: layout, container: store)
        }
        let builder = PyramidBuilder(plan: plan, sink: sink, options: builderOptions)
        let progress = Progress("tiling \(paths[0])")
        defer { progress.finish() }
        _ = try builder.build(from: reader) { done, total in progress.update(done, of: total) }
    }

    /// The pyramidal TIFF sink for OUT, after refusing the options a single TIFF file cannot honour.
    private static func tiffSink(path: String, plan: PyramidPlan, pixelFormat: PixelFormat,
                                 options: PyramidBuilder.Options, arguments: Arguments) throws -> any TileSink {
        for refused in ["resume", "skip-blank"] where arguments.flag(refused) {
            throw UsageError("--\(refused) is for tile folders: a TIFF is one file written in one go")
        }
        if arguments.value("container") != nil { throw UsageError("--container is for tile folders, not a TIFF") }
        let multiple = PyramidalTIFFSink.tileSizeMultiple
        guard plan.tileSize % multiple == 0 else {
            throw UsageError("--tile-size must be a multiple of \(multiple) for a TIFF, not \(plan.tileSize)")
        }
        let levels = try arguments.choice("tiff-levels", from: PyramidalTIFFSink.LevelStorage.allCases.map(\.rawValue))
            .flatMap(PyramidalTIFFSink.LevelStorage.init(rawValue:)) ?? .pages
        return try PyramidalTIFFSink(path: path, plan: plan, pixelFormat: pixelFormat, options: options,
                                     levelStorage: levels)
    }

    /// Identifies the source file (path, size, modification time) and every option, so that `--resume` only
    /// continues the same build.
    private static func buildKey(source: String, arguments: Arguments, plan: PyramidPlan) throws -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: source)
        let size = attributes?[.size] as? Int ?? 0
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let options = arguments.spec.options.filter { $0.name != "resume" && $0.name != "threads" }
            .map { "\($0.name)=\(arguments.value($0.name) ?? (arguments.flag($0.name) ? "on" : "-"))" }
        return ([source, "\(size)", "\(modified)", "\(plan.imageSize)"] + options).joined(separator: "\n")
    }
}

/// Where a pyramid goes: the folder it is written in and the name its entries take, from the OUT argument
/// (a trailing `.dzi` or `.zip` is the layout's or container's own and is dropped).
struct OutputName {
    let parent: String
    let name: String

    init(_ path: String, layout: String, container: String) {
        var url = URL(fileURLWithPath: path)
        if ["dzi", "zip"].contains(url.pathExtension.lowercased()) { url.deletePathExtension() }
        parent = url.deletingLastPathComponent().path
        name = url.lastPathComponent
    }
}
