import Testing
@testable import Tessera

/// The marker tokenizer on hand-made bytes: segments by their length, fill bytes, garbage, and entropy-coded data
/// that holds stuffed zeros and restart markers, whether the bytes come whole, as a growing prefix or in windows.
@Suite struct JPEGMarkerTokenizerTests {
    /// SOI, APP0 (3 payload bytes), garbage, fill bytes and DQT (1), SOS (2), entropy data with FF00, RST0 and
    /// FF FF RST1 in it, then a fill byte and EOI.
    let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x05, 1, 2, 3, 0x17, 0xFF, 0x00, 0xFF, 0xFF, 0xDB, 0x00, 0x03, 9,
                          0xFF, 0xDA, 0x00, 0x04, 7, 7, 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF, 0xD1, 0x78,
                          0xFF, 0xFF, 0xD9]

    /// Each token as (marker or nil for entropy data, start, end).
    private func describe(_ token: JPEGToken) -> (UInt8?, Int, Int) {
        switch token {
        case let .segment(segment): return (segment.marker, segment.offset, segment.end)
        case let .entropyCodedData(range): return (nil, range.lowerBound, range.upperBound)
        }
    }

    private let expected: [(UInt8?, Int, Int)] = [(0xD8, 0, 2), (0xE0, 2, 9), (0xDB, 13, 18), (0xDA, 18, 24),
                                                  (nil, 24, 36), (0xD9, 36, 38)]

    private func matches(_ tokens: [(UInt8?, Int, Int)]) -> Bool {
        tokens.count == expected.count && zip(tokens, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 }
    }

    @Test func wholeBytes() {
        var tokenizer = JPEGMarkerTokenizer()
        var tokens: [(UInt8?, Int, Int)] = []
        bytes.withUnsafeBytes { data in
            while let token = tokenizer.next(in: data) { tokens.append(describe(token)) }
        }
        #expect(matches(tokens))
    }

    @Test func aPrefixGrowingAByteAtATime() {
        var tokenizer = JPEGMarkerTokenizer()
        var tokens: [(UInt8?, Int, Int)] = []
        for count in 1...bytes.count {
            Array(bytes[..<count]).withUnsafeBytes { data in
                while let token = tokenizer.next(in: data) { tokens.append(describe(token)) }
            }
        }
        #expect(matches(tokens))
    }

    /// Four bytes hold any marker and its length once the fill bytes before it are behind.
    @Test func windowsOfFourBytesFromWhereItResumes() {
        var tokenizer = JPEGMarkerTokenizer()
        var tokens: [(UInt8?, Int, Int)] = []
        for _ in 0..<100 where tokenizer.position < bytes.count {
            let start = tokenizer.position
            Array(bytes[start..<min(bytes.count, start + 4)]).withUnsafeBytes { data in
                if let token = tokenizer.next(in: data, at: start) { tokens.append(describe(token)) }
            }
        }
        #expect(matches(tokens))
    }
}
