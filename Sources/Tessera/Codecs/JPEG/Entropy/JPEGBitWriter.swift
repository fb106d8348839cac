/// Writes entropy-coded data: codes and values of up to 32 bits, most significant first, a zero byte stuffed after
/// every 0xFF (T.81 F.1.2.3), and the last byte padded with one bits. Owns its buffer, grown by doubling.
struct JPEGBitWriter: ~Copyable {
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes written so far.
    private(set) var count = 0
    /// Bits not yet written, right-aligned, and how many (under 32 between calls).
    private var pending: UInt64 = 0
    private var pendingBits = 0

    /// A writer with room for about `bits` bits of data before it grows.
    init(bits: Int) {
        capacity = bits / 8 + 64
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    /// Appends the low `length` bits (0...32) of `value`.
    @inline(__always)
    mutating func write(_ value: UInt32, bits length: Int) {
        pending = pending &<< UInt64(length) | UInt64(value) & (UInt64(1) &<< UInt64(length) &- 1)
        pendingBits += length
        guard pendingBits >= 32 else { return }
        pendingBits -= 32
        let word = UInt32(truncatingIfNeeded: pending &>> UInt64(pendingBits))
        if count + 8 > capacity { grow() }
        // A byte of `word` is 0xFF exactly when that byte of `~word` is zero: without one, four bytes at once.
        let inverted = ~word
        if (inverted &- 0x0101_0101) & ~inverted & 0x8080_8080 == 0 {
            UnsafeMutableRawPointer(buffer + count).storeBytes(of: word.bigEndian, as: UInt32.self)
            count += 4
        } else {
            for shift in stride(from: 24, through: 0, by: -8) { put(UInt8(truncatingIfNeeded: word &>> UInt32(shift))) }
        }
    }

    /// Appends one byte, and a zero after 0xFF; room for both must be there.
    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
        if byte == 0xFF {
            buffer[count] = 0
            count += 1
        }
    }

    @inline(never)
    private mutating func grow() {
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: 2 * capacity)
        larger.update(from: buffer, count: count)
        buffer.deallocate()
        buffer = larger
        capacity *= 2
    }

    /// Appends bits `start ..< end` of `bytes` (unstuffed data followed by at least 8 zero bytes).
    mutating func copy(_ bytes: UnsafePointer<UInt8>, from start: Int, to end: Int) {
        var position = start
        while position + 32 <= end {
            write(JPEGBitCursor.bits(bytes, at: position, count: 32), bits: 32)
            position += 32
        }
        if position < end { write(JPEGBitCursor.bits(bytes, at: position, count: end - position), bits: end - position) }
    }

    /// The bytes written, the last padded with one bits.
    consuming func finish() -> [UInt8] {
        if pendingBits % 8 != 0 { write(UInt32.max, bits: 8 - pendingBits % 8) }
        if count + 8 > capacity { grow() }
        for shift in stride(from: pendingBits - 8, through: 0, by: -8) {
            put(UInt8(truncatingIfNeeded: pending &>> UInt64(shift)))
        }
        pendingBits = 0
        return Array(UnsafeBufferPointer(start: buffer, count: count))
    }
}
