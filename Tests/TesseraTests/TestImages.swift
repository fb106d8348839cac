import Foundation
@testable import Tessera

/// Deterministic test images and temporary folders shared by the codec tests.
enum TestImages {
    /// A smooth, photo-like gradient with a little texture, so lossy codecs behave as on photographs.
    static func gradient(width: Int, height: Int, format: PixelFormat = .rgb8) -> ImageBuffer {
        var image = ImageBuffer(width: width, height: height, format: format)
        let maxValue = format.bitDepth == 16 ? 65535.0 : 255.0
        image.bytes.withUnsafeMutableBytes { raw in
            for y in 0..<height {
                for x in 0..<width {
                    for channel in 0..<format.channelCount {
                        let phase = Double(channel) * 1.7
                        var value = 0.5 + 0.3 * sin(Double(x) / 13 + phase) * cos(Double(y) / 17 - phase)
                            + 0.15 * Double(x + y) / Double(width + height)
                        if format.hasAlpha && channel == format.channelCount - 1 { value = Double((x * 7 + y) % 256) / 255 }
                        let sample = min(maxValue, max(0, (value * maxValue).rounded()))
                        let index = (y * width + x) * format.channelCount + channel
                        if format.bitDepth == 8 {
                            raw[index] = UInt8(sample)
                        } else {
                            raw.storeBytes(of: UInt16(sample), toByteOffset: 2 * index, as: UInt16.self)
                        }
                    }
                }
            }
        }
        return image
    }

    /// A fresh temporary folder, removed by the caller with `FileManager.removeItem`.
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "tessera-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `image` with Tessera's encoder for the path's extension.
    static func write(_ image: ImageBuffer, to path: String, options: EncodeOptions = EncodeOptions()) throws {
        try ImageWriter.write(BufferReader(image), to: path, options: options)
    }

    /// The largest difference between two same-sized buffers' samples.
    static func maxDifference(_ a: ImageBuffer, _ b: ImageBuffer) -> Int {
        precondition(a.size == b.size && a.format == b.format, "buffers differ in size or format")
        var worst = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for (p, q) in zip(a.pixel(x: x, y: y), b.pixel(x: x, y: y)) { worst = max(worst, abs(p - q)) }
            }
        }
        return worst
    }

    /// The rectangle `rect` of `image`, copied.
    static func crop(_ image: ImageBuffer, _ rect: Rect) -> ImageBuffer {
        var out = ImageBuffer(width: rect.width, height: rect.height, format: image.format)
        let bytesPerPixel = image.format.bytesPerPixel
        for row in 0..<rect.height {
            let from = image.offset(ofRow: rect.y + row) + rect.x * bytesPerPixel
            out.bytes.replaceSubrange(out.offset(ofRow: row)..<out.offset(ofRow: row) + out.bytesPerRow,
                                      with: image.bytes[from..<from + out.bytesPerRow])
        }
        return out
    }
}
