import CSDL2
import Tessera
import TesseraTiling

/// The SDL window and renderer the viewer draws into: an accelerated renderer with vsync when there is one,
/// the software renderer otherwise (under Xvfb), textures from RGBA tiles, and screenshots.
///
/// SDL is not thread-safe: every method runs on the thread that made the window.
final class SDLWindow {
    let window: OpaquePointer
    let renderer: OpaquePointer
    /// The renderer SDL picked ("opengl", "software", ...).
    let rendererName: String
    /// Whether presenting waits for the display's refresh.
    let hasVSync: Bool
    /// SDL's video driver ("x11", "wayland", ... or "offscreen" and "dummy", which show nothing).
    let videoDriver: String

    /// Opens a resizable, HiDPI-aware window of `size` points titled `title`; `software` skips the GPU.
    init(title: String, size: PixelSize, software: Bool) throws {
        try SDLLibrary.require()
        guard SDL_Init(SDL_INIT_VIDEO) == 0 else { throw ViewerError.sdl("cannot start video: \(Self.lastError)") }
        // Bilinear filtering when tiles are magnified or minified, and keep running in the background.
        SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "1")
        SDL_SetHint(SDL_HINT_VIDEO_MINIMIZE_ON_FOCUS_LOSS, "0")
        let flags = SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_ALLOW_HIGHDPI.rawValue | SDL_WINDOW_SHOWN.rawValue
        let centred = Int32(bitPattern: 0x2FFF_0000)  // SDL_WINDOWPOS_CENTERED, a macro Swift cannot import
        guard let window = SDL_CreateWindow(title, centred, centred, Int32(size.width), Int32(size.height), flags) else {
            let message = Self.lastError
            SDL_Quit()
            throw ViewerError.sdl("cannot open a window: \(message)")
        }
        let accelerated = SDL_RENDERER_ACCELERATED.rawValue | SDL_RENDERER_PRESENTVSYNC.rawValue
        guard let renderer = (software ? nil : SDL_CreateRenderer(window, -1, accelerated)) ?? Self.softwareRenderer(window)
        else {
            let message = Self.lastError
            SDL_DestroyWindow(window)
            SDL_Quit()
            throw ViewerError.sdl("cannot make a renderer: \(message)")
        }
        var info = SDL_RendererInfo()
        SDL_GetRendererInfo(renderer, &info)
        self.window = window
        self.renderer = renderer
        rendererName = info.name.map { String(cString: $0) } ?? "unknown"
        hasVSync = info.flags & SDL_RENDERER_PRESENTVSYNC.rawValue != 0
        videoDriver = SDL_GetCurrentVideoDriver().map { String(cString: $0) } ?? "unknown"
        SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
    }

    /// SDL's software renderer on `window`, its frames copied to the display as they are. Otherwise SDL decides how
    /// to show the window's surface by making an OpenGL context and asking its vendor, which loads Mesa and LLVM
    /// (60 MB of resident memory) only to copy the surface the plain way in the end.
    private static func softwareRenderer(_ window: OpaquePointer) -> OpaquePointer? {
        SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0")
        return SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue)
    }

    deinit {
        SDL_DestroyRenderer(renderer)
        SDL_DestroyWindow(window)
        SDL_Quit()
    }

    /// Whether the window is shown on a screen: SDL falls back to drivers that draw off screen when there is
    /// no display, which serve scripts but not a person.
    var isOnScreen: Bool { !["offscreen", "dummy", "evdev"].contains(videoDriver) }

    /// SDL's message for the last failure.
    static var lastError: String { String(cString: SDL_GetError()) }

    /// The window's size in points (what input events report).
    var sizeInPoints: Size2D {
        var width: Int32 = 0, height: Int32 = 0
        SDL_GetWindowSize(window, &width, &height)
        return Size2D(width: Double(max(1, width)), height: Double(max(1, height)))
    }

    /// The drawable's size in pixels: larger than the size in points on a HiDPI display.
    var sizeInPixels: PixelSize {
        var width: Int32 = 0, height: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &width, &height)
        return PixelSize(width: Int(max(1, width)), height: Int(max(1, height)))
    }

    /// Pixels per point: the drawable's width over the window's.
    var pixelsPerPoint: Double { Double(sizeInPixels.width) / sizeInPoints.width }

    /// Switches between a window and the full screen.
    func toggleFullScreen() {
        let isFull = SDL_GetWindowFlags(window) & SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue != 0
        SDL_SetWindowFullscreen(window, isFull ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue)
    }

    /// Clears the frame to `gray` (0-255).
    func clear(gray: UInt8) {
        SDL_SetRenderDrawColor(renderer, gray, gray, gray, 255)
        SDL_RenderClear(renderer)
    }

    /// A static texture holding `pixels` (RGBA); nil if SDL cannot make it.
    func makeTexture(_ pixels: ImageBuffer) -> OpaquePointer? {
        guard let texture = SDL_CreateTexture(renderer, SDL_PIXELFORMAT_RGBA32.rawValue,
                                              Int32(SDL_TEXTUREACCESS_STATIC.rawValue),
                                              Int32(pixels.width), Int32(pixels.height))
        else { return nil }
        pixels.bytes.withUnsafeBytes { _ = SDL_UpdateTexture(texture, nil, $0.baseAddress, Int32(pixels.bytesPerRow)) }
        return texture
    }

    /// Destroys a texture made by `makeTexture(_:)`.
    func destroy(_ texture: OpaquePointer) {
        SDL_DestroyTexture(texture)
    }

    /// Copies `source` (texture pixels) of `texture` to `destination` (drawable pixels) at `alpha` (0-1),
    /// blending unless `blends` is false (an opaque tile fully faded in, which is cheaper to copy).
    func draw(_ texture: OpaquePointer, source: SDL_Rect, destination: SDL_FRect, alpha: Double, blends: Bool) {
        SDL_SetTextureBlendMode(texture, blends ? SDL_BLENDMODE_BLEND : SDL_BLENDMODE_NONE)
        SDL_SetTextureAlphaMod(texture, UInt8((alpha * 255).rounded()))
        var source = source, destination = destination
        SDL_RenderCopyF(renderer, texture, &source, &destination)
    }

    /// Fills `rects` (drawable pixels) with a colour.
    func fill(_ rects: [SDL_Rect], red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        SDL_SetRenderDrawColor(renderer, red, green, blue, alpha)
        rects.withUnsafeBufferPointer { _ = SDL_RenderFillRects(renderer, $0.baseAddress, Int32($0.count)) }
    }

    /// The frame drawn so far (call before `present()`), as RGB pixels.
    func readPixels() throws -> ImageBuffer {
        let size = sizeInPixels
        var image = ImageBuffer(width: size.width, height: size.height, format: .rgb8)
        let pitch = Int32(image.bytesPerRow)
        let status = image.bytes.withUnsafeMutableBytes {
            SDL_RenderReadPixels(renderer, nil, SDL_PIXELFORMAT_RGB24.rawValue, $0.baseAddress, pitch)
        }
        guard status == 0 else { throw ViewerError.sdl("cannot read the frame's pixels: \(Self.lastError)") }
        return image
    }

    /// Shows the frame.
    func present() {
        SDL_RenderPresent(renderer)
    }
}
