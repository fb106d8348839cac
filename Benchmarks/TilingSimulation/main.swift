// Issue 5 item 7: replays the seed's scenario (an 11935x8554 map in a 375x268-point view on a 2x screen) through
// TesseraTiling over real Deep Zoom pyramids, and reports memory, coverage and sharpness per tile size beside
// the cost of decoding the whole image. See README.md beside this file.
import Foundation
import Tessera
import TesseraTiling

let options: Options
do {
    options = try Options(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("\(error)\n\(Options.usage)\n".utf8))
    exit(2)
}

let imageSize = Size(width: 11935, height: 8554)
let content = PixelSize(width: imageSize.width, height: imageSize.height)
let viewSize = Size2D(width: 375, height: 268)
let contentsScale = 2.0
let budgetBytes = options.budgetMegabytes << 20

do {
    let files = PyramidFiles(folder: options.work, imageSize: imageSize)
    let map = try files.mapPath(given: options.image)
    let mapSize = try ImageSource(path: map).properties.size
    guard mapSize == imageSize else { throw UsageError("\(map) is \(mapSize); the seed's scenario needs \(imageSize)") }

    // The seed's settings: levelsOfDetail 1 and levelsOfDetailBias = ceil(log2(1 / imageScale)) + 1.
    let limits = ZoomLimits(contentSize: content, viewSize: viewSize)
    let bias = Int(log2(Double(imageSize.width) / viewSize.width).rounded(.up)) + 1
    let seed = TiledLayerConfiguration(levelsOfDetail: 1, levelsOfDetailBias: bias, contentsScale: contentsScale)
    // The level the engine would draw at fit with every level available, and so the levelsOfDetail reaching it.
    let fitLevel = TiledLayerConfiguration(levelsOfDetail: 64, levelsOfDetailBias: bias, contentsScale: contentsScale)
        .level(forZoom: limits.minimum, contentSize: content)!.level
    let covering = 1 - fitLevel
    let fitPlan = TiledLayout(configuration: seed, contentSize: content)
        .plan(for: ScrollViewport(contentSize: content, viewSize: viewSize))
    let fitBytes = fitPlan.visible.reduce(0) { $0 + $1.pixelSize.width * $1.pixelSize.height * 3 }
    print("""
        Seed scenario: \(imageSize) image, \(Int(viewSize.width))x\(Int(viewSize.height))-point view, contentsScale \
        \(Int(contentsScale)), zoom \(format(limits.minimum, digits: 4)) (fit) to \(format(limits.maximum, digits: 0)), \
        cache budget \(options.budgetMegabytes) MiB.
        The seed's levelsOfDetail 1 / bias \(bias) gives levels \(seed.levelRange(for: content)!) only: at fit it draws \
        level \(fitPlan.level!.level) minified, \(fitPlan.visible.count) visible 256-pixel tiles \
        (\(format(Double(fitBytes) / 1_048_576, digits: 0)) MiB pinned), so it cannot zoom out below 1x; replayed \
        with levelsOfDetail \(covering) (levels \(fitLevel)...\(bias)), which reaches fit.

        """)

    let trace = Trace.scripted(view: viewSize, limits: limits, speedUp: options.quick ? 4 : 1)
    var report = Report(budgetBytes: budgetBytes)
    for tileSize in options.tileSizes {
        let pyramid = try files.pyramid(of: map, tileSize: tileSize)
        let configuration = TiledLayerConfiguration(
            tileSize: PixelSize(width: tileSize, height: tileSize), levelsOfDetail: covering,
            levelsOfDetailBias: bias, contentsScale: contentsScale)
        log("replaying \(trace.count) frames with \(tileSize)-pixel tiles")
        let simulation = Simulation(
            configuration: configuration, contentSize: content, viewSize: viewSize, byteBudget: budgetBytes,
            pyramid: (files.folder, pyramid))
        let result = await simulation.run(trace)
        guard result.tilesFailed == 0 else { throw UsageError("\(result.tilesFailed) tiles failed to decode") }
        report.rows.append(result)
    }

    // The seed's baseline: decode the whole image into memory once.
    ProcessMemory.resetPeak()
    var decoded = ImageBuffer(width: 0, height: 0, format: .rgb8)
    let decodeSeconds = try timed {
        decoded = try ImageSource(path: map).makeReader().readAll(budget: MemoryBudget(limit: 1 << 32), name: map)
    }
    report.baseline = (decodeSeconds, ProcessMemory.peakResidentBytes(), decoded.bytes.count)

    print(report.render(markdown: options.markdown))
    print("""

        fully covered: frames where the draw list paints all of the visible content from some cached level; \
        sharp: every visible tile drawn from its own level (the 0.25 s fade-in not counted); frames are 1/60 s of \
        simulated time. Criteria (cache + in flight <= budget, >= 99% of frames covered): \
        \(report.criteriaMet ? "met" : "NOT met").
        """)
} catch {
    FileHandle.standardError.write(Data("TilingSimulation: \(error)\n".utf8))
    exit(1)
}
