import Testing
import Tessera
import TesseraTiling
@testable import TesseraViewer

/// A texture pointer the tests never dereference: only SDL could.
private var fakeTexture: OpaquePointer { OpaquePointer(bitPattern: 0x1000)! }

private func tile(_ width: Int, _ height: Int, ledger: TextureLedger) -> TileImage {
    TileImage(pixels: ImageBuffer(width: width, height: height, format: .rgba8), isOpaque: true, ledger: ledger)
}

@Test func aTextureIsMadeOnceAndBuriedWhenItsTileIsDropped() {
    let ledger = TextureLedger()
    var uploads = 0
    var image: TileImage? = tile(4, 2, ledger: ledger)
    for _ in 0..<3 {
        #expect(image?.texture { _ in uploads += 1; return fakeTexture } == fakeTexture)
    }
    #expect(uploads == 1)
    #expect(ledger.bytes.live == 32)
    image = nil
    #expect(ledger.bytes.live == 0)
    #expect(ledger.bytes.peak == 32)
    #expect(ledger.takeBuried().map(\.pointer) == [fakeTexture])
    #expect(ledger.takeBuried().isEmpty)
}

@Test func texturesFollowTheCacheBudget() {
    // Three 32-byte tiles in a 64-byte cache: the least recently used one is evicted and its texture buried.
    let ledger = TextureLedger()
    let cache = TileCache<TileImage>(byteBudget: 64)
    for column in 0..<3 {
        let image = tile(4, 2, ledger: ledger)
        _ = image.texture { _ in fakeTexture }
        cache.insert(image, for: TileKey(level: 0, column: column, row: 0), cost: image.bytes, arrivalTime: 0)
    }
    #expect(cache.statistics.bytes == 64)
    #expect(ledger.bytes.live == 64)
    #expect(ledger.takeBuried().count == 1)
}

@Test func placementWidensFractionalCropsToWholePixels() {
    let viewport = ScrollViewport(contentSize: PixelSize(width: 1024, height: 1024),
                                  viewSize: Size2D(width: 512, height: 512))
    // A coarse tile (1/4x) standing in for content points 258..<512: its pixels 64.5..<128, widened to the
    // whole pixel 64, and its destination with it, to content point 256.
    let command = TileDrawCommand(
        key: TileKey(level: -2, column: 0, row: 0), tile: tile(256, 256, ledger: TextureLedger()),
        sourceRect: Rect2D(x: 64.5, y: 64, width: 63.5, height: 64),
        destinationRect: Rect2D(x: 258, y: 256, width: 254, height: 256), alpha: 1, role: .coarserPlaceholder)
    let (source, destination) = Viewer.placement(of: command, viewport: viewport, pixelsPerPoint: 1)
    #expect([source.x, source.y, source.w, source.h] == [64, 64, 64, 64])
    // Zoom 0.5: content 256 -> 128 view points.
    #expect([destination.x, destination.y, destination.w, destination.h] == [128, 128, 128, 128])
}
