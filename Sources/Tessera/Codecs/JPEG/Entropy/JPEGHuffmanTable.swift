/// One Huffman table from a DHT segment, ready to decode: codes of up to 9 bits come from one table lookup,
/// longer ones from the canonical code's per-length limits (ITU T.81 F.2.2.3).
struct JPEGHuffmanTable {
    /// Bits looked up at once.
    static let lookupBits = 9
    /// For each 9-bit prefix: the code's length in the high byte and its symbol in the low byte, 0 when the code
    /// is longer than 9 bits.
    private var lookup: [UInt16]
    /// For each length 1...16: the largest code of that length (-1 when none), and the index in `symbols` of the
    /// first code of that length minus that code.
    private var maxCode: [Int32]
    private var offset: [Int32]
    private var symbols: [UInt8]

    /// Parses one table (16 counts, then the symbols) from `bytes` at `start`; returns the table and the index
    /// after it.
    static func parse(_ bytes: [UInt8], at start: Int, name: String) throws -> (table: JPEGHuffmanTable, end: Int) {
        guard start + 16 <= bytes.count else { throw TesseraError.corrupt(path: name, detail: "a Huffman table is cut short") }
        let counts = bytes[start..<start + 16].map(Int.init)
        let total = counts.reduce(0, +)
        guard total <= 256, start + 16 + total <= bytes.count else {
            throw TesseraError.corrupt(path: name, detail: "a Huffman table declares \(total) codes")
        }
        return (try JPEGHuffmanTable(counts: counts, symbols: Array(bytes[start + 16..<start + 16 + total]), name: name),
                start + 16 + total)
    }

    /// A table with no codes: every decode fails. Stands in where a scan has no table of a kind.
    static let empty = JPEGHuffmanTable()

    private init() {
        lookup = [UInt16](repeating: 0, count: 1 << Self.lookupBits)
        maxCode = [Int32](repeating: -1, count: 17)
        offset = [Int32](repeating: 0, count: 17)
        symbols = []
    }

    init(counts: [Int], symbols: [UInt8], name: String) throws {
        self.symbols = symbols
        lookup = [UInt16](repeating: 0, count: 1 << Self.lookupBits)
        maxCode = [Int32](repeating: -1, count: 17)
        offset = [Int32](repeating: 0, count: 17)
        var code = 0, index = 0
        for length in 1...16 {
            let count = counts[length - 1]
            offset[length] = Int32(index - code)
            for _ in 0..<count {
                // A complete code of this length leaves no room for more; more codes than fit is corrupt.
                guard code < 1 << length else {
                    throw TesseraError.corrupt(path: name, detail: "a Huffman table has more codes than fit in \(length) bits")
                }
                if length <= Self.lookupBits {
                    let shift = Self.lookupBits - length
                    for fill in 0..<(1 << shift) {
                        lookup[code << shift | fill] = UInt16(length << 8) | UInt16(symbols[index])
                    }
                }
                code += 1
                index += 1
            }
            if count > 0 { maxCode[length] = Int32(code - 1) }
            code <<= 1
        }
    }

    /// Decodes one symbol from the reader, or nil when the bits form no code.
    @inline(__always)
    func decode(_ reader: inout JPEGEntropyReader) -> UInt8? {
        reader.fill()
        let entry = lookup[Int(reader.peek(Self.lookupBits))]
        if entry != 0 {
            reader.consume(Int(entry >> 8))
            return UInt8(truncatingIfNeeded: entry)
        }
        let bits = reader.peek(16)
        for length in (Self.lookupBits + 1)...16 {
            let code = Int32(bits >> (16 - length))
            if code <= maxCode[length] {
                reader.consume(length)
                let index = Int(code + offset[length])
                return index < symbols.count ? symbols[index] : nil
            }
        }
        return nil
    }
}
