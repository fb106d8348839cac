/// What Huffman codes are read from: the next bits of a scan's entropy-coded data, left-aligned in a 64-bit
/// buffer that `fill()` tops up. `JPEGEntropyReader` reads a file's stuffed bytes; `JPEGBitCursor` reads bytes
/// already unstuffed, by bit position.
protocol JPEGBitReading {
    /// The buffered bits, first bit highest; the bits past `bufferedBits` are zero.
    var buffer: UInt64 { get set }
    /// How many bits of `buffer` are data.
    var bufferedBits: Int { get set }
    /// Makes at least 32 bits available.
    mutating func fill()
}

extension JPEGBitReading {
    /// The next `bits` bits (1...32) without consuming them; `fill()` must have run.
    @_transparent
    func peek(_ bits: Int) -> UInt32 { UInt32(truncatingIfNeeded: buffer &>> UInt64(64 - bits)) }

    /// Drops the next `bits` bits (0...63).
    @_transparent
    mutating func consume(_ bits: Int) {
        buffer &<<= UInt64(bits)
        bufferedBits &-= bits
    }

    /// Reads `bits` bits (0...16) as an unsigned number.
    @_transparent
    mutating func read(_ bits: Int) -> Int {
        guard bits > 0 else { return 0 }
        fill()
        let value = Int(peek(bits))
        consume(bits)
        return value
    }

    /// Reads the `size` bits (1...16) of a coefficient difference and extends their sign.
    @_transparent
    mutating func readSigned(_ size: Int) -> Int { JPEGEntropyReader.extend(read(size), size: size) }

    /// Appends to the buffer as many whole bytes of `word` (the next 8 bytes of data, the first highest) as fit,
    /// and returns how many.
    @_transparent
    mutating func append(_ word: UInt64) -> Int {
        let taken = (64 - bufferedBits) & ~7
        buffer |= (taken == 64 ? word : word & ~(UInt64.max &>> UInt64(taken))) &>> UInt64(bufferedBits)
        bufferedBits &+= taken
        return taken >> 3
    }
}

extension JPEGEntropyReader: JPEGBitReading {}
