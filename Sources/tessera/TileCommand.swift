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
        options: [layout, tileSize, overlap, depth, format, tiffLevels, container, skipBlank, resume, id, threads]
            + [ReadingOptions.page, ReadingOptions.partial] + encoding.all)

    /// The pyramid layouts, by the names `--layout` takes.
    enum Layout: String, CaseIterable, Sendable {
        case dz, zoomify, xyz, iiif, grid, tiff

        /// The layout's own tile side, in pixels.
        var defaultTileSize: Int {
            switch self {
            case .dz: DeepZoomLayout.defaultTileSize
            case .zoomify, .tiff: ZoomifyLayout.defaultTileSize
            case .xyz: XYZLayout.defaultTileSize
            case .iiif: IIIFLayout.defaultTileSize
            case .grid: GridLayout.defaultTileSize
            }
        }
    }

    /// Where the tiles of a folder layout go.
    enum Container: String, CaseIterable, Sendable { case dir, zip }

    static let layout = Option("layout", .choice, default: Layout.dz, "the pyramid's layout")
    static let tileSize = Option("tile-size", .integer(in: 1...8192),
                                 default: .depending(on: layout) { $0.defaultTileSize },
                                 "tile side in pixels; tiff: a multiple of \(PyramidalTIFFSink.tileSizeMultiple)")
    static let overlap = Option("overlap", .integer(in: 0...4096),
                                default: .depending(on: layout) { $0 == .dz ? DeepZoomLayout.defaultOverlap : 0 },
                                "pixels tiles share with their neighbours, Deep Zoom only")
    static let depth = Option("depth", .choice, default: .depending(on: layout) { layout -> PyramidPlan.Depth in
        layout == .dz ? .onePixel : layout == .grid ? .one : .oneTile
    }, "the smallest level: one pixel, one tile, or full resolution only")
    static let format = Option("format", .choice([("jpg", .jpeg), ("png", .png), ("webp", .webp)],
                                                 aliases: [("jpeg", .jpeg)]),
                               default: TileFormat.jpeg, "tile format")
    static let tiffLevels = Option("tiff-levels", .choice, default: PyramidalTIFFSink.LevelStorage.pages,
                                   "tiff: reduced levels as pages or SubIFDs")
    static let container = Option("container", .choice, default: Container.dir,
                                  "a folder tree or one uncompressed zip file")
    static let skipBlank = Option(flag: "skip-blank",
                                  "leave out tiles that are all background colour (listed in blank-tiles.json)")
    static let resume = Option(flag: "resume", "finish a build that was interrupted, reusing the tiles it completed")
    static let id = Option("id", .text("URL"), default: .computed("\(servedAt) and OUT's name") {
        servedAt + OutputName($0.positionals.last ?? "").name
    }, "IIIF: the URL the pyramid will be served at, info.json's id")
    /// Where `tessera serve` serves a pyramid by default, before its name.
    private static let servedAt = "http://localhost:\(ServeCommand.defaultPort)/"

    static let threads = CommonOptions.threads("encoding threads")
    /// Tiles are written at quality 75, as libvips' dzsave writes them, not at the encoder's default.
    static let encoding = EncodingOptions(quality: 75)

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 2, "IN and OUT")
        let layoutName = arguments[layout]
        let encoding = Self.encoding.read(arguments)
        let format = arguments[Self.format]
        let depth = arguments[Self.depth]
        let tileSize = arguments[Self.tileSize]
        let overlap = arguments[Self.overlap]
        if overlap > 0 && layoutName != .dz {
            throw UsageError("--overlap is for Deep Zoom only: the \(layoutName) layout has no overlap")
        }
        if arguments.isGiven(tiffLevels) && layoutName != .tiff {
            throw UsageError("--tiff-levels is for --layout tiff only")
        }
        var builderOptions = PyramidBuilder.Options()
        builderOptions.tileFormat = format
        builderOptions.encoding = encoding
        builderOptions.skipBlank = arguments[skipBlank]
        builderOptions.resume = arguments[resume]
        builderOptions.threads = arguments[threads]
        let read = ReadingOptions.read(arguments)

        let source = try ImageSource(path: paths[0], budget: encoding.budget)
        let reader = try source.makeReader(read)
        let plan = try PyramidPlan(imageSize: reader.size, tileSize: tileSize, overlap: overlap, depth: depth)
        let sink: any TileSink
        if layoutName == .tiff {
            sink = try tiffSink(path: paths[1], plan: plan, pixelFormat: reader.format.with(bitDepth: 8),
                                options: builderOptions, arguments: arguments)
        } else {
            let output = OutputName(paths[1])
            let layout: any PyramidLayout = switch layoutName {
            case .zoomify: ZoomifyLayout(plan: plan, name: output.name, tileFormat: format)
            case .xyz: XYZLayout(plan: plan, name: output.name, tileFormat: format)
            case .iiif: IIIFLayout(plan: plan, name: output.name, tileFormat: format, baseURI: arguments[id])
            case .grid: GridLayout(plan: plan, name: output.name, tileFormat: format)
            case .dz, .tiff: DeepZoomLayout(plan: plan, name: output.name, tileFormat: format)
            }
            let buildKey = try buildKey(source: paths[0], arguments: arguments, plan: plan)
            let store: any PyramidContainer = arguments[container] == .zip
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
        for refused in [resume, skipBlank] where arguments[refused] {
            throw UsageError("--\(refused.name) is for tile folders: a TIFF is one file written in one go")
        }
        if arguments.isGiven(container) { throw UsageError("--container is for tile folders, not a TIFF") }
        let multiple = PyramidalTIFFSink.tileSizeMultiple
        guard plan.tileSize % multiple == 0 else {
            throw UsageError("--tile-size must be a multiple of \(multiple) for a TIFF, not \(plan.tileSize)")
        }
        return try PyramidalTIFFSink(path: path, plan: plan, pixelFormat: pixelFormat, options: options,
                                     levelStorage: arguments[tiffLevels])
    }

    /// Identifies the source file (path, size, modification time) and every option, so that `--resume` only
    /// continues the same build.
    private static func buildKey(source: String, arguments: Arguments, plan: PyramidPlan) throws -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: source)
        let size = attributes?[.size] as? Int ?? 0
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let options = arguments.spec.options.filter { $0.name != resume.name && $0.name != threads.name }.map { option in
            "\(option.name)=" + (arguments.text(of: option).map { option.placeholder == nil ? "on" : $0 } ?? "-")
        }
        return ([source, "\(size)", "\(modified)", "\(plan.imageSize)"] + options).joined(separator: "\n")
    }
}

/// Where a pyramid goes: the folder it is written in and the name its entries take, from the OUT argument
/// (a trailing `.dzi` or `.zip` is the layout's or container's own and is dropped).
struct OutputName {
    let parent: String
    let name: String

    init(_ path: String) {
        var url = URL(fileURLWithPath: path)
        if ["dzi", "zip"].contains(url.pathExtension.lowercased()) { url.deletePathExtension() }
        parent = url.deletingLastPathComponent().path
        name = url.lastPathComponent
    }
}
