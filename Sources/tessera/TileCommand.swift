import Foundation
import Tessera

/// `tessera tile`: cuts an image into a tile pyramid (Deep Zoom, Zoomify, XYZ, IIIF level 0, a plain grid, a
/// pyramidal TIFF) in one streaming pass, encoding tiles on every core.
enum TileCommand: Command {
    static let name = "tile"
    static let spec = CommandSpec(
        name: name, usage: "tile IN OUT | IN... -o PATTERN | --from LIST -o PATTERN | --summarize REPORT... "
            + "[--layout dz|zoomify|xyz|iiif|grid|tiff] [options]",
        summary: "cut an image into a tile pyramid: Deep Zoom, Zoomify, XYZ, IIIF level 0, a grid or a pyramidal TIFF",
        details: """
            OUT names the output: for Deep Zoom, OUT.dzi beside OUT_files/; for the others, the folder OUT/ (for
            iiif, its info.json, and a manifest.json for the viewers that open IIIF manifests). An OUT
            ending in .zip (or --container zip) makes the one zip file OUT.zip instead, which every command reads as
            the image, as it does the folder. It is
            built under a hidden temporary name and moved into place when complete; a killed build can be finished
            with --resume. For tiff, OUT is the .tif file: JPEG tiles (--format jpg), WebP tiles (webp) or deflated
            pixels (png), each level a page (or a SubIFD), BigTIFF when it passes 4 GiB; it cannot resume, skip
            blank tiles or go in a zip.

            A batch (-o PATTERN, inputs as arguments or in --from LIST) tiles one input after another with every
            thread, or --jobs at a time. An input whose output is complete (its marker matching the input's size,
            modification time and the options) is skipped, a partial one resumed, --force rebuilds; a failed input
            fails only itself. The exit status is 1 if any failed. --summarize prints the failed inputs of REPORTs
            on stdout, a list for --from, and the totals on stderr.
            """,
        options: [layout, tileSize, overlap, depth, format, tiffLevels, container, skipBlank, resume, id, threads]
            + [output, from, shard, jobs, force, report, json, summarize]
            + [ReadingOptions.page, ReadingOptions.partial, PyramidCacheOptions.folder] + encoding.all)

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
    static let container = Option("container", .choice, default: .computed("zip when OUT ends in .zip, else dir") {
        arguments in
        let out = arguments[output] ?? (arguments.positionals.count == 2 ? arguments.positionals[1] : nil)
        return out.map(OutputName.namesZip) == true ? Container.zip : .dir
    }, "a folder tree or one uncompressed zip file")
    static let skipBlank = Option(flag: "skip-blank",
                                  "leave out tiles that are all background colour (listed in blank-tiles.json)")
    static let resume = Option(flag: "resume", "finish a build that was interrupted, reusing the tiles it completed "
                               + "(a batch always does, unless --force)")
    static let id = Option("id", .text("URL"), default: servedAt + "%s",
                           "IIIF: the URL the pyramid will be served at, info.json's id; %s = OUT's name")
    /// Where `tessera serve` serves a pyramid by default, before its name.
    private static let servedAt = "http://localhost:\(ServeCommand.defaultPort)/"

    static let threads = CommonOptions.threads("encoding threads")
    /// Tiles are written at quality 75, as libvips' dzsave writes them, not at the encoder's default.
    static let encoding = EncodingOptions(quality: 75)

    // Many inputs in one run.
    static let output = Option("output", short: "o", ValueKind.text("PATTERN").optional,
                               "a batch: each input's OUT, %s = the input's name (relative to the input's folder)")
    static let from = Option("from", ValueKind.text("LIST").optional,
                             "a batch: read inputs from LIST, one path a line (- for stdin)")
    static let shard = Option("shard", ValueKind.shard.optional,
                              "a batch: only every N-th input from the K-th (K from 0), as a Slurm array task")
    static let jobs = Option("jobs", .integer(in: 1...256), default: 1,
                             "a batch: inputs tiled at once, sharing --threads between them")
    static let force = Option(flag: "force", "a batch: rebuild outputs that are already complete")
    static let report = Option("report", ValueKind.text("FILE").optional,
                               "a batch: write one JSON line per input to FILE")
    static let json = Option(flag: "json", "a batch: one JSON line per input on stdout; --summarize: one JSON object")
    static let summarize = Option(flag: "summarize",
                                  "merge the --report files given as arguments: totals, and the failed inputs")

    /// The options that choose how the work is run rather than what it makes, left out of the `BuildKey`.
    static let runOptions: [any OptionDeclaration] = [resume, threads, output, from, shard, jobs, force, report,
                                                      json, summarize]

    static func run(_ arguments: Arguments) throws {
        if arguments[summarize] { return try BatchSummary.run(reports: arguments.positionals, json: arguments[json]) }
        let pyramid = try PyramidSettings(arguments)
        guard arguments[output] != nil || arguments[from] != nil else {
            let batchOnly: [any OptionDeclaration] = [from, shard, jobs, force, report, json]
            for option in batchOnly where arguments.isGiven(option) {
                throw UsageError("--\(option.name) is for a batch: give the outputs as -o PATTERN")
            }
            let paths = try arguments.positionals(exactly: 2, "IN and OUT")
            try StandardStreams.refuseInputForTiling([paths[0]])
            let progress = Progress("tiling \(paths[0])")
            defer { progress.finish() }
            _ = try pyramid.build(input: paths[0], output: paths[1], partial: arguments[resume] ? .resume : .discard,
                                  threads: arguments[threads], progress: progress)
            return
        }
        try TileBatch(arguments, pyramid: pyramid).run()
    }
}

/// Where a pyramid goes: the folder it is written in and the name its entries take, from the OUT argument
/// (a trailing `.dzi` or `.zip` is the layout's or container's own and is dropped).
struct OutputName {
    let parent: String
    let name: String
    /// The path of the pyramid as one zip file (`--container zip`).
    var zip: String { "\(parent)/\(name).zip" }

    init(_ path: String) {
        var url = URL(fileURLWithPath: path)
        if Self.namesZip(path) || url.pathExtension.lowercased() == "dzi" { url.deletePathExtension() }
        parent = url.deletingLastPathComponent().path
        name = url.lastPathComponent
    }

    /// Whether OUT `path` names a zip file (it ends in `.zip`, in any case): `--container`'s default then.
    static func namesZip(_ path: String) -> Bool {
        URL(fileURLWithPath: path).pathExtension.lowercased() == "zip"
    }
}
