import CSDL2
import TesseraTiling

/// Two-finger pinches on a touch screen or trackpad (SDL's multigesture events) zoom about the fingers' centre.
struct PinchHandler: InputHandler {
    mutating func handle(_ event: SDL_Event, viewer: Viewer) -> Bool {
        guard event.type == SDL_MULTIGESTURE.rawValue, event.mgesture.numFingers >= 2 else { return false }
        // dDist is the change of the fingers' spread in normalised device units (1 is the device's size):
        // spreading by a tenth of the device zooms by about a third.
        let factor = max(0.5, min(2, 1 + 3 * Double(event.mgesture.dDist)))
        let size = viewer.viewport.viewSize
        let centre = Point2D(x: Double(event.mgesture.x) * size.width, y: Double(event.mgesture.y) * size.height)
        viewer.viewport.zoom(to: viewer.viewport.zoomScale * factor, around: centre)
        return true
    }
}
