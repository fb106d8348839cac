import Synchronization
import Tessera
import TesseraTiling

/// An SDL texture pointer, passed between threads only to be destroyed on the thread that renders.
struct TextureHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A cached tile: its RGBA pixels until the renderer first draws it, then the GPU texture made from them (the
/// pixels are dropped). When the tile leaves the `TileCache` and the last frame drawing it is done, its texture
/// goes to the `TextureLedger` to be destroyed on the render thread, so GPU textures follow the cache's budget.
public final class TileImage: Sendable {
    private enum State: Sendable {
        case pixels(ImageBuffer)
        case texture(TextureHandle)
        case failed
    }

    /// The tile's size, in pixels.
    public let size: PixelSize
    /// Whether every pixel is opaque (the source had no alpha): drawn fully faded in, it needs no blending.
    public let isOpaque: Bool
    private let state: Mutex<State>
    private let ledger: TextureLedger

    /// A tile of RGBA pixels (`pixels.format` must be `.rgba8`), opaque or not, whose texture `ledger` will
    /// account for.
    init(pixels: ImageBuffer, isOpaque: Bool, ledger: TextureLedger) {
        precondition(pixels.format == .rgba8, "tiles are uploaded as RGBA, got \(pixels.format)")
        size = PixelSize(width: pixels.width, height: pixels.height)
        self.isOpaque = isOpaque
        state = Mutex(.pixels(pixels))
        self.ledger = ledger
    }

    /// What the tile occupies, in bytes: 4 a pixel, in memory or on the GPU.
    public var bytes: Int { size.width * size.height * 4 }

    /// The tile's texture, made with `upload` from its pixels the first time; nil if that failed.
    func texture(upload: (ImageBuffer) -> OpaquePointer?) -> OpaquePointer? {
        state.withLock { state in
            switch state {
            case .texture(let handle):
                return handle.pointer
            case .failed:
                return nil
            case .pixels(let pixels):
                guard let texture = upload(pixels) else {
                    state = .failed
                    return nil
                }
                state = .texture(TextureHandle(pointer: texture))
                ledger.created(bytes: bytes)
                return texture
            }
        }
    }

    deinit {
        let bytes = self.bytes
        state.withLock { state in
            if case .texture(let handle) = state { ledger.bury(handle, bytes: bytes) }
        }
    }
}

/// The textures alive and those waiting to be destroyed: a texture may only be destroyed on the render thread,
/// while tiles leave the cache on any thread.
public final class TextureLedger: Sendable {
    private struct State {
        var buried: [TextureHandle] = []
        var liveBytes = 0
        var peakBytes = 0
    }

    private let state = Mutex(State())

    /// An empty ledger.
    public init() {}

    /// A texture of `bytes` was made.
    func created(bytes: Int) {
        state.withLock { state in
            state.liveBytes += bytes
            state.peakBytes = max(state.peakBytes, state.liveBytes)
        }
    }

    /// A texture of `bytes` is no longer used: destroy it at the next `takeBuried()`.
    func bury(_ texture: TextureHandle, bytes: Int) {
        state.withLock { state in
            state.buried.append(texture)
            state.liveBytes -= bytes
        }
    }

    /// The textures to destroy now, on the render thread.
    func takeBuried() -> [TextureHandle] {
        state.withLock { state in
            defer { state.buried.removeAll() }
            return state.buried
        }
    }

    /// The bytes of the textures alive (made and not yet given up), and the most there have been at once.
    public var bytes: (live: Int, peak: Int) {
        state.withLock { ($0.liveBytes, $0.peakBytes) }
    }
}
