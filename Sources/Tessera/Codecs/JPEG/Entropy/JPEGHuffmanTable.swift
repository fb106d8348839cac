/// One Huffman table from a DHT segment, ready to decode (ITU T.81 F.2.2.3). The block loops read it through a
/// `Lookup` (plain pointers, no reference counting); the table owns the memory they point at.
struct JPEGHuffmanTable: Sendable {
    /// Bits looked up at once.
    static let lookupBits = 10

    /// The decoding tables, as pointers valid while the table that made them lives.
    struct Lookup {
        /// For each `lookupBits`-bit prefix whose code and the coefficient bits after it fit in the prefix: the
        /// coefficient value (sign-extended, F.2.2.1) in the high 16 bits, then the run (4 bits), the size (4 bits)
        /// and the bits taken by code and value together (8 bits); 0 when they do not fit.
        let fast: UnsafePointer<UInt32>
        /// For each prefix: the code's length in the high byte and its symbol in the low byte, 0 when the code
        /// is longer than `lookupBits`.
        let symbol: UnsafePointer<UInt16>
        /// For each prefix of an AC table's codes: the run/size pairs (code and value bits) that fit in it whole, in
        /// order up to an end of block, walked past at once (`SkipEntry`); `SkipEntry.none` when not even one fits,
        /// and throughout a DC table's.
        let skip: UnsafePointer<UInt16>
        /// For each length 1...16: the largest code of that length (-1 when none), and the index in `symbols` of
        /// the first code of that length minus that code.
        let maxCode: UnsafePointer<Int32>
        let offset: UnsafePointer<Int32>
        /// The symbols in code order, then zeros up to 256.
        let symbols: UnsafePointer<UInt8>
        let symbolCount: Int

        /// Decodes one symbol from the reader, or nil when the bits form no code.
        @_transparent
        func decode<Reader: JPEGBitReading>(_ reader: inout Reader) -> UInt8? {
            reader.fill()
            var entry = symbol[Int(reader.peek(lookupBits))]
            if entry == 0 {
                entry = longCode(reader.peek(16))
                if entry == 0 { return nil }
            }
            reader.consume(Int(entry >> 8))
            return UInt8(truncatingIfNeeded: entry)
        }

        /// A code longer than `lookupBits` at the start of `bits` (the next 16), from the per-length limits: its
        /// length and symbol as in `symbol`, 0 when the bits form no code.
        @inline(never)
        private func longCode(_ bits: UInt32) -> UInt16 {
            for length in (lookupBits + 1)...16 {
                let code = Int32(bits >> (16 - length))
                if code <= maxCode[length] {
                    let index = Int(code + offset[length])
                    return index < symbolCount ? UInt16(length << 8) | UInt16(symbols[index]) : 0
                }
            }
            return 0
        }

        /// Decodes one run/size symbol (F.1.2.2: the run of zeros in the high 4 bits, the size in bits of the
        /// value in the low 4) and the value after it, sign-extended; the value is 0 when the size is. Short codes
        /// take one lookup for all three. Nil when the bits form no code.
        @_transparent
        func decodeCoefficient<Reader: JPEGBitReading>(_ reader: inout Reader) -> (run: Int, size: Int, value: Int)? {
            reader.fill()
            let entry = fast[Int(reader.peek(lookupBits))]
            if entry != 0 {
                reader.consume(Int(entry & 0xFF))
                return (Int(entry >> 12 & 15), Int(entry >> 8 & 15), Int(Int32(bitPattern: entry) >> 16))
            }
            guard let symbol = decode(&reader) else { return nil }
            let size = Int(symbol & 15)
            return (Int(symbol >> 4), size, size == 0 ? 0 : reader.readSigned(size))
        }

        /// The AC coefficients 1...63 of a sequential block (F.2.2.2), this being its AC table: run/size symbols
        /// until EOB, each value stored at its natural position (`order`) in `block` when `keeping`, else walked
        /// past, several codes a lookup where they fit in one (`skip`). False on an invalid code or a run past the
        /// block's end.
        @_transparent
        func decodeSequentialAC<Reader: JPEGBitReading>(_ reader: inout Reader, into block: UnsafeMutablePointer<Int16>,
                                                        order: UnsafePointer<Int>, keeping: Bool) -> Bool {
            var k = 1
            while k < 64 {
                if !keeping {
                    // The codes that fit in the next `lookupBits` bits, unless they reach past the block's end
                    // (which the codes one at a time below then find).
                    reader.fill()
                    let entry = SkipEntry(bits: skip[Int(reader.peek(lookupBits))])
                    if k + entry.advance <= 64 {
                        reader.consume(entry.length)
                        k += entry.advance
                        if entry.endsBlock { return true }
                        continue
                    }
                }
                guard let (run, size, value) = decodeCoefficient(&reader) else { return false }
                if size != 0 {
                    k += run
                    guard k < 64 else { return false }
                    if keeping { block[order[k]] = Int16(truncatingIfNeeded: value) }
                    k += 1
                } else if run == 15 {
                    k += 16
                } else {
                    break
                }
            }
            return true
        }

