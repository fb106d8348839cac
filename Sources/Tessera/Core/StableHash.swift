/// A 64-bit FNV-1a hash of `text` in hexadecimal: the same on every run and machine, for file names and HTTP
/// validators (not for security).
public func stableHash(_ text: String) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    return String(hash, radix: 16)
}
