import CSDL2
import Foundation
import TesseraTiling

/// The mouse wheel (or a trackpad's scroll) zooms about the pointer, 20% a notch.
struct WheelHandler: InputHandler {
    mutating func handle(_ event: SDL_Event, viewer: Viewer) -> Bool {
        guard event.type == SDL_MOUSEWHEEL.rawValue else { return false }
        var notches = Double(event.wheel.preciseY)
        if event.wheel.direction == SDL_MOUSEWHEEL_FLIPPED.rawValue { notches = -notches }
        viewer.viewport.zoom(to: viewer.viewport.zoomScale * pow(1.2, notches), around: viewer.mousePosition)
        return true
    }
}