        /// Each symbol's code for writing it: the code in the high 24 bits and its length in the low 8, 0 for a
        /// symbol the table has no code for.
        var encodingTable: [UInt32] {
            var table = [UInt32](repeating: 0, count: 256)
            var index = 0
            for length in 1...16 where maxCode[length] >= 0 {
                let last = Int(maxCode[length])
                for code in (index - Int(offset[length]))...last {
                    table[Int(symbols[code + Int(offset[length])])] = UInt32(code) << 8 | UInt32(length)
                }
                index = last + Int(offset[length]) + 1
            }
            return table
        }

        private var lookupBits: Int { JPEGHuffmanTable.lookupBits }
    }

    /// One `skip` entry: how many bits the whole run/size pairs at the start of a prefix take, how far they move
    /// along the block's 63 AC coefficients (an end of block counting one, so that it is taken only before the
    /// 63rd), and whether the last of them ends the block.
    struct SkipEntry {
        let bits: UInt16

        /// The pairs' bits (1...`lookupBits`).
        var length: Int { Int(bits & 0xF) }
        /// Coefficients passed: a value's run and itself, 16 for a run of 16 zeros, 1 for an end of block; more
        /// than 64 in `none`.
        var advance: Int { Int(bits >> 4 & 0x7F) }
        /// Whether the last pair is an end of block.
        var endsBlock: Bool { bits & 0x800 != 0 }

        init(bits: UInt16) { self.bits = bits }

        init(length: Int, advance: Int, endsBlock: Bool) {
            bits = UInt16(length | advance << 4 | (endsBlock ? 0x800 : 0))
        }

        /// No whole pair fits: an advance no block has room for.
        static let none = SkipEntry(length: 0, advance: 0x7F, endsBlock: false)
    }

    /// The memory `Lookup` points at: written once in `init`, then only read, so safe to share between threads.
    private final class Storage: @unchecked Sendable {
        let fast = UnsafeMutablePointer<UInt32>.allocate(capacity: 1 << JPEGHuffmanTable.lookupBits)
        let symbol = UnsafeMutablePointer<UInt16>.allocate(capacity: 1 << JPEGHuffmanTable.lookupBits)
        let skip = UnsafeMutablePointer<UInt16>.allocate(capacity: 1 << JPEGHuffmanTable.lookupBits)
        let maxCode = UnsafeMutablePointer<Int32>.allocate(capacity: 17)
        let offset = UnsafeMutablePointer<Int32>.allocate(capacity: 17)
        let symbols = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)

        init() {
            fast.initialize(repeating: 0, count: 1 << JPEGHuffmanTable.lookupBits)
            symbol.initialize(repeating: 0, count: 1 << JPEGHuffmanTable.lookupBits)
            skip.initialize(repeating: SkipEntry.none.bits, count: 1 << JPEGHuffmanTable.lookupBits)
            maxCode.initialize(repeating: -1, count: 17)
            offset.initialize(repeating: 0, count: 17)
            symbols.initialize(repeating: 0, count: 256)
        }

