// Small value types for the engine's geometry: integer pixel sizes for tiles and images, and Double points for
// view geometry. They are separate from Tessera's `Size`/`Rect` so that this module needs nothing else.

/// A width and height in whole pixels: a tile's size, or an image's size (one image pixel is one point at zoom 1).
public struct PixelSize: Hashable, Sendable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Makes a size of `width` x `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// "WxH", for messages.
    public var description: String { "\(width)x\(height)" }
}

/// A position in points (Double), in view or content coordinates as the API using it says.
public struct Point2D: Hashable, Sendable, CustomStringConvertible {
    /// Horizontal position in points, growing rightwards.
    public var x: Double
    /// Vertical position in points, growing downwards.
    public var y: Double

    /// Makes the point (`x`, `y`), in points.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The origin, (0, 0).
    public static let zero = Point2D(x: 0, y: 0)

    /// "(x, y)", for messages.
    public var description: String { "(\(x), \(y))" }
}

/// A width and height in points (Double).
public struct Size2D: Hashable, Sendable, CustomStringConvertible {
    /// Width in points.
    public var width: Double
    /// Height in points.
    public var height: Double

    /// Makes a size of `width` x `height` points.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// "WxH", for messages.
    public var description: String { "\(width)x\(height)" }
}

/// An axis-aligned rectangle in points (Double), or in pixels where the API using it says so: origin at the top
/// left, width and height never negative.
public struct Rect2D: Hashable, Sendable, CustomStringConvertible {
    /// The top-left corner, in points.
    public var origin: Point2D
    /// The extent, in points.
    public var size: Size2D

    /// Makes the rectangle at (`x`, `y`) of `width` x `height` points.
    public init(x: Double, y: Double, width: Double, height: Double) {
        origin = Point2D(x: x, y: y)
        size = Size2D(width: width, height: height)
    }

    /// Left edge, in points.
    public var minX: Double { origin.x }
    /// Top edge, in points.
    public var minY: Double { origin.y }
    /// Right edge, in points.
    public var maxX: Double { origin.x + size.width }
    /// Bottom edge, in points.
    public var maxY: Double { origin.y + size.height }
    /// The centre, in points.
    public var center: Point2D { Point2D(x: origin.x + size.width / 2, y: origin.y + size.height / 2) }
    /// Whether the rectangle covers no area.
    public var isEmpty: Bool { size.width <= 0 || size.height <= 0 }

    /// The overlap of this rectangle and `other`, or nil when they share no area.
    public func intersection(_ other: Rect2D) -> Rect2D? {
        let x0 = max(minX, other.minX), y0 = max(minY, other.minY)
        let x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        guard x1 > x0, y1 > y0 else { return nil }
        return Rect2D(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// "(x, y, WxH)", for messages.
    public var description: String { "(\(minX), \(minY), \(size.width)x\(size.height))" }
}
