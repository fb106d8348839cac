import Testing
@testable import Tessera

/// Huffman tables from DHT segments: decoding a canonical code, refusing tables that cannot be one, and walking past
/// a block's AC codes several at a lookup exactly where decoding them one by one goes.
@Suite struct JPEGHuffmanTableTests {
    @Test func aCanonicalCodeDecodesItsSymbols() throws {
        // Two 2-bit codes (00 -> 5, 01 -> 7) and one 3-bit code (100 -> 9); 11 begins no code.
        let table = try JPEGHuffmanTable(counts: [0, 2, 1] + [Int](repeating: 0, count: 13), symbols: [5, 7, 9],
                                         isAC: false, name: "t")
        // 100 01 00 100, then 11.
        let bytes: [UInt8] = [0b1000_1001, 0b0011_0000] + [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeBufferPointer { bytes in
            var cursor = JPEGBitCursor(bytes: bytes.baseAddress!, bitCount: 16)
            #expect((0..<4).map { _ in table.lookup.decode(&cursor) } == [9, 7, 5, 9])
            #expect(table.lookup.decode(&cursor) == nil)
        }
    }

    /// More codes of a length than that length has room for used to write past the lookup table before the check
    /// (found by fuzzing): it is a typed error now.
    @Test func moreCodesThanFitAreCorrupt() {
        for counts in [[3] + [Int](repeating: 0, count: 15), [0, 5] + [Int](repeating: 0, count: 14),
                       [0, 0, 0, 200] + [Int](repeating: 0, count: 12)] {
            let symbols = [UInt8](repeating: 1, count: counts.reduce(0, +))
            #expect(throws: TesseraError.self, "\(counts.prefix(4))") {
                try JPEGHuffmanTable(counts: counts, symbols: symbols, isAC: true, name: "t")
            }
        }
    }

