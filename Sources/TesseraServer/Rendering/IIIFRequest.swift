import Foundation
import Tessera

/// A parsed IIIF Image API 3.0 image request, `{region}/{size}/{rotation}/{quality}.{format}`, before it is
/// applied to an image (`resolve(for:limits:)` does that, with the errors the spec asks for).
public struct IIIFRequest: Sendable, Hashable {
    /// Which part of the image, in full-resolution pixels once resolved.
    public enum Region: Sendable, Hashable {
        case full
        case square
        case pixels(x: Int, y: Int, width: Int, height: Int)
        case percent(x: Double, y: Double, width: Double, height: Double)
    }

    /// How big the result is; `upscale` is the `^` prefix, without which the result may not exceed the region.
    public enum Size: Sendable, Hashable {
        case max(upscale: Bool)
        case width(Int, upscale: Bool)
        case height(Int, upscale: Bool)
        case percent(Double, upscale: Bool)
        case exact(width: Int, height: Int, upscale: Bool)
        case bestFit(width: Int, height: Int, upscale: Bool)
    }

    public enum Quality: String, Sendable, Hashable, CaseIterable {
        case `default`, color, gray, bitonal
    }

    public var region: Region
    public var size: Size
    /// Clockwise degrees, 0 to 360.
    public var rotation: Double
    /// Mirror horizontally before rotating (`!` prefix).
    public var mirror: Bool
    public var quality: Quality
    /// The format extension as requested (`jpg`, `png`, `webp`, ...).
    public var format: String

    /// Parses the four path segments after the identifier; throws `IIIFError.badRequest` on bad syntax.
    public init(region: String, size: String, rotation: String, qualityAndFormat: String) throws {
        self.region = try Self.parseRegion(region)
        self.size = try Self.parseSize(size)
        (self.rotation, self.mirror) = try Self.parseRotation(rotation)
        guard let dot = qualityAndFormat.utf8.lastIndex(of: UInt8(ascii: ".")) else {
            throw IIIFError.badRequest("quality and format must be quality.format, not '\(qualityAndFormat)'")
        }
        guard let quality = Quality(rawValue: String(qualityAndFormat[..<dot])) else {
            throw IIIFError.badRequest("unknown quality '\(qualityAndFormat[..<dot])'")
        }
        self.quality = quality
        format = String(qualityAndFormat[qualityAndFormat.utf8.index(after: dot)...])
        // ASCII letters and digits, as every format's extension is: checked on the bytes, as numbers are (`isDigits`).
        guard !format.isEmpty, format.utf8.allSatisfy({ Self.isASCIIDigit($0) || Self.isASCIILetter($0) }) else {
            throw IIIFError.badRequest("bad format '\(format)'")
        }
    }

    private static func parseRegion(_ text: String) throws -> Region {
        switch text {
        case "full": return .full
        case "square": return .square
        default: break
        }
        if text.hasPrefix("pct:") {
            let values = try numbers(text.dropFirst(4), count: 4, what: "region")
            guard values[2] > 0, values[3] > 0, values.allSatisfy({ $0 >= 0 }) else {
                throw IIIFError.badRequest("region '\(text)' must have a positive width and height")
            }
            return .percent(x: values[0], y: values[1], width: values[2], height: values[3])
        }
        let parts = commaSeparated(Substring(text))
        let values = parts.compactMap { part in isDigits(part) ? Int(part) : nil }
            .filter { $0 <= largestNumber }
        guard parts.count == 4, values.count == 4 else { throw IIIFError.badRequest("bad region '\(text)'") }
        guard values[2] > 0, values[3] > 0 else {
            throw IIIFError.badRequest("region '\(text)' must have a positive width and height")
        }
        return .pixels(x: values[0], y: values[1], width: values[2], height: values[3])
    }

    private static func parseSize(_ text: String) throws -> Size {
        let upscale = text.hasPrefix("^")
        let body = upscale ? String(text.dropFirst()) : text
        if body == "max" { return .max(upscale: upscale) }
        if body.hasPrefix("pct:") {
            let value = try numbers(body.dropFirst(4), count: 1, what: "size")[0]
            guard value > 0 else { throw IIIFError.badRequest("size '\(text)' must be above 0%") }
            return .percent(value, upscale: upscale)
        }
        let confined = body.hasPrefix("!")
        let parts = commaSeparated(confined ? body.dropFirst() : Substring(body))
        guard parts.count == 2 else { throw IIIFError.badRequest("bad size '\(text)'") }
        func dimension(_ part: Substring) throws -> Int? {
            if part.isEmpty { return nil }
            guard isDigits(part), let value = Int(part), value > 0, value <= largestNumber else {
                throw IIIFError.badRequest("bad size '\(text)'")
            }
            return value
        }
        switch (try dimension(parts[0]), try dimension(parts[1])) {
        case let (width?, height?):
            return confined ? .bestFit(width: width, height: height, upscale: upscale)
                : .exact(width: width, height: height, upscale: upscale)
        case let (width?, nil) where !confined: return .width(width, upscale: upscale)
        case let (nil, height?) where !confined: return .height(height, upscale: upscale)
        default: throw IIIFError.badRequest("bad size '\(text)'")
        }
    }

