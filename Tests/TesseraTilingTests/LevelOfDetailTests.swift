import Testing
@testable import TesseraTiling

private let largeContent = PixelSize(width: 100_000, height: 100_000)

private func levels(lod: Int, bias: Int, contentsScale: Double = 1, content: PixelSize = largeContent) -> [Int] {
    TiledLayerConfiguration(levelsOfDetail: lod, levelsOfDetailBias: bias, contentsScale: contentsScale)
        .levels(for: content).map(\.level)
}

@Test func defaultConfigurationIsCATiledLayers() {
    let configuration = TiledLayerConfiguration()
    #expect(configuration.tileSize == PixelSize(width: 256, height: 256))
    #expect(configuration.levelsOfDetail == 1)
    #expect(configuration.levelsOfDetailBias == 0)
    #expect(configuration.contentsScale == 1)
    #expect(configuration.fadeDuration == 0.25)
    #expect(levels(lod: 1, bias: 0) == [0])
}

@Test(arguments: [
    (4, 1, [1, 0, -1, -2, -3]),
    (1, 6, [6, 5, 4, 3, 2, 1, 0]),
    (0, 0, []),
    (0, 2, [2, 1]),
    (1, 0, [0]),
    (2, 0, [0, -1]),
    (3, 2, [2, 1, 0, -1, -2]),
    (5, 0, [0, -1, -2, -3, -4]),
])
func levelTableRunsFromBiasDownToOneMinusLevelsOfDetail(lod: Int, bias: Int, expected: [Int]) {
    #expect(levels(lod: lod, bias: bias) == expected)
}

@Test func levelsOfDetailFourBiasOneDrawAtTwoOneHalfQuarterEighth() {
    let densities = TiledLayerConfiguration(levelsOfDetail: 4, levelsOfDetailBias: 1)
        .levels(for: largeContent).map(\.pixelsPerPoint)
    #expect(densities == [2, 1, 0.5, 0.25, 0.125])
}

@Test func seedImageInPhoneViewGetsLevelsOneXToSixtyFourX() {
    // The seed's 11935x8554 image in a 375x268 view: imageScale = 375/11935, ceil(log2(31.83)) + 1 = 6.
    let content = PixelSize(width: 11935, height: 8554)
    let bias = PowerOfTwo.ceilLog2(11935.0 / 375.0) + 1
    #expect(bias == 6)
    let configuration = TiledLayerConfiguration(levelsOfDetail: 1, levelsOfDetailBias: bias)
    #expect(configuration.levels(for: content).map(\.pixelsPerPoint) == [64, 32, 16, 8, 4, 2, 1])
    #expect(configuration.level(forZoom: 0.0313, contentSize: content)?.level == 0)
    #expect(configuration.level(forZoom: 64, contentSize: content)?.level == 6)
    #expect(configuration.level(forZoom: 1000, contentSize: content)?.level == 6)
}

@Test func levelsUnderOnePixelAreDropped() {
    // The short side is 4 points: at 1/4x it is one pixel, at 1/8x half a pixel.
    let thin = PixelSize(width: 4, height: 100)
    #expect(levels(lod: 5, bias: 0, content: thin) == [0, -1, -2])
    // On a 2x screen 1/8x still has a whole pixel.
    #expect(levels(lod: 5, bias: 0, contentsScale: 2, content: thin) == [0, -1, -2, -3])
    // Levels at and above 1x are never dropped, even for a one-point layer.
    #expect(levels(lod: 3, bias: 1, content: PixelSize(width: 1, height: 1)) == [1, 0])
}

@Test(arguments: [1.0, 2.0, 3.0])
func levelAtZoomIsSmallestPowerOfTwoAtLeastTheZoom(contentsScale: Double) throws {
    let configuration = TiledLayerConfiguration(levelsOfDetail: 4, levelsOfDetailBias: 3, contentsScale: contentsScale)
    let cases: [(zoom: Double, level: Int)] = [
        (0.3, -1), (0.5, -1), (0.75, 0), (1, 0), (1.5, 1), (2, 1), (3, 2),
    ]
    for (zoom, expected) in cases {
        let level = try #require(configuration.level(forZoom: zoom, contentSize: largeContent))
        #expect(level.level == expected, "zoom \(zoom)")
        #expect(level.pixelsPerPoint == contentsScale * PowerOfTwo.value(expected), "zoom \(zoom)")
        #expect(level.pixelsPerPoint >= zoom * contentsScale)
    }
}

@Test func exactPowersOfTwoPickTheirOwnLevel() {
    let configuration = TiledLayerConfiguration(levelsOfDetail: 8, levelsOfDetailBias: 8)
    for exponent in -7...7 {
        let zoom = PowerOfTwo.value(exponent)
        #expect(configuration.level(forZoom: zoom, contentSize: largeContent)?.level == exponent)
        #expect(configuration.level(forZoom: zoom.nextUp, contentSize: largeContent)?.level == exponent + 1)
    }
}

@Test func zoomOutsideTheLevelsIsClampedToTheEnds() {
    let configuration = TiledLayerConfiguration(levelsOfDetail: 2, levelsOfDetailBias: 1)
    #expect(configuration.level(forZoom: 100, contentSize: largeContent)?.level == 1)
    #expect(configuration.level(forZoom: 0.01, contentSize: largeContent)?.level == -1)
    let single = TiledLayerConfiguration()
    #expect(single.level(forZoom: 3, contentSize: largeContent)?.level == 0)
    #expect(single.level(forZoom: 0.3, contentSize: largeContent)?.level == 0)
    #expect(TiledLayerConfiguration(levelsOfDetail: 0).level(forZoom: 1, contentSize: largeContent) == nil)
}

@Test func tilesCoverTileSizeOverDensityPointsAndEdgeTilesAreCutShort() {
    let content = PixelSize(width: 600, height: 300)
    let configuration = TiledLayerConfiguration(levelsOfDetail: 2, levelsOfDetailBias: 1)
    let double = LevelOfDetail(level: 1, configuration: configuration, contentSize: content)
    #expect(double.tileSizeInPoints == Size2D(width: 128, height: 128))
    #expect(double.gridSize == (columns: 5, rows: 3))
    #expect(double.rect(column: 4, row: 2) == Rect2D(x: 512, y: 256, width: 88, height: 44))
    #expect(double.pixelSize(column: 4, row: 2) == PixelSize(width: 176, height: 88))
    let half = LevelOfDetail(level: -1, configuration: configuration, contentSize: content)
    #expect(half.tileSizeInPoints == Size2D(width: 512, height: 512))
    #expect(half.gridSize == (columns: 2, rows: 1))
    #expect(half.rect(column: 1, row: 0) == Rect2D(x: 512, y: 0, width: 88, height: 300))
    #expect(half.pixelSize(column: 1, row: 0) == PixelSize(width: 44, height: 150))
}
