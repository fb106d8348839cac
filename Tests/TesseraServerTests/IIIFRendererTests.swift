import Testing
@testable import Tessera
@testable import TesseraServer

@Suite struct IIIFRendererTests {
    private func reduction(_ region: String, _ size: String, image: Tessera.Size = Tessera.Size(width: 8123, height: 6000)) throws -> Int {
        let request = try IIIFRequest(region: region, size: size, rotation: "0", qualityAndFormat: "default.jpg")
        return IIIFRenderer.reduction(for: try request.resolve(for: image, limits: IIIFLimits()))
    }

    @Test func aLevelWithinAPixelOfTheSizeIsReadNotOneTwiceAsLarge() throws {
        #expect(try reduction("0,0,2048,2048", "256,") == 8, "a whole tile")
        #expect(try reduction("6144,4096,1979,2048", "248,") == 8, "an edge tile, its height rounded to 257")
        #expect(try reduction("0,0,2048,2048", "258,") == 4, "two pixels over is another level")
        #expect(try reduction("full", "254,") == 32, "the 254x188 level for a 254-pixel thumbnail")
        let narrow = Tessera.Size(width: 4099, height: 5255)
        #expect(try reduction("6144,2048,409,1024", "103,") == 4, "a height two pixels over, from a narrow tile's ratio")
        #expect(try reduction("4096,0,3,2048", "1,", image: narrow) == 2,
                "a 3-pixel sliver asked 1 x 683: the level of 1,024 rows, not one of 2")
    }

    @Test func aOnePixelAnswerReadsNoFurtherThanTheRegionsSize() throws {
        #expect(try reduction("0,0,3,3", "1,1") == 2)
        #expect(try reduction("full", "1,1") == 4096)
    }
}
