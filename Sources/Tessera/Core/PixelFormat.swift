/// How pixels are laid out in a buffer: the channels, interleaved, and the bits per sample.
/// 16-bit samples are stored as native-endian `UInt16`.
public struct PixelFormat: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The channels of a pixel, in memory order.
    public enum Channels: Int, Sendable, Codable, CaseIterable {
        case gray = 1
        case grayAlpha = 2
        case rgb = 3
        case rgba = 4
    }

    public var channels: Channels
    /// Bits per sample: 8 or 16.
    public var bitDepth: Int

    public init(_ channels: Channels, bitDepth: Int = 8) {
        precondition(bitDepth == 8 || bitDepth == 16, "bit depth must be 8 or 16")
        self.channels = channels
        self.bitDepth = bitDepth
    }

    public static let gray8 = PixelFormat(.gray)
    public static let grayAlpha8 = PixelFormat(.grayAlpha)
    public static let rgb8 = PixelFormat(.rgb)
    public static let rgba8 = PixelFormat(.rgba)

    public var channelCount: Int { channels.rawValue }
    public var hasAlpha: Bool { channels == .grayAlpha || channels == .rgba }
    public var isColor: Bool { channels == .rgb || channels == .rgba }
    public var bytesPerSample: Int { bitDepth / 8 }
    public var bytesPerPixel: Int { channelCount * bytesPerSample }

    /// The same bit depth with other channels.
    public func with(_ channels: Channels) -> PixelFormat { PixelFormat(channels, bitDepth: bitDepth) }
    /// The same channels at another bit depth.
    public func with(bitDepth: Int) -> PixelFormat { PixelFormat(channels, bitDepth: bitDepth) }

    /// An opaque 8-bit pixel of this format's channels for an RGB colour (gray by Rec. 601 luma).
    public func pixel(fromRGB rgb: [UInt8]) -> [UInt8] {
        let gray = UInt8(luma(Int(rgb[0]), Int(rgb[1]), Int(rgb[2])))
        switch channels {
        case .gray: return [gray]
        case .grayAlpha: return [gray, 255]
        case .rgb: return Array(rgb.prefix(3))
        case .rgba: return Array(rgb.prefix(3)) + [255]
        }
    }

    public var description: String {
        let name: String
        switch channels {
        case .gray: name = "gray"
        case .grayAlpha: name = "gray+alpha"
        case .rgb: name = "RGB"
        case .rgba: name = "RGBA"
        }
        return "\(name) \(bitDepth)-bit"
    }
}

/// Rec. 601 luma, the weights Pillow and libjpeg use to turn RGB into gray.
@inline(__always) func luma(_ red: Int, _ green: Int, _ blue: Int) -> Int {
    (red * 299 + green * 587 + blue * 114 + 500) / 1000
}
