import Foundation
import Tessera

/// A deterministic stand-in for the seed's 100-megapixel map, produced strip by strip so that writing it never
/// holds the image: smooth colour fields (like land and sea), a grid of darker lines every 64 pixels (like
/// roads) and a little hashed grain, so that JPEG tiles cost what real map tiles cost to decode.
final class SyntheticMap: ImageReader {
    let size: Size
    let format = PixelFormat.rgb8
    private(set) var nextRow = 0
    /// Per-column and per-row colour terms, so a pixel costs two lookups and a hash instead of trigonometry.
    private let columnTerms: [SIMD3<Double>]
    private let rowTerms: [SIMD3<Double>]

    init(size: Size) {
        self.size = size
        columnTerms = (0..<size.width).map { x in
            let t = Double(x) / 900
            return SIMD3(60 * sin(t), 50 * sin(t * 1.7 + 1), 40 * cos(t * 0.6))
        }
        rowTerms = (0..<size.height).map { y in
            let t = Double(y) / 700
            return SIMD3(40 * cos(t * 1.3), 45 * sin(t + 2), 60 * sin(t * 0.8))
        }
    }

    func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        let rows = min(maxRows, size.height - nextRow)
        guard rows > 0 else {
            strip = Strip(y: nextRow, pixels: ImageBuffer(width: size.width, height: 0, format: format))
            return false
        }
        var pixels = ImageBuffer(width: size.width, height: rows, format: format)
        pixels.bytes.withUnsafeMutableBufferPointer { bytes in
            for row in 0..<rows {
                let y = nextRow + row
                let rowTerm = rowTerms[y]
                let onRoadRow = y % 64 < 2
                for x in 0..<size.width {
                    var colour = SIMD3<Double>(128, 140, 120) + columnTerms[x] + rowTerm
                    if onRoadRow || x % 64 < 2 { colour *= 0.55 }
                    let grain = Double(Self.hash(x, y) & 15) - 7.5
                    let offset = (row * size.width + x) * 3
                    bytes[offset] = Self.byte(colour.x + grain)
                    bytes[offset + 1] = Self.byte(colour.y + grain)
                    bytes[offset + 2] = Self.byte(colour.z + grain)
                }
            }
        }
        strip = Strip(y: nextRow, pixels: pixels)
        nextRow += rows
        return true
    }

    /// Writes the map as a baseline JPEG at `path` (quality 85), streaming.
    static func writeJPEG(size: Size, to path: String) throws {
        try ImageWriter.write(SyntheticMap(size: size), to: path, format: .jpeg)
    }

    private static func byte(_ value: Double) -> UInt8 { UInt8(min(max(value, 0), 255)) }

    private static func hash(_ x: Int, _ y: Int) -> UInt32 {
        var h = UInt32(truncatingIfNeeded: x &* 73_856_093 ^ y &* 19_349_663)
        h ^= h >> 13
        h = h &* 0x5bd1_e995
        return h ^ (h >> 15)
    }
}