    private static func parseRotation(_ text: String) throws -> (Double, Bool) {
        let mirror = text.hasPrefix("!")
        let body = mirror ? text.dropFirst() : Substring(text)
        let degrees = try numbers(body, count: 1, what: "rotation")[0]
        guard degrees <= 360 else { throw IIIFError.badRequest("rotation '\(text)' must be 0 to 360") }
        return (degrees, mirror)
    }

    /// The largest number a request may give (pixels, percents, degrees), and the most pixels an output may have:
    /// far past any image's size, and small enough that the pixel arithmetic on it cannot overflow.
    static let largestNumber = 1 << 31

    /// Whether `text` is ASCII digits, at least one, with at most one `.` among them when `point`: what the spec's
    /// numbers are made of, checked on the bytes (`Character.isNumber` looked up Unicode properties per character).
    private static func isDigits(_ text: Substring, point: Bool = false) -> Bool {
        var points = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "."), point, points == 0 {
                points += 1
            } else if !isASCIIDigit(byte) {
                return false
            }
        }
        return !text.isEmpty
    }

    private static func isASCIIDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// `text`'s parts between commas, empty ones kept, split on the bytes rather than on characters (whose
    /// boundaries are found with Unicode's tables).
    private static func commaSeparated(_ text: Substring) -> [Substring] {
        text.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { Substring($0) }
    }

    /// Comma-separated non-negative decimals (no exponents, no signs), as the spec writes them, each at most
    /// `largestNumber`.
    private static func numbers(_ text: Substring, count: Int, what: String) throws -> [Double] {
        let parts = commaSeparated(text)
        let values = parts.compactMap { part -> Double? in
            guard isDigits(part, point: true) else { return nil }
            // A whole number read as one: Double's parser is C's strtod, far more code for `0` than the digits need.
            let value = isDigits(part) ? Int(part).map(Double.init) : Double(part)
            return value.flatMap { $0 <= Double(largestNumber) ? $0 : nil }
        }
        guard parts.count == count, values.count == count else { throw IIIFError.badRequest("bad \(what) '\(text)'") }
        return values
    }
}

/// The server's limits on output size, as info.json advertises them.
public struct IIIFLimits: Sendable, Hashable {
    public var maxWidth: Int?
    public var maxHeight: Int?
    public var maxArea: Int?

    public init(maxWidth: Int? = nil, maxHeight: Int? = nil, maxArea: Int? = nil) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxArea = maxArea
    }
}

/// A request applied to one image: the region in full-resolution pixels and the exact output size.
public struct IIIFResolvedRequest: Sendable, Hashable {
    public let region: Rect
    /// The size before rotation.
    public let size: Tessera.Size
    public let rotation: Int
    public let mirror: Bool
    public let quality: IIIFRequest.Quality
    public let format: String

    /// The canonical form of the request's path (after the identifier), for the Link header.
    public func canonicalPath(imageSize: Tessera.Size, maxSize: Tessera.Size) -> String {
        let regionText = region == Rect(imageSize) ? "full" : region.description
        let sizeText = size == maxSize ? "max" : "\(size.width),\(size.height)"
        return "\(regionText)/\(sizeText)/\(mirror ? "!" : "")\(rotation)/\(quality.rawValue).\(format)"
    }
}

extension IIIFRequest {
    /// The longer side of the thumbnails the server's own pages and documents show, in pixels.
    static let thumbnailSide = 256

    /// The size to ask for a thumbnail of an image of `imageSize` (`max` when it fits in a `thumbnailSide` square,
    /// else a best fit in the square) and the size the service answers it with.
    static func thumbnail(of imageSize: Tessera.Size, limits: IIIFLimits) -> (request: String, size: Tessera.Size) {
        let side = thumbnailSide
        let request = max(imageSize.width, imageSize.height) <= side ? "max" : "!\(side),\(side)"
        let resolved = try? IIIFRequest(region: "full", size: request, rotation: "0", qualityAndFormat: "default.jpg")
            .resolve(for: imageSize, limits: limits)
        return (request, resolved?.size ?? Tessera.Size(width: side, height: side))
    }

