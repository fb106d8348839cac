import CSDL2
import TesseraTiling

/// Keys: arrows pan by a tenth of the view, `+` and `-` zoom twice about the centre, `0` or Home fits the image,
/// `f` toggles full screen, `i` the overlay, `q` or Escape quits.
struct KeyboardHandler: InputHandler {
    mutating func handle(_ event: SDL_Event, viewer: Viewer) -> Bool {
        guard event.type == SDL_KEYDOWN.rawValue else { return false }
        let size = viewer.viewport.viewSize
        switch event.key.keysym.sym {
        case keyCode(SDLK_LEFT): viewer.viewport.pan(by: Point2D(x: -size.width / 10, y: 0))
        case keyCode(SDLK_RIGHT): viewer.viewport.pan(by: Point2D(x: size.width / 10, y: 0))
        case keyCode(SDLK_UP): viewer.viewport.pan(by: Point2D(x: 0, y: -size.height / 10))
        case keyCode(SDLK_DOWN): viewer.viewport.pan(by: Point2D(x: 0, y: size.height / 10))
        case keyCode(SDLK_PLUS), keyCode(SDLK_EQUALS), keyCode(SDLK_KP_PLUS):
            viewer.viewport.zoom(to: viewer.viewport.zoomScale * 2, around: viewer.viewCentre)
        case keyCode(SDLK_MINUS), keyCode(SDLK_KP_MINUS):
            viewer.viewport.zoom(to: viewer.viewport.zoomScale / 2, around: viewer.viewCentre)
        case keyCode(SDLK_0), keyCode(SDLK_KP_0), keyCode(SDLK_HOME):
            viewer.viewport.zoom(to: viewer.viewport.zoomLimits.minimum, around: viewer.viewCentre)
        case keyCode(SDLK_f): viewer.window.toggleFullScreen()
        case keyCode(SDLK_i): viewer.showsOverlay.toggle()
        case keyCode(SDLK_q), keyCode(SDLK_ESCAPE): viewer.quitRequested = true
        default: return false
        }
        return true
    }
}
