import Testing
@testable import Tessera

/// Odd sizes that catch rounding mistakes: 1, primes, and one either side of powers of two.
private let sides = [1, 2, 3, 7, 13, 31, 33, 127, 129, 255, 257, 509, 511, 513, 1000, 1023, 1025]
/// Tile sizes with the overlaps a tile of that size allows (at most half the tile).
private let tilings: [(tileSize: Int, overlaps: [Int])] = [(1, [0]), (254, [0, 1, 2]), (256, [0, 1, 2]), (512, [0, 1, 2])]

private func ceilDiv(_ a: Int, _ b: Int) -> Int { (a + b - 1) / b }

/// The size of level `depth`: the image size divided by 2^depth, rounding up.
private func expectedSize(_ image: Size, depth: Int) -> Size {
    Size(width: ceilDiv(image.width, 1 << depth), height: ceilDiv(image.height, 1 << depth))
}

/// Checks one axis of a level's grid: the cells (tile rects without overlap) partition `0 ..< length` in order,
/// and each span is its cell grown by the overlap on interior edges only, clipped to the level.
private func checkAxis(_ spans: [Range<Int>], length: Int, tileSize: Int, overlap: Int) {
    #expect(spans.count == ceilDiv(length, tileSize))
    for (index, span) in spans.enumerated() {
        let cell = index * tileSize ..< min(length, (index + 1) * tileSize)
        let grownBefore = index > 0 ? min(overlap, cell.lowerBound) : 0
        let grownAfter = index + 1 < spans.count ? min(overlap, length - cell.upperBound) : 0
        #expect(span == cell.lowerBound - grownBefore ..< cell.upperBound + grownAfter,
                "tile \(index) of \(spans.count) along \(length) pixels, tile \(tileSize), overlap \(overlap)")
    }
    #expect(spans.first?.lowerBound == 0)
    #expect(spans.last?.upperBound == length)
}

/// Level sizes, grids and tile rectangles of `PyramidPlan` over odd sizes.
@Suite struct PyramidPlanTests {
    @Test func everyLevelHalvesRoundingUpDownToTheDepthAsked() throws {
        for width in sides {
            for height in sides {
                let image = Size(width: width, height: height)
                for (tileSize, _) in tilings {
                    let onePixel = try PyramidPlan(imageSize: image, tileSize: tileSize, depth: .onePixel)
                    var log2 = 0
                    while (1 << log2) < max(width, height) { log2 += 1 }
                    #expect(onePixel.levels.count == log2 + 1, "\(image)")
                    #expect(onePixel.levels.last?.size == Size(width: 1, height: 1))

                    let oneTile = try PyramidPlan(imageSize: image, tileSize: tileSize, depth: .oneTile)
                    var fits = 0
                    while ceilDiv(width, 1 << fits) > tileSize || ceilDiv(height, 1 << fits) > tileSize { fits += 1 }
                    #expect(oneTile.levels.count == fits + 1, "\(image), tile \(tileSize)")
                    #expect(oneTile.levels.last?.tileCount == 1)

                    let one = try PyramidPlan(imageSize: image, tileSize: tileSize, depth: .one)
                    #expect(one.levels.count == 1)

                    for plan in [onePixel, oneTile, one] {
                        for (depth, level) in plan.levels.enumerated() {
                            #expect(level.depth == depth)
                            #expect(level.size == expectedSize(image, depth: depth), "\(image) level \(depth)")
                            #expect(level.scaleFactor == 1 << depth)
                            #expect(level.columns == ceilDiv(level.size.width, tileSize))
                            #expect(level.rows == ceilDiv(level.size.height, tileSize))
                        }
                        #expect(plan.tileCount == plan.levels.reduce(0) { $0 + $1.columns * $1.rows })
                    }
                }
            }
        }
    }

    @Test func tileRectsTileEachLevelExactlyWithOverlapOnInteriorEdgesOnly() throws {
        for width in sides {
            for height in sides {
                for (tileSize, overlaps) in tilings {
                    // Tiles of one pixel make a million tiles at 1000 x 1000: the small sides say all there is.
                    if tileSize == 1 && max(width, height) > 33 { continue }
                    for overlap in overlaps {
                        let plan = try PyramidPlan(imageSize: Size(width: width, height: height), tileSize: tileSize,
                                                   overlap: overlap)
                        for level in plan.levels {
                            // Rects are a column span times a row span: check each axis, then that every rect is the
                            // product of its column's and row's spans.
                            let columns = (0..<level.columns).map {
                                let rect = plan.tileRect(depth: level.depth, column: $0, row: 0)
                                return rect.x ..< rect.x + rect.width
                            }
                            let rows = (0..<level.rows).map {
                                let rect = plan.tileRect(depth: level.depth, column: 0, row: $0)
                                return rect.y ..< rect.y + rect.height
                            }
                            checkAxis(columns, length: level.size.width, tileSize: tileSize, overlap: overlap)
                            checkAxis(rows, length: level.size.height, tileSize: tileSize, overlap: overlap)
                            for row in 0..<level.rows {
                                for column in 0..<level.columns {
                                    let rect = plan.tileRect(depth: level.depth, column: column, row: row)
                                    #expect(rect == Rect(x: columns[column].lowerBound, y: rows[row].lowerBound,
                                                         width: columns[column].count, height: rows[row].count))
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @Test func singleTileLevelsCoverTheWholeLevelWithoutOverlap() throws {
        let plan = try PyramidPlan(imageSize: Size(width: 1, height: 300), tileSize: 254, overlap: 2)
        for level in plan.levels where level.tileCount == 1 {
            #expect(plan.tileRect(depth: level.depth, column: 0, row: 0) == Rect(level.size))
        }
        #expect(plan.levels.map(\.size.height) == [300, 150, 75, 38, 19, 10, 5, 3, 2, 1])
        #expect(plan.levels.allSatisfy { $0.size.width == 1 })
    }

    @Test func impossiblePlansAreRefused() {
        #expect(throws: TesseraError.self) { try PyramidPlan(imageSize: Size(width: 0, height: 5), tileSize: 256) }
        #expect(throws: TesseraError.self) { try PyramidPlan(imageSize: Size(width: 5, height: 5), tileSize: 0) }
        #expect(throws: TesseraError.self) { try PyramidPlan(imageSize: Size(width: 5, height: 5), tileSize: 8193) }
        #expect(throws: TesseraError.self) { try PyramidPlan(imageSize: Size(width: 5, height: 5), tileSize: 4, overlap: 3) }
    }
}