    /// Applies the request to an image of `imageSize`: 400 for regions outside the image, sizes of zero,
    /// upscaling without `^` or past the limits; 501 for rotations other than multiples of 90.
    public func resolve(for imageSize: Tessera.Size, limits: IIIFLimits) throws -> IIIFResolvedRequest {
        let image = Rect(imageSize)
        let wanted: Rect
        switch region {
        case .full: wanted = image
        case .square:
            let side = min(imageSize.width, imageSize.height)
            wanted = Rect(x: (imageSize.width - side) / 2, y: (imageSize.height - side) / 2, width: side, height: side)
        case let .pixels(x, y, width, height):
            wanted = Rect(x: x, y: y, width: width, height: height)
        case let .percent(x, y, width, height):
            let w = Double(imageSize.width), h = Double(imageSize.height)
            let left = Int((x * w / 100).rounded()), top = Int((y * h / 100).rounded())
            wanted = Rect(x: left, y: top, width: max(1, Int(((x + width) * w / 100).rounded()) - left),
                          height: max(1, Int(((y + height) * h / 100).rounded()) - top))
        }
        let clipped = wanted.intersection(image)
        guard !clipped.isEmpty else { throw IIIFError.badRequest("the region lies outside the \(imageSize) image") }

        let maxSize = Self.maxSize(of: clipped.size, limits: limits, upscale: false)
        let regionWidth = Double(clipped.width), regionHeight = Double(clipped.height)
        var output: Tessera.Size
        var upscale = false
        switch size {
        case let .max(up):
            upscale = up
            output = up ? Self.maxSize(of: clipped.size, limits: limits, upscale: true) : maxSize
        case let .width(width, up):
            upscale = up
            output = Tessera.Size(width: width, height: Self.pixels(Double(width) * regionHeight / regionWidth))
        case let .height(height, up):
            upscale = up
            output = Tessera.Size(width: Self.pixels(Double(height) * regionWidth / regionHeight), height: height)
        case let .percent(percent, up):
            upscale = up
            output = Tessera.Size(width: Self.pixels(regionWidth * percent / 100),
                                  height: Self.pixels(regionHeight * percent / 100))
        case let .exact(width, height, up):
            upscale = up
            output = Tessera.Size(width: width, height: height)
        case let .bestFit(width, height, up):
            upscale = up
            let scale = min(Double(width) / regionWidth, Double(height) / regionHeight)
            output = Tessera.Size(width: min(width, Self.pixels(regionWidth * scale)),
                                  height: min(height, Self.pixels(regionHeight * scale)))
        }
        guard output.width > 0, output.height > 0 else {
            throw IIIFError.badRequest("the requested size is less than one pixel")
        }
        if !upscale && (output.width > clipped.width || output.height > clipped.height) {
            throw IIIFError.badRequest("\(output) is larger than the \(clipped.size) region: use ^ to upscale")
        }
        if let maxWidth = limits.maxWidth, output.width > maxWidth { throw IIIFError.badRequest("width over \(maxWidth)") }
        if let maxHeight = limits.maxHeight, output.height > maxHeight {
            throw IIIFError.badRequest("height over \(maxHeight)")
        }
        // An upscale by up to `largestNumber` percent can ask for more pixels than an Int counts.
        let area = output.width.multipliedReportingOverflow(by: output.height)
        guard !area.overflow, area.partialValue <= Self.largestNumber else {
            throw IIIFError.badRequest("\(output) is more pixels than any render can have")
        }
        if let maxArea = limits.maxArea, area.partialValue > maxArea { throw IIIFError.badRequest("area over \(maxArea)") }
        guard rotation.truncatingRemainder(dividingBy: 90) == 0 else {
            throw IIIFError.notImplemented("rotation by \(rotation) degrees (only multiples of 90)")
        }
        return IIIFResolvedRequest(region: clipped, size: output, rotation: Int(rotation) % 360, mirror: mirror,
                                   quality: quality, format: format)
    }

    /// `value` rounded to whole pixels, at most 2^62 (sizes far past any image's, which `resolve` refuses, are not
    /// converted into a trap).
    private static func pixels(_ value: Double) -> Int {
        value < Double(1 << 62) ? Int(value.rounded()) : 1 << 62
    }

    /// The largest size within the limits, keeping the aspect ratio; the region's own size unless `upscale`.
    static func maxSize(of region: Tessera.Size, limits: IIIFLimits, upscale: Bool) -> Tessera.Size {
        var scale = upscale ? Double.infinity : 1
        if let maxWidth = limits.maxWidth { scale = min(scale, Double(maxWidth) / Double(region.width)) }
        if let maxHeight = limits.maxHeight { scale = min(scale, Double(maxHeight) / Double(region.height)) }
        if let maxArea = limits.maxArea { scale = min(scale, (Double(maxArea) / Double(region.area)).squareRoot()) }
        if !scale.isFinite || scale == 1 { return region }
        return Tessera.Size(width: max(1, Int((Double(region.width) * scale).rounded(.down))),
                            height: max(1, Int((Double(region.height) * scale).rounded(.down))))
    }
}

/// The IIIF errors and the HTTP status each maps to.
public enum IIIFError: Error, Equatable, Sendable, CustomStringConvertible {
    case badRequest(String)
    case notFound(String)
    case notImplemented(String)
    case unsupportedFormat(String)

    public var status: Int {
        switch self {
        case .badRequest: return 400
        case .notFound: return 404
        case .notImplemented: return 501
        case .unsupportedFormat: return 415
        }
    }

    public var description: String {
        switch self {
        case let .badRequest(message), let .notFound(message), let .notImplemented(message):
            return message
        case let .unsupportedFormat(format): return "the format '\(format)' is not supported"
        }
    }
}
