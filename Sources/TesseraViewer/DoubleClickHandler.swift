import CSDL2
import TesseraTiling

/// A double click zooms in twice about the pointer, as PhotoScroller's double tap does; at the maximum zoom it
/// goes back to fitting the whole image.
struct DoubleClickHandler: InputHandler {
    mutating func handle(_ event: SDL_Event, viewer: Viewer) -> Bool {
        guard event.type == SDL_MOUSEBUTTONDOWN.rawValue, Int32(event.button.button) == SDL_BUTTON_LEFT,
            event.button.clicks == 2
        else { return false }
        let limits = viewer.viewport.zoomLimits
        let point = Point2D(x: Double(event.button.x), y: Double(event.button.y))
        if viewer.viewport.zoomScale >= limits.maximum * 0.999 {
            viewer.viewport.zoom(to: limits.minimum, around: point)
        } else {
            viewer.viewport.zoom(to: viewer.viewport.zoomScale * 2, around: point)
        }
        return true
    }
}
