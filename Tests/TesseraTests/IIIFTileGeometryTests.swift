import Foundation
import Testing
@testable import Tessera

/// IIIFTileGeometry against the shared vectors in Tests/Vectors/iiif.json (which the web viewer's iiif.js passes
/// too), and the layout, reader and server uses built on it.
@Suite struct IIIFTileGeometryTests {
    struct Vectors: Decodable {
        struct Tile: Decodable {
            let image: [Int], tile: [Int], scale: Int, column: Int, row: Int, levelRect: [Int], region: [Int]
            let path: String
        }
        struct Part: Decodable {
            let image: [Int], scale: Int, levelRect: [Int], region: [Int], path: String
        }
        let schema: String
        let defaultTileSize: Int
        let tiles: [Tile]
        let rects: [Part]
    }

    let vectors: Vectors

    init() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/iiif.json")
        vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }

    private func rect(_ values: [Int]) -> Rect { Rect(x: values[0], y: values[1], width: values[2], height: values[3]) }

    @Test func tilesAreNamedAsTheVectorsSayAndRequestsForThemAreRecognised() throws {
        #expect(vectors.schema == "tessera-iiif-vectors/1" && vectors.tiles.count > 100)
        for tile in vectors.tiles {
            let geometry = IIIFTileGeometry(imageSize: Size(width: tile.image[0], height: tile.image[1]),
                                            tileWidth: tile.tile[0], tileHeight: tile.tile[1])
            let label = "\(tile.image) in \(tile.tile) at 1/\(tile.scale), tile \(tile.column),\(tile.row)"
            #expect(geometry.tileRect(scale: tile.scale, column: tile.column, row: tile.row) == rect(tile.levelRect), "\(label)")
            #expect(geometry.path(scale: tile.scale, column: tile.column, row: tile.row) == tile.path, "\(label)")
            #expect(geometry.storedPaths(scale: tile.scale, column: tile.column, row: tile.row).first == tile.path)
            let asked = try #require(geometry.tile(region: rect(tile.region), size: rect(tile.levelRect).size))
            // A level that fits in one tile is asked for as the same request at every coarser scale: the first wins.
            #expect(asked == (tile.scale, tile.column, tile.row)
                    || geometry.path(scale: asked.scale, column: asked.column, row: asked.row) == tile.path, "\(label)")
        }
    }

    @Test func partsOfTilesAreNamedAsTheVectorsSay() {
        for part in vectors.rects {
            let geometry = IIIFTileGeometry(imageSize: Size(width: part.image[0], height: part.image[1]),
                                            tileWidth: 256, tileHeight: 256)
            #expect(geometry.region(scale: part.scale, levelRect: rect(part.levelRect)) == rect(part.region))
            #expect(geometry.path(scale: part.scale, levelRect: rect(part.levelRect)) == part.path)
        }
    }

    @Test func theDefaultTileSizeIsTheVectorsOne() {
        #expect(IIIFTileGeometry.defaultTileSize == vectors.defaultTileSize)
    }

    @Test func requestsThatAreNotTilesAreNotTaken() {
        let geometry = IIIFTileGeometry(imageSize: Size(width: 1000, height: 600), tileWidth: 256, tileHeight: 256)
        #expect(geometry.tile(region: Rect(x: 0, y: 0, width: 256, height: 256), size: Size(width: 128, height: 128)) == nil)
        #expect(geometry.tile(region: Rect(x: 10, y: 0, width: 256, height: 256), size: Size(width: 256, height: 256)) == nil)
        #expect(geometry.tile(region: Rect(x: 768, y: 512, width: 232, height: 88), size: Size(width: 232, height: 88))! == (1, 3, 2))
        #expect(geometry.tile(region: Rect(x: 512, y: 512, width: 488, height: 88), size: Size(width: 244, height: 44))! == (2, 1, 1))
    }

    /// A tile asked for in either of viewers' size forms: `w,h` is the canonical path's (for a tile that is not the
    /// whole image), `w,` the width alone; both are among the names a static folder may store it under.
    @Test func tilesAreAskedForInEitherSizeForm() {
        let geometry = IIIFTileGeometry(imageSize: Size(width: 4099, height: 5255), tileWidth: 256, tileHeight: 256)
        #expect(geometry.path(scale: 8, column: 2, row: 0, sizeForm: .widthAndHeight)
            == "4096,0,3,2048/1,256/0/default.jpg")
        #expect(geometry.path(scale: 8, column: 2, row: 0, sizeForm: .width) == "4096,0,3,2048/1,/0/default.jpg")
        #expect(geometry.path(scale: 2, column: 1, row: 3, sizeForm: .width, format: "png")
            == "512,1536,512,512/256,/0/default.png")
        for (scale, column, row) in [(8, 2, 0), (1, 0, 0), (4, 4, 5)] {
            let canonical = geometry.path(scale: scale, column: column, row: row)
            #expect(geometry.path(scale: scale, column: column, row: row, sizeForm: .widthAndHeight) == canonical)
            let forms = IIIFTileGeometry.SizeForm.allCases.map {
                geometry.path(scale: scale, column: column, row: row, sizeForm: $0)
            }
            #expect(geometry.storedPaths(scale: scale, column: column, row: row) == forms)
        }
    }

    /// The edge tiles info.json foresees: the level a window shows whole first, then the finer levels, then the
    /// coarser; a level's right column top to bottom, then the rest of its bottom row; no level of one tile (the
    /// whole image), none of more tiles than asked.
    @Test func edgeTilesAreTheHomeLevelsThenTheFinerThenTheCoarser() {
        let geometry = IIIFTileGeometry(imageSize: Size(width: 1533, height: 1107), tileWidth: 256, tileHeight: 256)
        // Levels 1533 x 1107 (6 x 5 tiles), 767 x 554 (3 x 3), 384 x 277 (2 x 2), 192 x 139 (one tile).
        let half = [(2, 2, 0), (2, 2, 1), (2, 2, 2), (2, 0, 2), (2, 1, 2)], quarter = [(4, 1, 0), (4, 1, 1), (4, 0, 1)]
        let whole = (0..<5).map { (1, 5, $0) } + (0..<5).map { (1, $0, 4) }
        let inWindow = geometry.edgeTiles(ofLevelsUpTo: 64, view: Size(width: 1024, height: 768))
        #expect(inWindow.elementsEqual(half + whole + quarter) { $0 == $1 })
        #expect(geometry.edgeTiles(ofLevelsUpTo: 64, view: Size(width: 2000, height: 2000))
            .elementsEqual(whole + half + quarter) { $0 == $1 })
        #expect(geometry.edgeTiles(ofLevelsUpTo: 64, view: Size(width: 300, height: 300))
            .elementsEqual(quarter + half + whole) { $0 == $1 }, "no level fits: the coarsest first, then zooming in")
        #expect(geometry.edgeTiles(ofLevelsUpTo: 9, view: Size(width: 1024, height: 768))
            .elementsEqual(half + quarter) { $0 == $1 })
        #expect(IIIFTileGeometry(imageSize: Size(width: 200, height: 100), tileWidth: 256, tileHeight: 256)
            .edgeTiles(ofLevelsUpTo: 64, view: Size(width: 1024, height: 768)).isEmpty)
    }
}
