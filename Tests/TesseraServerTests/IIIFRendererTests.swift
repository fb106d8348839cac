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

    /// A plan's padding (the image's last column, lost to a level halved rounding down) repeats the read's last
    /// column, and only the axis further off is resampled: the answer is the rows resampled and that column again.
    @Test func paddingRepeatsTheLastColumnAndResamplesOnlyTheRows() throws {
        var pixels = ImageBuffer(width: 40, height: 32, format: .rgb8)
        for index in pixels.bytes.indices { pixels.bytes[index] = UInt8(truncatingIfNeeded: index * 37 / 7) }
        let source = try ImageSource(bytes: try ImageWriter.encode(pixels, as: .png), name: "ramps.png")
        let request = IIIFResolvedRequest(region: Rect(x: 0, y: 0, width: 40, height: 32),
                                          size: Tessera.Size(width: 41, height: 34), rotation: 0, mirror: false,
                                          quality: .default, format: "png")
        let plan = try IIIFRenderer.plan(request, from: source, padding: Tessera.Size(width: 1, height: 0))
        let answer = try ImageSource(bytes: try IIIFRenderer.render(plan, quality: 85).bytes).makeReader().readAll()
        let rows = try ResamplingReader(source: BufferReader(pixels), size: Tessera.Size(width: 40, height: 34)).readAll()
        #expect(answer.size == Tessera.Size(width: 41, height: 34))
        for y in 0..<34 {
            let answerRow = Array(answer.bytes[(y * 41 * 3)..<((y + 1) * 41 * 3)])
            let resampled = Array(rows.bytes[(y * 40 * 3)..<((y + 1) * 40 * 3)])
            #expect(answerRow == resampled + resampled.suffix(3), "row \(y)")
        }
    }

    /// A JPEG held in memory (one stored tile) answered as a JPEG of its colours goes through its YCbCr planes;
    /// another format, a rotation, gray, or a file goes through pixels. Both answers are the size asked.
    @Test func aStoredTileAnsweredAsAJPEGIsRenderedInItsPlanes() throws {
        var pixels = ImageBuffer(width: 64, height: 48, format: .rgb8)
        for index in pixels.bytes.indices { pixels.bytes[index] = UInt8(truncatingIfNeeded: index * 37 / 7) }
        let source = try ImageSource(bytes: try ImageWriter.encode(pixels, as: .jpeg), name: "tile.jpg")
        func plan(format: String = "jpg", rotation: Int = 0, quality: IIIFRequest.Quality = .default) throws -> IIIFRenderer.Plan {
            try IIIFRenderer.plan(IIIFResolvedRequest(region: Rect(x: 0, y: 0, width: 64, height: 48),
                                                      size: Tessera.Size(width: 33, height: 25), rotation: rotation,
                                                      mirror: false, quality: quality, format: format), from: source)
        }
        #expect(try plan().isPlanar && plan(quality: .color).isPlanar)
        #expect(try !plan(format: "png").isPlanar && !plan(rotation: 90).isPlanar && !plan(quality: .gray).isPlanar)
        for plan in [try plan(), try plan(format: "png"), try plan(rotation: 90)] {
            let answer = try ImageSource(bytes: try IIIFRenderer.render(plan, quality: 85).bytes).properties
            #expect(answer.size == (plan.request.rotation == 90 ? Tessera.Size(width: 25, height: 33) : plan.request.size))
        }
    }

    @Test func aOnePixelAnswerReadsNoFurtherThanTheRegionsSize() throws {
        #expect(try reduction("0,0,3,3", "1,1") == 2)
        #expect(try reduction("full", "1,1") == 4096)
    }
}
