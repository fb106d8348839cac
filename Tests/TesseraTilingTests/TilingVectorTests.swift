// Checks the shared vectors in Tests/Vectors/tiling.json (schema in Tests/Vectors/README.md) against TiledLayout;
// the browser viewer checks the same file.
import Foundation
import Testing
@testable import TesseraTiling

private struct VectorFile: Decodable {
    var schema: String
    var cases: [VectorCase]
}

private struct VectorCase: Decodable, CustomTestStringConvertible {
    struct Configuration: Decodable {
        var tileWidth: Int
        var tileHeight: Int
        var levelsOfDetail: Int
        var levelsOfDetailBias: Int
        var contentsScale: Double
    }
    struct Size: Decodable { var width: Int, height: Int }
    struct Rect: Decodable { var x: Double, y: Double, width: Double, height: Double }
    struct Expected: Decodable {
        var level: Int?
        var levelIndex: Int?
        var pixelsPerPoint: Double?
        var levelRange: [Int]?
        var visible: [[Int]]
        var prefetch: [[Int]]
    }

    var name: String
    var configuration: Configuration
    var contentSize: Size
    var visibleRect: Rect
    var zoomScale: Double
    var expected: Expected

    var testDescription: String { name }
}

private func loadVectors() throws -> VectorFile {
    let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/tiling.json")
    return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
}

@Test func vectorFileHasTheExpectedSchemaAndCases() throws {
    let file = try loadVectors()
    #expect(file.schema == "tessera-tiling-vectors/1")
    #expect(file.cases.count >= 19)
}

@Test(arguments: try loadVectors().cases)
fileprivate func sharedVectorMatchesTheLayout(_ vector: VectorCase) {
    let configuration = TiledLayerConfiguration(
        tileSize: PixelSize(width: vector.configuration.tileWidth, height: vector.configuration.tileHeight),
        levelsOfDetail: vector.configuration.levelsOfDetail,
        levelsOfDetailBias: vector.configuration.levelsOfDetailBias,
        contentsScale: vector.configuration.contentsScale
    )
    let content = PixelSize(width: vector.contentSize.width, height: vector.contentSize.height)
    let rect = vector.visibleRect
    let plan = TiledLayout(configuration: configuration, contentSize: content)
        .plan(visibleRect: Rect2D(x: rect.x, y: rect.y, width: rect.width, height: rect.height), zoomScale: vector.zoomScale)
    let range = configuration.levelRange(for: content)

    #expect(plan.level?.level == vector.expected.level)
    #expect(plan.level?.pixelsPerPoint == vector.expected.pixelsPerPoint)
    #expect(range.map { [$0.lowerBound, $0.upperBound] } == vector.expected.levelRange)
    #expect(plan.level.flatMap { level in range.map { level.level - $0.lowerBound } } == vector.expected.levelIndex)
    #expect(plan.visible.allSatisfy { $0.key.level == vector.expected.level })
    #expect(plan.visible.map { [$0.key.column, $0.key.row] } == vector.expected.visible)
    #expect(plan.prefetch.map { [$0.key.column, $0.key.row] } == vector.expected.prefetch)
}