        deinit {
            fast.deallocate()
            symbol.deallocate()
            skip.deallocate()
            maxCode.deallocate()
            offset.deallocate()
            symbols.deallocate()
        }
    }

    private let storage = Storage()
    private var symbolCount = 0

    /// The tables to decode with, valid while this table lives.
    var lookup: Lookup {
        Lookup(fast: storage.fast, symbol: storage.symbol, skip: storage.skip, maxCode: storage.maxCode,
               offset: storage.offset, symbols: storage.symbols, symbolCount: symbolCount)
    }

    /// Parses one table (16 counts, then the symbols) from `bytes` at `start`, an AC table when `isAC`; returns the
    /// table and the index after it. A table already made in this process for the same class, counts and symbols is
    /// reused (`shared`): the tiles of a pyramidal TIFF share their tables, and making the lookups costs more than
    /// cutting a tile.
    static func parse(_ bytes: [UInt8], at start: Int, isAC: Bool, name: String) throws
        -> (table: JPEGHuffmanTable, end: Int) {
        guard start + 16 <= bytes.count else { throw TesseraError.corrupt(path: name, detail: "a Huffman table is cut short") }
        let counts = bytes[start..<start + 16].map(Int.init)
        let total = counts.reduce(0, +)
        let end = start + 16 + total
        guard total <= 256, end <= bytes.count else {
            throw TesseraError.corrupt(path: name, detail: "a Huffman table declares \(total) codes")
        }
        let definition = Definition(bytes: Array(bytes[start..<end]), isAC: isAC)
        if let table = shared.heldValue(for: definition) { return (table, end) }
        // Made outside the cache, so that a malformed table's error names this file, and is never kept.
        let table = try JPEGHuffmanTable(counts: counts, symbols: Array(definition.bytes[16...]), isAC: isAC,
                                         name: name)
        return ((try? shared.value(for: definition) { table }) ?? table, end)
    }

    /// A table's class, and its counts and symbols as a DHT segment has them, hashed as one run of bytes (an
    /// array's own hash takes them one by one, which cost as much as making the table).
    private struct Definition: Hashable, Sendable {
        let bytes: [UInt8]
        let isAC: Bool

        func hash(into hasher: inout Hasher) {
            hasher.combine(isAC)
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// Tables made so far, by their definitions, at most `sharedByteLimit` bytes.
    private static let shared = SharedCache<Definition, JPEGHuffmanTable>(byteLimit: sharedByteLimit) { _, _ in tableBytes }

    /// The most memory the shared tables hold: 256 KiB, about 40 tables.
    static let sharedByteLimit = 256 << 10

    /// The memory one table's lookups hold, in bytes.
    private static let tableBytes = (1 << lookupBits) * (MemoryLayout<UInt32>.stride + 2 * MemoryLayout<UInt16>.stride)
        + 2 * 17 * MemoryLayout<Int32>.stride + 256 + 64

    /// A table with no codes: every decode fails. Stands in where a scan has no table of a kind.
    static let empty = JPEGHuffmanTable()

    private init() {}

    /// A table of `counts` codes of each length 1...16 for `symbols`, in code order; an AC table (with `skip`)
    /// when `isAC`.
    init(counts: [Int], symbols: [UInt8], isAC: Bool, name: String) throws {
        let bits = Self.lookupBits
        symbolCount = symbols.count
        storage.symbols.update(from: symbols, count: symbols.count)
        var code = 0, index = 0
        for length in 1...16 {
            let count = counts[length - 1]
            storage.offset[length] = Int32(index - code)
            for _ in 0..<count {
                // A complete code of this length leaves no room for more; more codes than fit is corrupt.
                guard code < 1 << length else {
                    throw TesseraError.corrupt(path: name, detail: "a Huffman table has more codes than fit in \(length) bits")
                }
                if length <= bits {
                    let shift = bits - length, symbol = Int(symbols[index]), size = symbol & 15
                    for fill in 0..<(1 << shift) {
                        storage.symbol[code << shift | fill] = UInt16(length << 8 | symbol)
                        guard length + size <= bits else { continue }
                        // The value's bits follow the code within the prefix.
                        let raw = size == 0 ? 0 : fill >> (shift - size)
                        let value = size == 0 ? 0 : JPEGEntropyReader.extend(raw, size: size)
                        storage.fast[code << shift | fill] = UInt32(truncatingIfNeeded: value << 16)
                            | UInt32(symbol << 8) | UInt32(length + size)
                    }
                }
                code += 1
                index += 1
            }
            if count > 0 { storage.maxCode[length] = Int32(code - 1) }
            code <<= 1
        }
        if isAC { fillSkip() }
    }

    /// Makes `skip` from `fast`: for each prefix, its pairs one after another while the next lies whole in the
    /// bits left (looked up with zeros for the bits used, which a code and value that fit never reach).
    private func fillSkip() {
        let bits = Self.lookupBits, mask = 1 << bits - 1
        for prefix in 0...mask {
            var length = 0, advance = 0, endsBlock = false
            while !endsBlock {
                let fast = storage.fast[prefix << length & mask], pairLength = Int(fast & 0xFF)
                guard fast != 0, length + pairLength <= bits else { break }
                let run = Int(fast >> 12 & 15), size = Int(fast >> 8 & 15)
                let ends = size == 0 && run != 15, pairAdvance = size != 0 ? run + 1 : ends ? 1 : 16
                guard advance + pairAdvance <= 64 else { break }
                length += pairLength
                advance += pairAdvance
                endsBlock = ends
            }
            if length > 0 {
                storage.skip[prefix] = SkipEntry(length: length, advance: advance, endsBlock: endsBlock).bits
            }
        }
    }

    /// Decodes one symbol from the reader, or nil when the bits form no code.
    @inline(__always)
    func decode(_ reader: inout JPEGEntropyReader) -> UInt8? { lookup.decode(&reader) }
}
