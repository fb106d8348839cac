import Tessera
import TesseraTiling
import XCTest

@testable import TesseraViewer

final class TileImageTests: XCTestCase {
    private let fakeTexture = OpaquePointer(bitPattern: 0x1000)!

    func testTextureIsMadeOnceAndBuriedWhenTheTileIsDropped() {
        let ledger = TextureLedger()
        var uploads = 0
        var tile: TileImage? = TileImage(
            pixels: ImageBuffer(width: 4, height: 2, format: .rgba8), isOpaque: true, ledger: ledger)
        for _ in 0..<3 {
            XCTAssertEqual(tile?.texture { _ in uploads += 1; return fakeTexture }, fakeTexture)
        }
        XCTAssertEqual(uploads, 1)
        XCTAssertEqual(ledger.bytes.live, 32)
        tile = nil
        XCTAssertEqual(ledger.bytes.live, 0)
        XCTAssertEqual(ledger.bytes.peak, 32)
        XCTAssertEqual(ledger.takeBuried().map(\.pointer), [fakeTexture])
        XCTAssertTrue(ledger.takeBuried().isEmpty)
    }

    func testTexturesFollowTheCacheBudget() {
        // Three 32-byte tiles in a 64-byte cache: the least recently used one is evicted and its texture buried.
        let ledger = TextureLedger()
        let cache = TileCache<TileImage>(byteBudget: 64)
        for column in 0..<3 {
            let tile = TileImage(
            pixels: ImageBuffer(width: 4, height: 2, format: .rgba8), isOpaque: true, ledger: ledger)
            _ = tile.texture { _ in fakeTexture }
            cache.insert(tile, for: TileKey(level: 0, column: column, row: 0), cost: tile.bytes, arrivalTime: 0)
        }
        XCTAssertEqual(cache.statistics.bytes, 64)
        XCTAssertEqual(ledger.bytes.live, 64)
        XCTAssertEqual(ledger.takeBuried().count, 1)
    }

    func testPlacementWidensFractionalCropsToWholePixels() {
        let ledger = TextureLedger()
        let tile = TileImage(
            pixels: ImageBuffer(width: 256, height: 256, format: .rgba8), isOpaque: true, ledger: ledger)
        let viewport = ScrollViewport(contentSize: PixelSize(width: 1024, height: 1024),
                                      viewSize: Size2D(width: 512, height: 512))
        // A coarse tile (1/4x) standing in for content points 256..<512: its pixels 64..<128, and a crop that
        // starts mid-pixel widens to the whole pixel, its destination with it.
        let command = TileDrawCommand(
            key: TileKey(level: -2, column: 0, row: 0), tile: tile,
            sourceRect: Rect2D(x: 64.5, y: 64, width: 63.5, height: 64),
            destinationRect: Rect2D(x: 258, y: 256, width: 254, height: 256), alpha: 1, role: .coarserPlaceholder)
        let (source, destination) = Viewer.placement(of: command, viewport: viewport, pixelsPerPoint: 1)
        XCTAssertEqual([source.x, source.y, source.w, source.h], [64, 64, 64, 64])
        // Zoom 0.5: content 256 -> 128 view points.
        XCTAssertEqual([destination.x, destination.y, destination.w, destination.h], [128, 128, 128, 128])
    }
}
