/// Little-endian fields appended to a byte array, for the zip, TIFF and entropy-index writers.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(value >> UInt32(shift) & 0xFF)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(value >> UInt64(shift) & 0xFF)) } }

    /// An unsigned LEB128 number: seven bits a byte, low first, the high bit set on all but the last.
    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// A signed number as a varint, zigzag-coded so small magnitudes of either sign stay short.
    mutating func signed(_ value: Int) { varint(UInt64(bitPattern: Int64((value << 1) ^ (value >> 63)))) }

    /// Appends zero bytes until the length is a multiple of `alignment`.
    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }
}
