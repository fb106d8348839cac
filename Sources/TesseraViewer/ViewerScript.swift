import CSDL2
import Foundation
import TesseraTiling

/// A scripted session for `tessera view --script`: steps replayed one after another, then the viewer exits.
///
/// The file is JSON, either a list of steps or `{"fps": 60, "steps": [...]}` (`fps` paces the frames; without it
/// they run as fast as they can). Each step is one object:
/// - `{"view": {"x": 1200, "y": 800, "zoom": 0.5}}` centres the view on content point (x, y) at that zoom;
/// - `{"pan": [dx, dy]}` scrolls by that many screen points;
/// - `{"zoom": 1.1, "at": [x, y]}` multiplies the zoom about a view point (the centre without `at`);
/// - `{"resize": [w, h]}` resizes the window to w x h points;
/// - `{"key": "i"}` presses a key (SDL's name for it: "+", "Left", "Home") through the keyboard handler;
/// - `{"wait": "sharp"}` draws frames until every visible tile is drawn from its own level, fully faded in;
/// - `{"frames": n}` draws n frames with nothing changed;
/// - `{"screenshot": "path.png"}` draws a frame and writes it (any format Tessera writes, by extension).
/// Every step but `wait` and `frames` draws exactly one frame.
public struct ViewerScript: Hashable, Sendable {
    /// One step of a script.
    public enum Step: Hashable, Sendable {
        /// Centre the view on `center` (content points) at `zoom`.
        case view(center: Point2D, zoom: Double)
        /// Scroll by this many screen points.
        case pan(Point2D)
        /// Multiply the zoom by `factor` about `at` (view points), or about the centre.
        case zoom(factor: Double, at: Point2D?)
        /// Resize the window to this many points.
        case resize(PixelSize)
        /// Press the key of this SDL name.
        case key(String)
        /// Draw frames until the view is sharp.
        case waitUntilSharp
        /// Draw this many frames.
        case frames(Int)
        /// Draw a frame and write it to this path.
        case screenshot(String)
    }

    /// The steps, in order.
    public var steps: [Step]
    /// The pace of the frames, in frames per second; nil runs them as fast as they can be drawn.
    public var framesPerSecond: Double?

    /// Reads the script file at `path`.
    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ViewerError.script(path: path, detail: "cannot read the script")
        }
        try self.init(json: Array(data), name: path)
    }

    /// Parses a script; `name` is used in errors.
    public init(json: [UInt8], name: String) throws {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            throw ViewerError.script(path: name, detail: "not valid JSON")
        }
        let list: [Any]
        if let object = root as? [String: Any] {
            guard let steps = object["steps"] as? [Any] else {
                throw ViewerError.script(path: name, detail: "the script object needs a \"steps\" list")
            }
            if let fps = object["fps"] {
                guard let rate = Self.number(fps), rate > 0 else {
                    throw ViewerError.script(path: name, detail: "\"fps\" must be a positive number")
                }
                framesPerSecond = rate
            }
            list = steps
        } else if let steps = root as? [Any] {
            list = steps
        } else {
            throw ViewerError.script(path: name, detail: "a script is a list of steps or an object with \"steps\"")
        }
        steps = try list.enumerated().map { index, step in
            do {
                return try Self.step(step)
            } catch let detail as StepError {
                throw ViewerError.script(path: name, detail: "step \(index + 1): \(detail.message)")
            }
        }
    }

    private struct StepError: Error {
        let message: String
    }

    private static func step(_ value: Any) throws -> Step {
        let verbs = ["view", "pan", "zoom", "resize", "key", "wait", "frames", "screenshot"]
        guard let object = value as? [String: Any], let verb = verbs.first(where: { object[$0] != nil }) else {
            throw StepError(message: "expected an object with one of " + verbs.joined(separator: ", "))
        }
        let argument = object[verb]!
        switch verb {
        case "view":
            guard let view = argument as? [String: Any], let x = view["x"].flatMap(number),
                let y = view["y"].flatMap(number), let zoom = view["zoom"].flatMap(number), zoom > 0
            else { throw StepError(message: "view needs numbers x, y and a positive zoom") }
            return .view(center: Point2D(x: x, y: y), zoom: zoom)
        case "pan":
            return .pan(try pair(argument, "pan needs [dx, dy]"))
        case "zoom":
            guard let factor = number(argument), factor > 0 else {
                throw StepError(message: "zoom needs a positive factor")
            }
            return .zoom(factor: factor, at: try object["at"].map { try pair($0, "at needs [x, y]") })
        case "resize":
            let size = try pair(argument, "resize needs [width, height]")
            guard size.x >= 1, size.y >= 1, size.x <= 16384, size.y <= 16384 else {
                throw StepError(message: "resize needs a size of 1 to 16384 pixels a side")
            }
            return .resize(PixelSize(width: Int(size.x), height: Int(size.y)))
        case "key":
            try SDLLibrary.require()
            guard let name = argument as? String, SDL_GetKeyFromName(name) != keyCode(SDLK_UNKNOWN) else {
                throw StepError(message: "key needs a key's name as SDL spells it (\"i\", \"+\", \"Left\", \"Home\")")
            }
            return .key(name)
        case "wait":
            guard argument as? String == "sharp" else { throw StepError(message: "wait takes \"sharp\"") }
            return .waitUntilSharp
        case "frames":
            guard let count = number(argument), count >= 0, count <= 1_000_000, count == count.rounded() else {
                throw StepError(message: "frames needs a whole number up to 1,000,000")
            }
            return .frames(Int(count))
        default:
            guard let path = argument as? String, !path.isEmpty else {
                throw StepError(message: "screenshot needs a file path")
            }
            return .screenshot(path)
        }
    }

    private static func pair(_ value: Any, _ message: String) throws -> Point2D {
        guard let values = value as? [Any], values.count == 2, let x = number(values[0]), let y = number(values[1]) else {
            throw StepError(message: message)
        }
        return Point2D(x: x, y: y)
    }

    /// A JSON number, as JSONSerialization gives it.
    private static func number(_ value: Any) -> Double? {
        if let double = value as? Double, double.isFinite { return double }
        if let integer = value as? Int { return Double(integer) }
        return nil
    }
}
