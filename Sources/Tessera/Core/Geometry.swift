/// A size in pixels.
public struct Size: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The number of pixels, `width * height`.
    public var area: Int { width * height }

    public var description: String { "\(width)x\(height)" }
}

/// A rectangle in integer pixel coordinates, origin top-left.
public struct Rect: Hashable, Sendable, Codable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle covering a whole image of `size`.
    public init(_ size: Size) {
        self.init(x: 0, y: 0, width: size.width, height: size.height)
    }

    public var size: Size { Size(width: width, height: height) }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The overlap of two rectangles; empty (zero size) when they do not meet.
    public func intersection(_ other: Rect) -> Rect {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(maxX, other.maxX), bottom = min(maxY, other.maxY)
        return Rect(x: left, y: top, width: max(0, right - left), height: max(0, bottom - top))
    }

    /// The smallest rectangle of a `1/factor` reduced image that covers this one.
    public func reduced(by factor: Int) -> Rect {
        let left = x / factor, top = y / factor
        let right = (maxX + factor - 1) / factor, bottom = (maxY + factor - 1) / factor
        return Rect(x: left, y: top, width: right - left, height: bottom - top)
    }

    public var description: String { "\(x),\(y),\(width),\(height)" }
}
