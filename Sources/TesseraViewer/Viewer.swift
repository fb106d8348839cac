import CSDL2
import Foundation
import Tessera
import TesseraTiling

/// The native viewer: an SDL window showing a `TileSource` through TesseraTiling, one texture per tile.
///
/// ```
/// input -> viewport -> TiledLayout.plan -> SchedulerUpdates -> TileScheduler -> ViewerTileProvider (background)
///                                                                            -> TileCache<TileImage>
///          frame: plan + cache -> TileComposer.drawList -> textures (made on first draw) -> SDL renderer
/// ```
///
/// Everything here runs on the thread that made it (SDL's rule); tiles are made on the scheduler's tasks.
public final class Viewer {
    /// How the viewer is set up.
    public struct Configuration: Sendable {
        /// The window's size, in points.
        public var windowSize = PixelSize(width: 1024, height: 768)
        /// The tile cache's budget, in bytes; the tiles' textures follow it.
        public var cacheBytes = 256 << 20
        /// Use SDL's software renderer even when a GPU one exists.
        public var software = false
        /// Tiles made at once.
        public var concurrency = TileScheduler<ViewerTileProvider>.Configuration.defaultConcurrency
        /// The window's title.
        public var title = "tessera view"

        /// The defaults: 1024 x 768 points, 256 MiB of tiles, the best renderer.
        public init() {}
    }

    let window: SDLWindow
    let provider: ViewerTileProvider
    let layout: TiledLayout
    let cache: TileCache<TileImage>
    let scheduler: TileScheduler<ViewerTileProvider>
    let updates: SchedulerUpdates
    let ledger: TextureLedger
    private let composer: TileComposer
    private let wakeEventType: UInt32
    /// The scroll model; input handlers change it.
    var viewport: ScrollViewport
    /// Whether the overlay is shown (`i`).
    var showsOverlay = false
    /// Set when the user asks to quit.
    var quitRequested = false
    private var handlers: [any InputHandler] = [
        DoubleClickHandler(), DragHandler(), WheelHandler(), PinchHandler(), KeyboardHandler(),
    ]
    private var overlay = Overlay()
    /// What the last frame showed.
    private(set) var lastFrame = FrameSummary()

    /// Opens a window on `source`, fitted.
    public init(source: any TileSource, configuration: Configuration = Configuration()) throws {
        window = try SDLWindow(title: configuration.title, size: configuration.windowSize,
                               software: configuration.software)
        ledger = TextureLedger()
        // Pyramid levels are powers of two, so the tiles are cut for the nearest power-of-two density.
        let scaleShift = max(0, Int(log2(window.pixelsPerPoint).rounded()))
        provider = ViewerTileProvider(source: source, scaleShift: scaleShift, ledger: ledger)
        layout = TiledLayout(configuration: provider.configuration, contentSize: source.contentSize)
        composer = TileComposer(layout: layout)
        cache = TileCache(byteBudget: configuration.cacheBytes)
        let wake = SDL_RegisterEvents(1)
        wakeEventType = wake
        scheduler = TileScheduler(
            provider: provider, cache: cache,
            configuration: .init(maxConcurrentTiles: configuration.concurrency),
            onArrival: { _ in
                var event = SDL_Event()
                event.type = wake
                SDL_PushEvent(&event)
            })
        updates = SchedulerUpdates(scheduler: scheduler)
        viewport = ScrollViewport(contentSize: source.contentSize, viewSize: window.sizeInPoints)
    }

