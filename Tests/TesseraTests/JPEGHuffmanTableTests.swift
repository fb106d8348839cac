import Testing
@testable import Tessera

/// Huffman tables from DHT segments: decoding a canonical code, and refusing tables that cannot be one.
@Suite struct JPEGHuffmanTableTests {
    @Test func aCanonicalCodeDecodesItsSymbols() throws {
        // Two 2-bit codes (00 -> 5, 01 -> 7) and one 3-bit code (100 -> 9).
        _ = try JPEGHuffmanTable(counts: [0, 2, 1] + [Int](repeating: 0, count: 13), symbols: [5, 7, 9], name: "t")
    }

    /// More codes of a length than that length has room for used to write past the lookup table before the check
    /// (found by fuzzing): it is a typed error now.
    @Test func moreCodesThanFitAreCorrupt() {
        for counts in [[3] + [Int](repeating: 0, count: 15), [0, 5] + [Int](repeating: 0, count: 14),
                       [0, 0, 0, 200] + [Int](repeating: 0, count: 12)] {
            let symbols = [UInt8](repeating: 1, count: counts.reduce(0, +))
            #expect(throws: TesseraError.self, "\(counts.prefix(4))") {
                try JPEGHuffmanTable(counts: counts, symbols: symbols, name: "t")
            }
        }
    }
}
