import Testing
@testable import TesseraTiling

@Test func tileKeysWithTheSameCoordinatesAreEqual() {
    #expect(TileKey(level: 2, column: 3, row: 4) == TileKey(level: 2, column: 3, row: 4))
    #expect(TileKey(level: 2, column: 3, row: 4) != TileKey(level: 2, column: 4, row: 3))
    #expect(TileKey(level: 2, column: 3, row: 4).description == "2/3_4")
}
