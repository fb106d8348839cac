import Testing
import Tessera
import TesseraTiling
@testable import TesseraViewer

private let tile = PixelSize(width: 256, height: 256)

@Test func tilesAtOrBelowFullResolutionAreTheStoredTiles() {
    let part = SourceTile(key: TileKey(level: -2, column: 3, row: 1), pixelSize: PixelSize(width: 100, height: 256),
                          tileSize: tile, shift: -2)
    #expect(part.depth == 2)
    #expect(part.region == Rect(x: 768, y: 256, width: 100, height: 256))
    #expect(part.magnification == 1)
}

@Test func tilesAboveFullResolutionMagnifyPartOfAFullResolutionTile() {
    // A 2x display at zoom 1: level 0 is 2 pixels per image pixel, so tile (3, 1) of 256 pixels is image
    // pixels 384..<512 by 128..<256, magnified twice.
    let part = SourceTile(key: TileKey(level: 0, column: 3, row: 1), pixelSize: tile, tileSize: tile, shift: 1)
    #expect(part.depth == 0)
    #expect(part.region == Rect(x: 384, y: 128, width: 128, height: 128))
    #expect(part.magnification == 2)
    // An edge tile of odd width covers the half pixel it needs.
    let edge = SourceTile(key: TileKey(level: 0, column: 0, row: 0), pixelSize: PixelSize(width: 51, height: 8),
                          tileSize: tile, shift: 1)
    #expect(edge.region == Rect(x: 0, y: 0, width: 26, height: 4))
}

@Test func depthsRunUntilTheImageFitsOneTile() {
    func depths(_ width: Int, _ height: Int) -> Int {
        ImageFileSource.depthsToOneTile(contentSize: PixelSize(width: width, height: height), tileSize: tile)
    }
    #expect(depths(256, 100) == 1)
    #expect(depths(257, 100) == 2)
    #expect(depths(1024, 512) == 3)
    #expect(depths(1025, 512) == 4)
}

@Test func iiifRequestsAskForTheRegionAtItsDepthSize() throws {
    let json = #"{"id": "http://h/iiif/map/", "width": 1000, "height": 600, "tiles": [{"width": 512}]}"#
    let info = try IIIFInfo(json: Array(json.utf8), url: "http://h/iiif/map/info.json")
    #expect(info.id == "http://h/iiif/map")
    #expect(info.tileSize == PixelSize(width: 512, height: 512))
    // Depth 1 tile (0, 0) of 500x300 pixels is the whole image, named `full` as IIIFTileGeometry names it.
    #expect(info.url(depth: 1, region: Rect(x: 0, y: 0, width: 500, height: 300))
        == "http://h/iiif/map/full/500,300/0/default.jpg")
    #expect(info.url(depth: 0, region: Rect(x: 512, y: 512, width: 488, height: 88))
        == "http://h/iiif/map/512,512,488,88/488,88/0/default.jpg")
    #expect(throws: ViewerError.self) { try IIIFInfo(json: Array(#"{"width": 3}"#.utf8), url: "u") }
}
