/// Reads the bits of entropy-coded data already taken out of its file and unstuffed (no 0xFF 0x00 pairs, no
/// markers), knowing the bit position it is at: what `JPEGEntropySplice` walks, to find where each MCU's bits start
/// and end. Bits are kept left-aligned in a 64-bit buffer, as in `JPEGEntropyReader`.
struct JPEGBitCursor: JPEGBitReading {
    /// The data, followed by at least 16 zero bytes so that a refill never reads past it.
    private let bytes: UnsafePointer<UInt8>
    /// The data's length in bits, without the zero bytes.
    let bitCount: Int
    private var buffer: UInt64 = 0
    /// Valid bits in `buffer`, and the next byte to put in it.
    private var count = 0
    private var next = 0

    /// A cursor at the first bit of `bytes`, which holds `bitCount` bits of data and then 16 or more zero bytes.
    init(bytes: UnsafePointer<UInt8>, bitCount: Int) {
        self.bytes = bytes
        self.bitCount = bitCount
    }

    /// The position of the next bit to read, from the data's first bit.
    var position: Int { 8 * next - count }

    /// Whether bits past the data's end were read: the data is cut short or corrupt.
    var overran: Bool { position > bitCount }

    /// Tops the buffer up with whole bytes when fewer than 32 bits are left; past the data's end with zero bits
    /// (its zero bytes, then no more reading).
    @_transparent
    mutating func fill() {
        if count < 32 { refill() }
    }

    @inline(__always)
    private mutating func refill() {
        guard 8 * next <= bitCount + 64 else {
            count = 64
            return
        }
        let word = UInt64(bigEndian: UnsafeRawPointer(bytes + next).loadUnaligned(as: UInt64.self))
        let taken = (64 - count) & ~7
        buffer |= (taken == 64 ? word : word & ~(UInt64.max &>> UInt64(taken))) &>> UInt64(count)
        count &+= taken
        next &+= taken >> 3
    }

    /// The next `bits` bits (1...32); `fill()` must have run.
    @_transparent
    func peek(_ bits: Int) -> UInt32 { UInt32(truncatingIfNeeded: buffer &>> UInt64(64 - bits)) }

    @_transparent
    mutating func consume(_ bits: Int) {
        buffer &<<= UInt64(bits)
        count &-= bits
    }

    @_transparent
    mutating func readSigned(_ size: Int) -> Int {
        fill()
        let raw = Int(peek(size))
        consume(size)
        return JPEGEntropyReader.extend(raw, size: size)
    }

    /// The `count` bits (1...32) of `bytes` from bit `position`, right-aligned.
    @_transparent
    static func bits(_ bytes: UnsafePointer<UInt8>, at position: Int, count: Int) -> UInt32 {
        let word = UInt64(bigEndian: UnsafeRawPointer(bytes + position >> 3).loadUnaligned(as: UInt64.self))
        return UInt32(truncatingIfNeeded: (word &<< UInt64(position & 7)) &>> UInt64(64 - count))
    }
}
