import CSDL2Shims
import Tessera

/// libSDL2, opened on the first SDL call (CSDL2Shims) rather than linked, so only `tessera view` loads it.
enum SDLLibrary {
    /// Opens libSDL2 unless done already; call it before the first SDL function. Throws
    /// `TesseraError.missingLibrary` naming the library and its package when it cannot be loaded.
    static func require() throws {
        if let failure = tessera_sdl_load() {
            throw TesseraError.missingLibrary(detail: String(cString: failure), purpose: "the native viewer needs SDL2",
                                              package: "libsdl2-2.0-0")
        }
    }
}
