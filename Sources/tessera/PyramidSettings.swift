import Foundation
import Tessera

/// Everything `tile` needs to build a pyramid, read and checked once from the command line, and the build of
/// one input into one output with them: the same for a single image and for every input of a batch.
struct PyramidSettings: Sendable {
    typealias Layout = TileCommand.Layout

    let layout: Layout
    let tileSize: Int
    let overlap: Int
    let depth: PyramidPlan.Depth
    let container: TileCommand.Container
    let tiffLevels: PyramidalTIFFSink.LevelStorage
    /// info.json's id, `%s` standing for the output's name.
    let id: String
    let read: ReadOptions
    let builder: PyramidBuilder.Options
    /// The options that shape the output, `name=value`, for the `BuildKey`.
    let keyOptions: [String]

    /// What one build did.
    struct Built {
        /// Whether the output was already complete, so nothing was built.
        var skipped: Bool
        /// Tiles in the pyramid, and those an interrupted build had already written.
        var tiles: Int
        var tilesReused: Int
        /// The output's size on disk.
        var bytes: Int
    }

    init(_ arguments: Arguments) throws {
        typealias Tile = TileCommand
        layout = arguments[Tile.layout]
        tileSize = arguments[Tile.tileSize]
        overlap = arguments[Tile.overlap]
        depth = arguments[Tile.depth]
        container = arguments[Tile.container]
        tiffLevels = arguments[Tile.tiffLevels]
        id = arguments[Tile.id]
        if overlap > 0 && layout != .dz {
            throw UsageError("--overlap is for Deep Zoom only: the \(layout) layout has no overlap")
        }
        if arguments.isGiven(Tile.tiffLevels) && layout != .tiff {
            throw UsageError("--tiff-levels is for --layout tiff only")
        }
        if layout == .tiff {
            for refused in [Tile.resume, Tile.skipBlank] where arguments[refused] {
                throw UsageError("--\(refused.name) is for tile folders: a TIFF is one file written in one go")
            }
            if arguments.isGiven(Tile.container) || container == .zip {
                throw UsageError("a TIFF is one file, not a folder or a zip: give OUT as a .tif, without --container")
            }
            let multiple = PyramidalTIFFSink.tileSizeMultiple
            guard tileSize % multiple == 0 else {
                throw UsageError("--tile-size must be a multiple of \(multiple) for a TIFF, not \(tileSize)")
            }
        }
        var builder = PyramidBuilder.Options()
        builder.tileFormat = arguments[Tile.format]
        builder.encoding = Tile.encoding.read(arguments)
        builder.skipBlank = arguments[Tile.skipBlank]
        self.builder = builder
        read = ReadingOptions.read(arguments)
        let run = Set(Tile.runOptions.map(\.name))
        keyOptions = arguments.spec.options.filter { !run.contains($0.name) }.map { option in
            "\(option.name)=" + (arguments.text(of: option).map { option.placeholder == nil ? "on" : $0 } ?? "-")
        }
    }

    /// Builds the pyramid of `input` at `output` (a name as `tile IN OUT` takes), on `threads` encoding threads,
    /// reusing a partial build as `partial` says (a TIFF, one file, always starts again), and leaves its completion
    /// record; with `skippingComplete`, an output that is already a finished build of the same key is left as it is.
    func build(input: String, output: String, partial requested: PartialBuildPolicy, threads: Int,
               skippingComplete: Bool = false, progress: Progress? = nil) throws -> Built {
        let (record, reader, plan, source) = try prepare(input: input, output: output)
        let key = BuildKey(input: source.input, options: keyOptions)
        if skippingComplete && record.isComplete(for: key) {
            return Built(skipped: true, tiles: plan.tileCount, tilesReused: 0, bytes: record.outputBytes())
        }
        try record.willReplace()
        let partial = layout == .tiff ? .discard : requested
        var options = builder
        options.threads = threads
        options.resume = partial.reusesTiles
        let sink: any TileSink
        var store: (any PyramidContainer)?
        if layout == .tiff {
            sink = try PyramidalTIFFSink(path: output, plan: plan, pixelFormat: reader.format.with(bitDepth: 8),
                                         options: options, levelStorage: tiffLevels)
        } else {
            let name = OutputName(output)
            let layout = folderLayout(plan: plan, name: name.name)
            let container: any PyramidContainer = self.container == .zip
                ? try ZipContainer(path: name.zip, partial: partial, buildKey: key.description)
                : try DirectoryContainer(parent: name.parent, entries: layout.topLevelEntries,
                                         buildKey: key.description, partial: partial)
            sink = LayoutSink(layout: layout, container: container)
            store = container
        }
        let report: PyramidBuilder.Report
        do {
            report = try PyramidBuilder(plan: plan, sink: sink, options: options).build(from: reader) { done, total in
                progress?.update(done, of: total)
            }
        } catch {
            // A bad source stays bad: leave nothing of it behind (a kill, which a resume mends, never gets here).
            store?.discard()
            throw error
        }
        try record.didBuild(key)
        return Built(skipped: false, tiles: plan.tileCount, tilesReused: report.tilesReused, bytes: record.outputBytes())
    }

    /// Opens `input`, plans its pyramid, and finds the completion record of `output`.
    private func prepare(input: String, output: String) throws
        -> (record: CompletionRecord, reader: any ImageReader, plan: PyramidPlan, source: ImageSource) {
        let source = try ImageSource(path: input, budget: builder.encoding.budget)
        let reader = try source.makeReader(read)
        let plan = try PyramidPlan(imageSize: reader.size, tileSize: tileSize, overlap: overlap, depth: depth)
        let record: CompletionRecord
        let name = OutputName(output)
        if layout == .tiff {
            record = .file(output)
        } else if container == .zip {
            record = .zip(name.zip)
        } else {
            record = .folder(name.parent, entries: folderLayout(plan: plan, name: name.name).topLevelEntries)
        }
        return (record, reader, plan, source)
    }

    /// The folder layout named `name` (every layout but `tiff`).
    private func folderLayout(plan: PyramidPlan, name: String) -> any PyramidLayout {
        let format = builder.tileFormat
        return switch layout {
        case .zoomify: ZoomifyLayout(plan: plan, name: name, tileFormat: format)
        case .xyz: XYZLayout(plan: plan, name: name, tileFormat: format)
        case .iiif: IIIFLayout(plan: plan, name: name, tileFormat: format,
                               baseURI: id.replacingOccurrences(of: "%s", with: name))
        case .grid: GridLayout(plan: plan, name: name, tileFormat: format)
        case .dz, .tiff: DeepZoomLayout(plan: plan, name: name, tileFormat: format)
        }
    }
}