    /// Walking past a block's AC codes several at a lookup (`skip`) ends where decoding them one by one does: over
    /// every block of noisy and smooth JPEGs at several qualities (optimized tables too: codes of every length),
    /// and, starting at each of the first 4096 bits of random data, failing where that fails.
    @Test func skippingACCodesEndsWhereDecodingThemDoes() throws {
        let block = UnsafeMutablePointer<Int16>.allocate(capacity: 64)
        defer { block.deallocate() }
        /// Whether the AC codes at bit `start` of `data` form a block within the data, and the bit after it,
        /// decoded one by one and skipped.
        func walks(_ data: [UInt8], from start: Int, table: JPEGHuffmanTable.Lookup)
            -> (decoded: Bool, end: Int, skipped: Bool, skipEnd: Int) {
            data.withUnsafeBufferPointer { bytes in
                var decoding = JPEGBitCursor(bytes: bytes.baseAddress! + start / 8,
                                             bitCount: 8 * (bytes.count - 16 - start / 8))
                decoding.fill()
                decoding.consume(start % 8)
                var skipping = decoding
                let order = JPEGScanState.naturalOrder
                let decoded = table.decodeSequentialAC(&decoding, into: block, order: order, keeping: true)
                    && !decoding.overran
                let skipped = table.decodeSequentialAC(&skipping, into: block, order: order, keeping: false)
                    && !skipping.overran
                return (decoded, start / 8 * 8 + decoding.position, skipped, start / 8 * 8 + skipping.position)
            }
        }
        var firstTable: JPEGHuffmanTable?
        for (smooth, quality, optimized) in [(false, 100, false), (false, 90, true), (true, 85, false),
                                             (true, 50, true), (false, 30, false)] {
            var options = EncodeOptions()
            options.quality = quality
            options.optimizeHuffman = optimized
            options.subsampling = .s444
            let jpeg = try ImageWriter.encode(TestImages.make(width: 128, height: 128, format: .gray8, smooth: smooth),
                                              as: .jpeg, options: options)
            let scan = try #require(try JPEGScanIndex(input: .bytes(jpeg, name: "t")).scans.first)
            let data = Self.unstuffed(jpeg[scan.dataOffset...])
            firstTable = firstTable ?? scan.acTables[0]
            var position = 0
            for blockIndex in 0..<(16 * 16) {
                // Past the block's DC difference.
                let afterDC = data.withUnsafeBufferPointer { bytes in
                    var cursor = JPEGBitCursor(bytes: bytes.baseAddress! + position / 8,
                                               bitCount: 8 * (bytes.count - 16 - position / 8))
                    cursor.fill()
                    cursor.consume(position % 8)
                    _ = scan.dcTables[0].lookup.decodeCoefficient(&cursor)
                    return position / 8 * 8 + cursor.position
                }
                let walked = walks(data, from: afterDC, table: scan.acTables[0].lookup)
                #expect(walked.decoded && walked.skipped && walked.end == walked.skipEnd,
                        "quality \(quality), block \(blockIndex)")
                position = walked.end
            }
            #expect((position + 7) / 8 == data.count - 16, "quality \(quality): the blocks end where the data does")
        }
        var random = TestRandom(seed: 20)
        let noise = (0..<512).map { _ in UInt8(truncatingIfNeeded: random.next()) } + [UInt8](repeating: 0, count: 16)
        let table = try #require(firstTable).lookup
        var failures = 0
        for start in 0..<4096 {
            let walked = walks(noise, from: start, table: table)
            #expect(walked.decoded == walked.skipped && (!walked.decoded || walked.end == walked.skipEnd),
                    "from bit \(start)")
            failures += walked.decoded ? 0 : 1
        }
        #expect(failures > 0 && failures < 4096, "random bits form some blocks and not others")
    }

    /// The same with short codes for runs of 16 zeros and ends of block, which real tables code in 11 and 4 bits:
    /// random blocks of them (some ending at the 63rd coefficient without an end of block) walked back to back.
    @Test func skippingShortRunAndEndCodesEndsWhereDecodingThemDoes() throws {
        // 00 -> EOB, 01 -> ZRL, 100 -> run 0 size 1, 101 -> run 1 size 1, 110 -> run 0 size 2, 111 -> run 3 size 3.
        let symbols: [UInt8] = [0x00, 0xF0, 0x01, 0x11, 0x02, 0x33]
        let table = try JPEGHuffmanTable(counts: [0, 2, 4] + [Int](repeating: 0, count: 13), symbols: symbols,
                                         isAC: true, name: "t")
        let codes = table.lookup.encodingTable
        var random = TestRandom(seed: 21)
        var bits: [Bool] = [], ends: [Int] = []
        func put(_ symbol: UInt8) {
            let code = codes[Int(symbol)], length = Int(code & 0xFF)
            bits += (0..<length).map { code >> (8 + length - 1 - $0) & 1 == 1 }
            bits += (0..<Int(symbol & 15)).map { _ in random.next() & 1 == 1 }
        }
        for _ in 0..<2000 {
            var k = 1
            while k < 64 {
                let symbol = symbols[Int(random.next() % UInt64(symbols.count))]
                let run = Int(symbol >> 4)
                if symbol == 0x00 && random.next() % 4 != 0 { continue }
                if symbol == 0x00 { put(symbol); break }
                if symbol == 0xF0 { if k + 16 < 64 { put(symbol); k += 16 }; continue }
                guard k + run < 64 else { continue }
                put(symbol)
                k += run + 1
            }
            ends.append(bits.count)
        }
        // Then 16 zero bytes, which `JPEGBitCursor` reads past the end.
        var data = [UInt8](repeating: 0, count: (bits.count + 7) / 8 + 16)
        for (index, bit) in bits.enumerated() where bit { data[index / 8] |= 0x80 >> UInt8(index % 8) }
        let block = UnsafeMutablePointer<Int16>.allocate(capacity: 64)
        defer { block.deallocate() }
        data.withUnsafeBufferPointer { bytes in
            var decoding = JPEGBitCursor(bytes: bytes.baseAddress!, bitCount: bits.count)
            var skipping = decoding
            for (index, end) in ends.enumerated() {
                let order = JPEGScanState.naturalOrder
                #expect(table.lookup.decodeSequentialAC(&decoding, into: block, order: order, keeping: true))
                #expect(table.lookup.decodeSequentialAC(&skipping, into: block, order: order, keeping: false))
                #expect(decoding.position == end && skipping.position == end, "block \(index)")
            }
        }
    }

    /// Entropy-coded data as `JPEGBitCursor` reads it: up to the first marker, stuffed zero bytes taken out, then
    /// 16 zero bytes.
    private static func unstuffed(_ data: ArraySlice<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = [], at = data.startIndex
        while at < data.endIndex {
            let byte = data[at]
            if byte == 0xFF {
                // Data's 0xFF has a zero byte stuffed after it; any other byte makes it a marker, which ends the data.
                guard at + 1 < data.endIndex, data[at + 1] == 0 else { break }
                at += 1
            }
            bytes.append(byte)
            at += 1
        }
        return bytes + [UInt8](repeating: 0, count: 16)
    }
}
