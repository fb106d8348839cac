import Foundation
import Synchronization
import Tessera
import TesseraTiling

/// One replay of the trace through the engine with one tile size.
///
/// The time model: frame `n` happens at `n / 60` seconds of simulated time, the clock the scheduler stamps
/// arrivals with and the composer fades by. Each frame applies its input to the viewport, plans, updates the
/// scheduler, composes the draw list and measures it; then the harness sleeps until 1/60 s of real time has
/// passed since the frame began, while the scheduler's tasks decode real tiles on the real cores. So decode
/// work is real and a tile asked for in frame `n` can show from frame `n + 1` on, if it was made in time; a
/// frame whose own work overruns 1/60 s is counted and the next starts at once.
struct Simulation {
    /// What the simulation measured.
    struct Result {
        var tileSize = 0
        var frames = 0
        /// Frames where some visible content was painted by no cached level.
        var uncoveredFrames = 0
        /// Frames before the first fully covered one: the cold start, with an empty cache.
        var warmUpFrames = 0
        /// The largest unpainted share of the visible content in any frame after the warm-up.
        var worstUncoveredFraction = 0.0
        /// The cache's own peak, from its statistics.
        var peakCacheBytes = 0
        /// Decoded bytes not yet in the cache, at the peak.
        var peakInFlightBytes = 0
        /// The peak of cache bytes plus bytes in flight.
        var peakTotalBytes = 0
        /// The process's peak resident set during the replay.
        var peakRSSBytes = 0
        /// Tiles made and cached.
        var tilesDecoded = 0
        /// Tiles the provider failed to make (none, unless the pyramid is broken).
        var tilesFailed = 0
        /// Visible tiles the composer found in the cache, and those it did not.
        var cacheHits = 0
        var cacheMisses = 0
        /// For each zoom step, the frames until every visible tile was drawn from its own level; nil if never.
        var framesToSharp: [Int?] = []
        /// Frames whose own work took longer than a frame.
        var overrunFrames = 0
        var seconds = 0.0
    }

    let configuration: TiledLayerConfiguration
    let contentSize: PixelSize
    let viewSize: Size2D
    let byteBudget: Int
    /// The pyramid's folder and layout.
    let pyramid: (folder: String, layout: DeepZoomLayout)

    /// Replays `trace` and measures every frame.
    func run(_ trace: [FrameInput]) async -> Result {
        let frameDuration = Duration.nanoseconds(1_000_000_000 / 60)
        let simulatedNow = SimulatedClock()
        let cache = TileCache<DeepZoomTileProvider.Tile>(byteBudget: byteBudget)
        let ledger = MemoryLedger(cacheBytes: { cache.statistics.bytes })
        let provider = DeepZoomTileProvider(
            folder: pyramid.folder, layout: pyramid.layout, scaleShift: PowerOfTwoShift.of(configuration.contentsScale),
            ledger: ledger)
        let scheduler = TileScheduler(provider: provider, cache: cache, clock: { simulatedNow.seconds })
        let layout = TiledLayout(configuration: configuration, contentSize: contentSize)
        let composer = TileComposer(layout: layout)
        let content = Rect2D(x: 0, y: 0, width: Double(contentSize.width), height: Double(contentSize.height))
        var viewport = ScrollViewport(contentSize: contentSize, viewSize: viewSize)

        var result = Result(tileSize: configuration.tileSize.width)
        var sharp: [Bool] = []
        var zoomSteps: [Int] = []
        var warm = false
        ProcessMemory.resetPeak()
        let start = ContinuousClock.now
        for (index, input) in trace.enumerated() {
            let frameStart = ContinuousClock.now
            let now = Double(index) / 60
            simulatedNow.seconds = now
            switch input {
            case .hold: break
            case .zoom(let scale, let focal):
                viewport.zoom(to: scale, around: focal)
                zoomSteps.append(index)
            case .pan(let delta): viewport.pan(by: delta)
            }
            let plan = layout.plan(for: viewport)
            await scheduler.update(plan)
            let drawList = composer.drawList(for: plan, cache: cache, now: now)

            if let visible = viewport.visibleRect.intersection(content) {
                let uncovered = Coverage.uncoveredArea(of: visible, by: drawList.map(\.destinationRect))
                let fraction = uncovered / (visible.size.width * visible.size.height)
                if fraction > 1e-9 {
                    result.uncoveredFrames += 1
                    if warm { result.worstUncoveredFraction = max(result.worstUncoveredFraction, fraction) }
                } else if !warm {
                    warm = true
                    result.warmUpFrames = index
                }
            }
            sharp.append(drawList.count(where: { $0.role == .exact }) == plan.visible.count)
            ledger.sample()

            if ContinuousClock.now - frameStart > frameDuration { result.overrunFrames += 1 }
            try? await Task.sleep(until: frameStart + frameDuration, clock: .continuous)
        }
        result.seconds = seconds(ContinuousClock.now - start)
        // Let what is running finish so the next replay starts on quiet cores.
        await scheduler.update(.empty)
        await scheduler.waitUntilIdle()

        result.frames = trace.count
        result.framesToSharp = zoomSteps.map { step in sharp[step...].firstIndex(of: true).map { $0 - step } }
        let schedulerStatistics = await scheduler.statistics
        (result.tilesDecoded, result.tilesFailed) = (schedulerStatistics.completed, schedulerStatistics.failed)
        let cacheStatistics = cache.statistics
        (result.cacheHits, result.cacheMisses) = (cacheStatistics.hits, cacheStatistics.misses)
        result.peakCacheBytes = cacheStatistics.peakBytes
        (result.peakInFlightBytes, result.peakTotalBytes) = ledger.peaks
        result.peakRSSBytes = ProcessMemory.peakResidentBytes()
        return result
    }
}

/// `log2` of a power-of-two contents scale.
enum PowerOfTwoShift {
    static func of(_ scale: Double) -> Int {
        precondition(scale >= 1 && scale.significand == 1, "the simulation needs a power-of-two contentsScale")
        return Int(scale.exponent)
    }
}

/// The simulated time, in seconds: set by the frame loop, read by the scheduler's tasks as they stamp arrivals.
final class SimulatedClock: Sendable {
    private let now = Mutex(0.0)

    var seconds: Double {
        get { now.withLock { $0 } }
        set { now.withLock { $0 = newValue } }
    }
}
