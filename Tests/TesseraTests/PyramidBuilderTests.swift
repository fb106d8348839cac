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

/// What `PyramidBuilder` cuts, checked on raw pixels.
@Suite struct PyramidBuilderTests {
    /// Every tile of the plan is written once, and full-resolution tiles are exactly the source's pixels in the
    /// tile's rect, including when the last tile row or column lies within the overlap of the one before it.
    @Test func everyTileIsCutOnceWithTheSourcePixels() throws {
        for (width, height, tileSize, overlap) in [(255, 255, 254, 1), (257, 513, 256, 2), (9, 10, 4, 1),
                                                   (10, 9, 4, 2), (1, 7, 2, 1), (5, 1, 2, 1), (17, 17, 8, 0)] {
            let image = TestImages.gradient(width: width, height: height)
            let plan = try PyramidPlan(imageSize: image.size, tileSize: tileSize, overlap: overlap)
            let sink = RecordingSink(padsEdgeTiles: false)
            var options = PyramidBuilder.Options()
            options.threads = 2
            _ = try PyramidBuilder(plan: plan, sink: sink, options: options).build(from: BufferReader(image))
            let tiles = sink.tiles.withLock { $0 }
            #expect(tiles.count == plan.tileCount, "\(width)x\(height), tile \(tileSize), overlap \(overlap)")
            #expect(sink.duplicates.withLock { $0 } == 0)
            for row in 0..<plan.levels[0].rows {
                for column in 0..<plan.levels[0].columns {
                    let rect = plan.tileRect(depth: 0, column: column, row: row)
                    var expected: [UInt8] = []
                    for y in rect.y..<rect.y + rect.height {
                        let start = y * image.bytesPerRow + rect.x * 3
                        expected += image.bytes[start..<start + rect.width * 3]
                    }
                    let matches = tiles[TileAddress(depth: 0, column: column, row: row)] == expected
                    #expect(matches, "\(width)x\(height) tile \(column),\(row)")
                }
            }
        }
    }
}
