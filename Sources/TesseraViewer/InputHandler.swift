import CSDL2
import TesseraTiling

/// One kind of user input (drag, wheel, pinch, keys), turned into changes of the viewer's viewport, as
/// Leaflet's handlers are: one per file, each small.
protocol InputHandler {
    /// Handles `event` if it is this handler's kind; returns whether it did (later handlers then skip it).
    mutating func handle(_ event: SDL_Event, viewer: Viewer) -> Bool
}

extension Viewer {
    /// The centre of the view, in view points.
    var viewCentre: Point2D { Point2D(x: viewport.viewSize.width / 2, y: viewport.viewSize.height / 2) }

    /// The mouse position, in view points.
    var mousePosition: Point2D {
        var x: Int32 = 0, y: Int32 = 0
        SDL_GetMouseState(&x, &y)
        return Point2D(x: Double(x), y: Double(y))
    }
}

/// An SDL key code as the `sym` of a key event.
func keyCode(_ key: SDL_KeyCode) -> SDL_Keycode { SDL_Keycode(bitPattern: key.rawValue) }
