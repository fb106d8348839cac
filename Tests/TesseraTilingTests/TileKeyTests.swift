import Testing
@testable import TesseraTiling

@Test func tileKeysWithTheSameCoordinatesAreEqual() {
    #expect(TileKey(level: 2, column: 3, row: 4) == TileKey(level: 2, column: 3, row: 4))
    #expect(TileKey(level: 2, column: 3, row: 4) != TileKey(level: 2, column: 4, row: 3))
    #expect(TileKey(level: 2, column: 3, row: 4).description == "2/3_4")
}

@Test func ancestorsHalveTheGridIndicesPerLevel() {
    let key = TileKey(level: 3, column: 13, row: 6)
    #expect(key.ancestor(levelsUp: 0) == key)
    #expect(key.ancestor(levelsUp: 1) == TileKey(level: 2, column: 6, row: 3))
    #expect(key.ancestor(levelsUp: 3) == TileKey(level: 0, column: 1, row: 0))
}

@Test func childrenAreTheTwoByTwoFinerTilesRowByRow() {
    let key = TileKey(level: -1, column: 2, row: 5)
    #expect(key.children == [
        TileKey(level: 0, column: 4, row: 10), TileKey(level: 0, column: 5, row: 10),
        TileKey(level: 0, column: 4, row: 11), TileKey(level: 0, column: 5, row: 11),
    ])
    #expect(key.children.allSatisfy { $0.ancestor(levelsUp: 1) == key })
}