    /// Stops the tile work and destroys every texture; call before dropping the viewer.
    public func close() {
        let updates = self.updates
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await updates.finish()
            done.signal()
        }
        done.wait()
        cache.removeAll()
        lastFrame = FrameSummary()
        destroyBuriedTextures()
    }

    // MARK: - Interactive

    /// Asks the viewer to quit, from any thread (a signal handler): posts SDL's quit event.
    public static func requestQuit() {
        var event = SDL_Event()
        event.type = SDL_QUIT.rawValue
        SDL_PushEvent(&event)
    }

    /// Shows the image until the window is closed (or `q`, Escape), redrawing only when something changed,
    /// a tile arrived or a fade is running. Throws when there is no screen to show it on.
    public func run() throws {
        guard window.isOnScreen else {
            throw ViewerError.sdl("no display to show a window on (SDL's \(window.videoDriver) driver); "
                + "set DISPLAY or WAYLAND_DISPLAY, or run under xvfb-run with --script")
        }
        var needsFrame = true
        var event = SDL_Event()
        while !quitRequested {
            let animating = needsFrame || lastFrame.isFading || !lastFrame.isSharp || showsOverlay
            if SDL_WaitEventTimeout(&event, animating ? 1 : 250) != 0 {
                handle(event)
                while SDL_PollEvent(&event) != 0 { handle(event) }
                needsFrame = true
            }
            guard !quitRequested, animating || needsFrame else { continue }
            let start = ContinuousClock.now
            do {
                try drawFrame()
            } catch {
                FileHandle.standardError.write(Data("tessera: \(error)\n".utf8))
            }
            window.present()
            needsFrame = false
            if !window.hasVSync { Thread.sleep(until: start, plus: 1.0 / 60) }
        }
    }

    /// Routes one event to the window logic and the input handlers.
    func handle(_ event: SDL_Event) {
        switch event.type {
        case SDL_QUIT.rawValue:
            quitRequested = true
        case SDL_WINDOWEVENT.rawValue where UInt32(event.window.event) == SDL_WINDOWEVENT_SIZE_CHANGED.rawValue:
            // PhotoScroller keeps the centre and the zoom across a rotation; a resize is the same.
            viewport.resize(to: window.sizeInPoints)
        default:
            for index in handlers.indices where handlers[index].handle(event, viewer: self) { break }
        }
    }

    // MARK: - Frames

    /// Draws one frame into the back buffer (not presented): tiles, placeholders, then the overlay.
    func drawFrame() throws {
        destroyBuriedTextures()
        let plan = layout.plan(for: viewport)
        updates.submit(plan)
        let drawList = composer.drawList(for: plan, cache: cache, now: scheduler.clock())
        window.clear(gray: 24)
        let ratio = window.pixelsPerPoint
        for command in drawList {
            guard let texture = command.tile.texture(upload: window.makeTexture) else { continue }
            let (source, destination) = Self.placement(of: command, viewport: viewport, pixelsPerPoint: ratio)
            window.draw(texture, source: source, destination: destination, alpha: command.alpha,
                        blends: command.alpha < 1 || !command.tile.isOpaque)
        }
        let exact = Set(drawList.lazy.filter { $0.role == .exact && $0.alpha >= 1 }.map(\.key))
        lastFrame = FrameSummary(
            plan: plan, isSharp: plan.visible.allSatisfy { exact.contains($0.key) },
            isFading: drawList.contains { $0.alpha < 1 },
            pinnedBytes: (plan.visible + plan.backstop).reduce(0) { $0 + $1.pixelSize.width * $1.pixelSize.height * 4 })
        overlay.countFrame()
        if showsOverlay {
            overlay.draw(lines: overlayLines(), in: window)
        }
    }

    /// Where a draw command goes: whole texture pixels (a fractional crop widened to whole pixels, its
    /// destination widened to match), and the destination in drawable pixels, its edges rounded so that
    /// neighbouring tiles meet without seams or overlaps.
    static func placement(of command: TileDrawCommand<TileImage>, viewport: ScrollViewport, pixelsPerPoint: Double)
        -> (source: SDL_Rect, destination: SDL_FRect)
    {
        let crop = command.sourceRect, target = command.destinationRect
        let size = command.tile.size
        let left = max(0, crop.minX.rounded(.down)), top = max(0, crop.minY.rounded(.down))
        let right = min(Double(size.width), crop.maxX.rounded(.up))
        let bottom = min(Double(size.height), crop.maxY.rounded(.up))
        let pointsPerPixelX = target.size.width / crop.size.width
        let pointsPerPixelY = target.size.height / crop.size.height
        func screenX(_ content: Double) -> Double {
            ((content * viewport.zoomScale - viewport.contentOffset.x) * pixelsPerPoint).rounded()
        }
        func screenY(_ content: Double) -> Double {
            ((content * viewport.zoomScale - viewport.contentOffset.y) * pixelsPerPoint).rounded()
        }
        let x0 = screenX(target.minX + (left - crop.minX) * pointsPerPixelX)
        let x1 = screenX(target.minX + (right - crop.minX) * pointsPerPixelX)
        let y0 = screenY(target.minY + (top - crop.minY) * pointsPerPixelY)
        let y1 = screenY(target.minY + (bottom - crop.minY) * pointsPerPixelY)
        return (
            SDL_Rect(x: Int32(left), y: Int32(top), w: Int32(right - left), h: Int32(bottom - top)),
            SDL_FRect(x: Float(x0), y: Float(y0), w: Float(x1 - x0), h: Float(y1 - y0))
        )
    }

    private func destroyBuriedTextures() {
        for texture in ledger.takeBuried() { window.destroy(texture.pointer) }
    }

    private func overlayLines() -> [String] {
        let statistics = cache.statistics
        let level = lastFrame.plan.level
        let density = level.map {
            $0.pixelsPerPoint >= 1 ? "\(Int($0.pixelsPerPoint))x" : "1/\(Int(1 / $0.pixelsPerPoint))x"
        }
        return [
            "level \(level.map { String($0.level) } ?? "-") (\(density ?? "-"))  zoom \(viewport.zoomScale.fixed(3))",
            "tiles \(lastFrame.plan.visible.count) visible  \(lastFrame.plan.prefetch.count) prefetch",
            "cache \(mebibytes(statistics.bytes)) of \(mebibytes(cache.byteBudget)) MiB  \(statistics.count) tiles",
            "textures \(mebibytes(ledger.bytes.live)) MiB",
            "in flight \(updates.load.running)  queued \(updates.load.queued)",
            "fps \(overlay.framesPerSecond.fixed(1))",
        ]
    }

    private func mebibytes(_ bytes: Int) -> String { (Double(bytes) / 1_048_576).fixed(1) }
}

/// What one frame showed: its plan, whether every visible tile was drawn from its own level fully faded in,
/// whether a fade was running, and the bytes of the tiles the cache must keep for it.
struct FrameSummary {
    var plan = TilePlan.empty
    var isSharp = false
    var isFading = false
    var pinnedBytes = 0
}

extension Double {
    /// The number with `digits` decimals.
    func fixed(_ digits: Int) -> String { String(format: "%.\(digits)f", self) }
}

extension Thread {
    /// Sleeps until `seconds` after `start`, if that is still ahead.
    static func sleep(until start: ContinuousClock.Instant, plus seconds: Double) {
        let deadline = start + .nanoseconds(Int64(seconds * 1e9))
        let remaining = deadline - ContinuousClock.now
        if remaining > .zero {
            let parts = remaining.components
            Thread.sleep(forTimeInterval: Double(parts.seconds) + Double(parts.attoseconds) * 1e-18)
        }
    }
}
