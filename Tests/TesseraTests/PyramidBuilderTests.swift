import Synchronization
import Testing
@testable import Tessera

/// A sink that keeps each tile's raw pixels instead of encoding them, to check what the builder cuts.
private final class RecordingSink: TileSink {
    let padsEdgeTiles: Bool
    let tiles = Mutex<[TileAddress: [UInt8]]>([:])
    let duplicates = Mutex(0)

    init(padsEdgeTiles: Bool) { self.padsEdgeTiles = padsEdgeTiles }

    func hasTile(_ tile: TileAddress) -> Bool { false }
    func encode(_ tile: ImageBuffer, options: PyramidBuilder.Options) throws -> [UInt8] { tile.bytes }
    func write(_ bytes: [UInt8], for tile: TileAddress) throws {
        tiles.withLock { tiles in
            if tiles.updateValue(bytes, forKey: tile) != nil { duplicates.withLock { $0 += 1 } }
        }
    }
    func finish(blankTiles: [TileAddress]) throws {}
}

/// A level computed the slow way, from the whole level above: each pixel the rounded mean of a 2 x 2 block, the
/// last row and column paired with themselves when the size is odd.
private func halve(_ image: ImageBuffer) -> ImageBuffer {
    let channels = image.format.channelCount
    var half = ImageBuffer(width: (image.width + 1) / 2, height: (image.height + 1) / 2, format: image.format)
    for y in 0..<half.height {
        for x in 0..<half.width {
            let xs = [2 * x, min(2 * x + 1, image.width - 1)], ys = [2 * y, min(2 * y + 1, image.height - 1)]
            for channel in 0..<channels {
                var sum = 0
                for sy in ys {
                    for sx in xs { sum += Int(image.bytes[sy * image.bytesPerRow + sx * channels + channel]) }
                }
                half.bytes[y * half.bytesPerRow + x * channels + channel] = UInt8((sum + 2) >> 2)
            }
        }
    }
    return half
}

/// The pixels of `rect` in `image`, row by row.
private func crop(_ image: ImageBuffer, _ rect: Rect) -> [UInt8] {
    let pixel = image.format.bytesPerPixel
    var pixels: [UInt8] = []
    for y in rect.y..<rect.y + rect.height {
        let start = y * image.bytesPerRow + rect.x * pixel
        pixels += image.bytes[start..<start + rect.width * pixel]
    }
    return pixels
}

/// What `PyramidBuilder` cuts, checked on raw pixels.
@Suite struct PyramidBuilderTests {
    /// Every tile of every level is written once with the pixels of its rect in a pyramid computed the slow way,
    /// over sizes where the last tile row or column lies within the overlap of the one before it.
    @Test func everyTileIsCutOnceWithTheRightPixels() throws {
        var cases = [(255, 255, 254, 1), (257, 513, 256, 2), (1, 7, 2, 1), (5, 1, 2, 1), (17, 17, 8, 0)]
        for width in 1...11 {
            for height in [1, 4, 5, 9] {
                for tileSize in 2...4 {
                    for overlap in 0...tileSize / 2 { cases.append((width, height, tileSize, overlap)) }
                }
            }
        }
        for (width, height, tileSize, overlap) in cases {
            let image = TestImages.gradient(width: width, height: height)
            let plan = try PyramidPlan(imageSize: image.size, tileSize: tileSize, overlap: overlap)
            let sink = RecordingSink(padsEdgeTiles: false)
            var options = PyramidBuilder.Options()
            options.threads = 2
            _ = try PyramidBuilder(plan: plan, sink: sink, options: options).build(from: BufferReader(image))
            let tiles = sink.tiles.withLock { $0 }
            let name = "\(width)x\(height), tile \(tileSize), overlap \(overlap)"
            #expect(tiles.count == plan.tileCount, "\(name)")
            #expect(sink.duplicates.withLock { $0 } == 0, "\(name)")
            var level = image
            for depth in plan.levels.indices {
                if depth > 0 { level = halve(level) }
                for row in 0..<plan.levels[depth].rows {
                    for column in 0..<plan.levels[depth].columns {
                        let rect = plan.tileRect(depth: depth, column: column, row: row)
                        let matches = tiles[TileAddress(depth: depth, column: column, row: row)] == crop(level, rect)
                        #expect(matches, "\(name): level \(depth) tile \(column),\(row)")
                    }
                }
            }
        }
    }
}
