/// Reads the bits of entropy-coded data already taken out of its file and unstuffed (no 0xFF 0x00 pairs, no
/// markers), knowing the bit position it is at: what `JPEGEntropySplice` walks, to find where each MCU's bits start
/// and end.
struct JPEGBitCursor: JPEGBitReading {
    /// The data, followed by at least 16 zero bytes so that a refill never reads past it.
    private let bytes: UnsafePointer<UInt8>
    /// The data's length in bits, without the zero bytes.
    let bitCount: Int
    var buffer: UInt64 = 0
    var bufferedBits = 0
    /// The next byte to put in the buffer.
    private var next = 0

    /// A cursor at the first bit of `bytes`, which holds `bitCount` bits of data and then 16 or more zero bytes.
    init(bytes: UnsafePointer<UInt8>, bitCount: Int) {
        self.bytes = bytes
        self.bitCount = bitCount
    }

    /// The position of the next bit to read, from the data's first bit.
    var position: Int { 8 * next - bufferedBits }

    /// Whether bits past the data's end were read: the data is cut short or corrupt.
    var overran: Bool { position > bitCount }

    /// Tops the buffer up with whole bytes when fewer than 32 bits are left; past the data's end with zero bits
    /// (its zero bytes, then no more reading).
    @_transparent
    mutating func fill() {
        if bufferedBits < 32 { refill() }
    }

    @inline(__always)
    private mutating func refill() {
        guard 8 * next <= bitCount + 64 else {
            bufferedBits = 64
            return
        }
        next &+= append(Self.word(bytes, at: next))
    }

    /// The `count` bits (1...32) of `bytes` from bit `position`, right-aligned.
    @_transparent
    static func bits(_ bytes: UnsafePointer<UInt8>, at position: Int, count: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: (word(bytes, at: position >> 3) &<< UInt64(position & 7)) &>> UInt64(64 - count))
    }

    /// The 8 bytes of `bytes` from `offset`, the first highest.
    @_transparent
    private static func word(_ bytes: UnsafePointer<UInt8>, at offset: Int) -> UInt64 {
        UInt64(bigEndian: UnsafeRawPointer(bytes + offset).loadUnaligned(as: UInt64.self))
    }
}
