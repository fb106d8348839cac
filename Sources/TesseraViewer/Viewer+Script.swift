import CSDL2
import Foundation
import Tessera
import TesseraTiling

extension Viewer {
    /// Replays `script`, writing its screenshots, and returns what it measured. A `wait` gives up after
    /// `waitTimeout` seconds with an error naming the last tile that failed, if any.
    public func run(script: ViewerScript, waitTimeout: Double = 60) throws -> FrameReport {
        var replay = Replay(viewer: self, pace: script.framesPerSecond)
        let start = ContinuousClock.now
        for step in script.steps where !quitRequested {
            switch step {
            case let .view(center, zoom):
                viewport.zoom(to: zoom)
                viewport.scroll(to: Point2D(x: center.x * viewport.zoomScale - viewport.viewSize.width / 2,
                                            y: center.y * viewport.zoomScale - viewport.viewSize.height / 2))
                try replay.frame()
            case .pan(let delta):
                viewport.pan(by: delta)
                try replay.frame()
            case let .zoom(factor, at):
                viewport.zoom(to: viewport.zoomScale * factor, around: at ?? viewCentre)
                try replay.frame()
            case .resize(let size):
                SDL_SetWindowSize(window.window, Int32(size.width), Int32(size.height))
                viewport.resize(to: window.sizeInPoints)
                try replay.frame()
            case .key(let name):
                var event = SDL_Event()
                event.type = SDL_KEYDOWN.rawValue
                event.key.keysym.sym = SDL_GetKeyFromName(name)
                handle(event)
                try replay.frame()
            case .frames(let count):
                for _ in 0..<count { try replay.frame() }
            case .waitUntilSharp:
                let deadline = ContinuousClock.now + .milliseconds(Int64(waitTimeout * 1000))
                repeat {
                    // Waiting frames leave the cores to the decoders: at most 60 a second.
                    try replay.frame(minimumSeconds: 1.0 / 60)
                    if ContinuousClock.now > deadline {
                        throw ViewerError.timeout("the view did not become sharp within \(Int(waitTimeout)) s"
                            + (provider.failure.map { "; last tile error: \($0)" } ?? ""))
                    }
                } while !lastFrame.isSharp && !quitRequested
            case .screenshot(let path):
                try replay.frame(screenshot: path)
            }
        }
        var report = replay.report
        report.setFrameTimes(replay.times)
        let elapsed = (ContinuousClock.now - start).components
        report.seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
        report.cacheBudgetBytes = cache.byteBudget
        report.peakCacheBytes = cache.statistics.peakBytes
        report.peakTextureBytes = ledger.bytes.peak
        report.textureBytesAtEnd = ledger.bytes.live
        let counts = updates.statistics
        report.tilesMade = counts?.completed ?? 0
        report.tilesFailed = counts?.failed ?? 0
        report.peakRSSBytes = ProcessMemory.peakResidentBytes()
        report.videoDriver = window.videoDriver
        report.renderer = window.rendererName
        report.vsync = window.hasVSync
        report.contentsScale = layout.configuration.contentsScale
        return report
    }
}

/// The frame loop of a scripted run: events pumped, frames drawn, timed and paced, memory sampled.
private struct Replay {
    let viewer: Viewer
    let pace: Double?
    var times: [Double] = []
    var report = FrameReport()

    init(viewer: Viewer, pace: Double?) {
        self.viewer = viewer
        self.pace = pace
    }

    /// Draws and presents one frame, after handling pending events (closing the window ends the script);
    /// writes it to `screenshot` first if given; then sleeps out the pace, or `minimumSeconds`.
    mutating func frame(screenshot: String? = nil, minimumSeconds: Double = 0) throws {
        var event = SDL_Event()
        while SDL_PollEvent(&event) != 0 {
            if event.type == SDL_QUIT.rawValue { viewer.quitRequested = true }
            if event.type == SDL_WINDOWEVENT.rawValue,
                UInt32(event.window.event) == SDL_WINDOWEVENT_SIZE_CHANGED.rawValue
            {
                viewer.viewport.resize(to: viewer.window.sizeInPoints)
            }
        }
        let start = ContinuousClock.now
        try viewer.drawFrame()
        let pixels = try screenshot.map { _ in try viewer.window.readPixels() }
        viewer.window.present()
        let elapsed = (ContinuousClock.now - start).components
        times.append(Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18)
        // Encoding the screenshot is the script's work, not the frame's.
        if let screenshot, let pixels {
            try ImageWriter.write(BufferReader(pixels), to: screenshot)
        }
        let cache = viewer.cache.statistics
        report.peakCacheAndReservedBytes = max(report.peakCacheAndReservedBytes, cache.bytes + cache.reservedBytes)
        report.peakPinnedBytes = max(report.peakPinnedBytes, viewer.lastFrame.pinnedBytes)
        Thread.sleep(until: start, plus: max(minimumSeconds, pace.map { 1 / $0 } ?? 0))
    }
}
