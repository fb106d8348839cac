import CSDL2
import TesseraTiling

/// Drags with the left mouse button (or one finger, which SDL turns into mouse events) pan the view.
struct DragHandler: InputHandler {
    private var isDragging = false

    mutating func handle(_ event: SDL_Event, viewer: Viewer) -> Bool {
        switch event.type {
        case SDL_MOUSEBUTTONDOWN.rawValue where Int32(event.button.button) == SDL_BUTTON_LEFT:
            isDragging = true
            return true
        case SDL_MOUSEBUTTONUP.rawValue where Int32(event.button.button) == SDL_BUTTON_LEFT:
            isDragging = false
            return true
        case SDL_MOUSEMOTION.rawValue where isDragging:
            // The content follows the pointer: the offset moves the other way.
            viewer.viewport.pan(by: Point2D(x: -Double(event.motion.xrel), y: -Double(event.motion.yrel)))
            return true
        default:
            return false
        }
    }
}
