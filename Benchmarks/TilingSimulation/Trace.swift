import Foundation
import TesseraTiling

/// What the user does in one frame.
enum FrameInput {
    /// Nothing: the view stays where it is.
    case hold
    /// A pinch step: zoom to `scale` keeping the content under `focal` (view points) fixed.
    case zoom(scale: Double, focal: Point2D)
    /// A drag or fling step: the offset moves by this many screen points.
    case pan(Point2D)
}

/// The scripted session the simulation replays, frame by frame at 60 frames per second: zoom from fit to the
/// maximum and back about moving focal points, in steps of a few percent a frame; pans at 3, 12 and 40 points a
/// frame; flings that start at 5,400 points a second and decelerate as UIScrollView does (x0.967 a frame); short
/// pinch wobbles; and holds after each gesture so the screen can settle. Deterministic: no randomness at all.
struct Trace {
    private(set) var frames: [FrameInput] = []
    private var zoom: Double
    private let limits: ZoomLimits
    private let view: Size2D
    /// How many times faster than the full script to run (`--quick` uses 4): fewer frames, bigger steps.
    private let speedUp: Double

    /// The scripted session for a view of `view` points over content with zoom limits `limits`.
    static func scripted(view: Size2D, limits: ZoomLimits, speedUp: Int = 1) -> [FrameInput] {
        var trace = Trace(zoom: limits.minimum, limits: limits, view: view, speedUp: Double(speedUp))
        let middle = sqrt(limits.minimum * limits.maximum)
        trace.hold(20)
        // Fit to maximum about a focal point drifting across the view, then look around up close.
        trace.zoom(to: limits.maximum, perFrame: 1.04, from: (0.3, 0.3), to: (0.7, 0.7))
        trace.hold(20)
        trace.pans(directions: [(1, 0), (-0.6, 0.8), (0, -1)])
        // Out to the middle of the range, look around, fling.
        trace.zoom(to: middle, perFrame: 1 / 1.04, from: (0.5, 0.5), to: (0.8, 0.2))
        trace.hold(20)
        trace.pans(directions: [(0, 1), (1, 0.3), (-1, -0.5)])
        trace.fling(direction: (-0.8, 0.6))
        trace.hold(20)
        // Out towards 1:1 of a 1x screen, pinch back and forth three times, pan, fling.
        trace.zoom(to: 0.5, perFrame: 1 / 1.03, from: (0.2, 0.7), to: (0.5, 0.5))
        trace.hold(20)
        for (index, focal) in [(0.25, 0.25), (0.75, 0.5), (0.4, 0.8)].enumerated() {
            trace.zoom(to: 4, perFrame: 1.05, from: focal, to: (0.5, 0.5))
            trace.zoom(to: 0.5, perFrame: 1 / 1.05, from: (0.5, 0.5), to: focal)
            trace.hold(index == 2 ? 20 : 5)
        }
        trace.pans(directions: [(0.7, 0.7), (-1, 0), (0.2, -1)])
        trace.fling(direction: (1, 0.2))
        trace.hold(20)
        // Back out to fit, panning on the way.
        trace.zoom(to: limits.minimum, perFrame: 1 / 1.04, from: (0.5, 0.5), to: (0.1, 0.9))
        trace.hold(30)
        // A second dive elsewhere, slower in and faster out, with a fling at the bottom.
        trace.zoom(to: limits.maximum, perFrame: 1.03, from: (0.9, 0.1), to: (0.2, 0.6))
        trace.hold(20)
        trace.pans(directions: [(-1, 0.2), (0.5, 1), (1, -0.4)])
        trace.fling(direction: (0.6, -0.8))
        trace.hold(20)
        trace.zoom(to: limits.minimum, perFrame: 1 / 1.06, from: (0.6, 0.4), to: (0.5, 0.5))
        trace.hold(30)
        return trace.frames
    }

    private mutating func hold(_ frames: Int) {
        self.frames += Array(repeating: .hold, count: max(1, Int(Double(frames) / speedUp)))
    }

    /// Zooms by `perFrame` each frame until `target`, the focal point moving from `from` to `to` (fractions of
    /// the view).
    private mutating func zoom(
        to target: Double, perFrame: Double, from: (Double, Double), to: (Double, Double)
    ) {
        let target = limits.clamp(target)
        let step = pow(perFrame, speedUp)
        let count = max(1, Int((log(target / zoom) / log(step)).rounded(.up)))
        for index in 1...count {
            let t = Double(index) / Double(count)
            zoom = index == count ? target : zoom * step
            let focal = Point2D(
                x: view.width * (from.0 + (to.0 - from.0) * t), y: view.height * (from.1 + (to.1 - from.1) * t))
            frames.append(.zoom(scale: zoom, focal: focal))
        }
    }

    /// A slow, a medium and a fast drag (3, 12 and 40 points a frame), one along each direction.
    private mutating func pans(directions: [(Double, Double)]) {
        for (direction, (speed, duration)) in zip(directions, [(3.0, 90.0), (12, 90), (40, 60)]) {
            let length = (direction.0 * direction.0 + direction.1 * direction.1).squareRoot()
            let delta = Point2D(
                x: direction.0 / length * speed * speedUp, y: direction.1 / length * speed * speedUp)
            frames += Array(repeating: .pan(delta), count: Int(duration / speedUp))
            hold(10)
        }
    }

    /// A fling: 90 points a frame (5,400 a second), decelerating by 0.967 a frame until under a third of a point.
    private mutating func fling(direction: (Double, Double)) {
        let length = (direction.0 * direction.0 + direction.1 * direction.1).squareRoot()
        var speed = 90.0
        while speed > 1.0 / 3 {
            frames.append(.pan(Point2D(x: direction.0 / length * speed, y: direction.1 / length * speed)))
            speed *= pow(0.967, speedUp)
        }
    }
}
