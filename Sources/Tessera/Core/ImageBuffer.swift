/// Pixels in memory: `height` rows of `width` pixels in `format`, rows `bytesPerRow` apart.
/// Used for strips (a window of rows) and for small whole images (tiles, thumbnails).
public struct ImageBuffer: Sendable {
    public let width: Int
    public let format: PixelFormat
    public let bytesPerRow: Int
    /// Rows in use.
    public private(set) var height: Int
    /// The pixel bytes; may hold more rows than `height` so that a reused strip does not reallocate.
    public var bytes: [UInt8]

    /// A zero-filled buffer; `width * height * bytesPerPixel` must already have been checked against a budget.
    public init(width: Int, height: Int, format: PixelFormat) {
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = width * format.bytesPerPixel
        self.bytes = [UInt8](repeating: 0, count: bytesPerRow * height)
    }

    /// Wraps existing bytes, `bytesPerRow = width * bytesPerPixel`.
    public init(width: Int, height: Int, format: PixelFormat, bytes: [UInt8]) {
        precondition(bytes.count >= width * format.bytesPerPixel * height, "too few bytes for the buffer")
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = width * format.bytesPerPixel
        self.bytes = bytes
    }

    /// The size in pixels.
    public var size: Size { Size(width: width, height: height) }
    /// Rows the storage can hold without growing.
    public var rowCapacity: Int { bytesPerRow == 0 ? Int.max : bytes.count / bytesPerRow }

    /// Sets the number of rows in use, growing the storage if needed (contents of new rows unspecified).
    public mutating func setHeight(_ rows: Int) {
        if rows > rowCapacity {
            bytes.append(contentsOf: repeatElement(0, count: rows * bytesPerRow - bytes.count))
        }
        height = rows
    }

    /// The byte offset of row `y`.
    @inline(__always) public func offset(ofRow y: Int) -> Int { y * bytesPerRow }

    /// Copies out the pixel at (x, y) as samples widened to `Int`, for tests and small tools.
    public func pixel(x: Int, y: Int) -> [Int] {
        let start = offset(ofRow: y) + x * format.bytesPerPixel
        return bytes.withUnsafeBytes { raw in
            (0..<format.channelCount).map { channel in
                format.bitDepth == 8
                    ? Int(raw[start + channel])
                    : Int(raw.loadUnaligned(fromByteOffset: start + 2 * channel, as: UInt16.self))
            }
        }
    }
}

/// A window of rows of an image: the rows `y ..< y + pixels.height`, in a buffer reused from strip to strip.
public struct Strip: Sendable {
    /// The index of the strip's first row in the image.
    public var y: Int
    public var pixels: ImageBuffer

    /// An empty strip for rows of `width` pixels in `format`; storage grows on first use.
    public init(width: Int, format: PixelFormat) {
        y = 0
        pixels = ImageBuffer(width: width, height: 0, format: format)
    }

    /// A strip holding `pixels` as the rows starting at `y`.
    public init(y: Int, pixels: ImageBuffer) {
        self.y = y
        self.pixels = pixels
    }

    public var width: Int { pixels.width }
    public var height: Int { pixels.height }
    public var format: PixelFormat { pixels.format }
}
