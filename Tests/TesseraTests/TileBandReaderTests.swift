import Testing
@testable import Tessera

/// The band of tile rows every tiled decoder reads through: regions, skipped rows and the tiles decoded.
@Suite struct TileBandReaderTests {
    /// A decoder whose tiles are cut from an image in memory, recording each tile it is asked for.
    private final class ImageTiles: TiledRowDecoder {
        let image: ImageBuffer
        let bands: TileBandReader
        private(set) var decoded: [[Int]] = []
        var size: Size { image.size }
        var format: PixelFormat { image.format }

        init(_ image: ImageBuffer, tileSize: Size, cropsWithinTiles: Bool) {
            self.image = image
            bands = TileBandReader(grid: TileGrid(imageSize: image.size, tileSize: tileSize), format: image.format,
                                   cropsWithinTiles: cropsWithinTiles, budget: .default, purpose: "a row of tiles",
                                   name: "tiles")
        }

        func decodeTile(column: Int, row: Int, columns: Range<Int>, into target: UnsafeMutableRawPointer,
                        bytesPerRow: Int) throws {
            decoded.append([column, row])
            let pixelBytes = format.bytesPerPixel
            image.bytes.withUnsafeBytes { source in
                for y in bands.grid.pixelRows(ofRow: row) {
                    (target + (y - row * bands.grid.tileSize.height) * bytesPerRow)
                        .copyMemory(from: source.baseAddress! + image.offset(ofRow: y) + columns.lowerBound * pixelBytes,
                                    byteCount: columns.count * pixelBytes)
                }
            }
        }
    }

    @Test func aGridCountsItsEdgeTilesCutToTheImage() {
        let grid = TileGrid(imageSize: Size(width: 100, height: 70), tileSize: Size(width: 32, height: 16))
        #expect(grid.columns == 4 && grid.rows == 5)
        #expect(grid.tileColumns(covering: 31..<65) == 0..<3)
        #expect(grid.tileRows(covering: 16..<32) == 1..<2)
        #expect(grid.pixelColumns(ofColumn: 3) == 96..<100)
        #expect(grid.pixelRows(ofRow: 4) == 64..<70)
    }

    @Test func aRegionDecodesOnlyTheTilesUnderIt() throws {
        let image = TestImages.make(width: 100, height: 70, format: .rgb8)
        let rect = Rect(x: 40, y: 20, width: 30, height: 25)
        for crops in [true, false] {
            let tiles = ImageTiles(image, tileSize: Size(width: 32, height: 16), cropsWithinTiles: crops)
            let region = try RegionReader(decoder: tiles, region: rect, budget: .default, name: "tiles").readAll()
            #expect(TestImages.maxDifference(region, TestImages.crop(image, rect)) == 0)
            #expect(tiles.decoded == [[1, 1], [2, 1], [1, 2], [2, 2]])
            #expect(tiles.bands.columns == (crops ? 40..<70 : 32..<96))
        }
    }

    @Test func theWholeImageReadsBackInStripsOfAnyHeight() throws {
        let image = TestImages.make(width: 45, height: 33, format: .rgba8)
        let tiles = ImageTiles(image, tileSize: Size(width: 16, height: 8), cropsWithinTiles: true)
        let reader = RegionReader(decoder: tiles, region: Rect(image.size), budget: .default, name: "tiles")
        var strip = reader.makeStrip(), rows: [UInt8] = []
        while try reader.read(into: &strip, maxRows: 5) { rows += strip.pixels.bytes.prefix(strip.height * strip.pixels.bytesPerRow) }
        #expect(rows == image.bytes)
        #expect(tiles.decoded.count == 3 * 5)
    }
}
