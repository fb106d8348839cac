import Foundation

/// The box a thumbnail must fit, in vipsthumbnail's forms: `N` (N x N), `WxH`, `Wx` (width only), `xH` (height
/// only), each optionally suffixed `>` (only shrink, the default), `<` (only enlarge) or `!` (exactly W x H,
/// distorting the aspect ratio). ImageIO's `maxPixelSize` is `N`.
public struct ThumbnailSize: Sendable, Hashable, CustomStringConvertible {
    /// Whether the image may be shrunk, enlarged or forced to the box.
    public enum Restriction: String, Sendable, Hashable {
        /// Only ever shrink (`>`): an image already inside the box keeps its size.
        case down = ">"
        /// Only ever enlarge (`<`): an image larger than the box keeps its size.
        case up = "<"
        /// Shrink or enlarge to fit the box.
        case both = ""
        /// Exactly the box, each axis scaled on its own (`!`).
        case force = "!"
    }

    /// The box's width in pixels; nil leaves the width unconstrained.
    public var width: Int?
    /// The box's height in pixels; nil leaves the height unconstrained.
    public var height: Int?
    /// Whether the image may shrink, grow or be distorted to the box; only shrink (`>`) by default.
    public var restriction: Restriction

    /// A box of `width` x `height` pixels (either may be nil, not both).
    public init(width: Int?, height: Int?, restriction: Restriction = .down) {
        precondition(width != nil || height != nil, "a thumbnail size needs a width or a height")
        self.width = width
        self.height = height
        self.restriction = restriction
    }

    /// ImageIO's `maxPixelSize`: the longer side at most `pixels`.
    public static func maxPixelSize(_ pixels: Int) -> ThumbnailSize {
        ThumbnailSize(width: pixels, height: pixels)
    }

    /// Parses `256`, `200x100`, `200x`, `x100`, with an optional `>`, `<` or `!` suffix.
    public init(parsing text: String) throws {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        var restriction = Restriction.down
        if let last = body.last, let suffix = Restriction(rawValue: String(last)), suffix != .both {
            restriction = suffix
            body = body.dropLast()
        }
        func number(_ part: Substring) throws -> Int? {
            if part.isEmpty { return nil }
            guard let value = Int(part), value > 0, value <= 1 << 24 else {
                throw TesseraError.invalidArgument("thumbnail size '\(text)' must be N, WxH, Wx or xH with positive whole numbers")
            }
            return value
        }
        let parts = body.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        let width: Int?, height: Int?
        if parts.count == 1 {
            width = try number(parts[0])
            height = width
        } else {
            width = try number(parts[0])
            height = try number(parts[1])
        }
        guard width != nil || height != nil else {
            throw TesseraError.invalidArgument("thumbnail size '\(text)' must be N, WxH, Wx or xH with positive whole numbers")
        }
        self.init(width: width, height: height, restriction: restriction)
    }

    public var description: String {
        let box = width == height ? "\(width!)" : "\(width.map(String.init) ?? "")x\(height.map(String.init) ?? "")"
        return box + restriction.rawValue
    }

    /// The size `source` is resampled to, as vipsthumbnail computes it: one shrink for both axes (the larger of
    /// the two so the image fits, the smaller when `covering` so it fills the box for cropping), each side
    /// `round(side / shrink)` and at least 1; `force` scales each axis on its own.
    public func resampledSize(for source: Size, covering: Bool) -> Size {
        let horizontal = width.map { Double(source.width) / Double($0) }
        let vertical = height.map { Double(source.height) / Double($0) }
        var shrinkX: Double, shrinkY: Double
        if restriction == .force {
            shrinkX = horizontal ?? vertical!
            shrinkY = vertical ?? horizontal!
        } else {
            let shrinks = [horizontal, vertical].compactMap { $0 }
            let shrink = covering ? shrinks.min()! : shrinks.max()!
            shrinkX = shrink
            shrinkY = shrink
        }
        switch restriction {
        case .down: shrinkX = max(1, shrinkX); shrinkY = max(1, shrinkY)
        case .up: shrinkX = min(1, shrinkX); shrinkY = min(1, shrinkY)
        case .both, .force: break
        }
        return Size(width: max(1, Int((Double(source.width) / shrinkX).rounded())),
                    height: max(1, Int((Double(source.height) / shrinkY).rounded())))
    }
}
