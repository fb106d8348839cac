extension StringProtocol {
    /// The text with each `%XX` turned back into its byte, read as UTF-8 (RFC 3986, section 2.1: a URL path's
    /// segment, as `removingPercentEncoding` decodes it); nil when a `%` is not followed by two hex digits or the
    /// bytes are not UTF-8. Plain Swift over the UTF-8 view: Foundation's version goes through CFString, which cost
    /// every request a few microseconds and a process's first request a scan of the binary's conformances.
    var percentDecoded: String? {
        let utf8 = self.utf8
        guard utf8.contains(UInt8(ascii: "%")) else { return String(self) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            index = utf8.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard index != utf8.endIndex, let high = Self.hexValue(utf8[index]) else { return nil }
            index = utf8.index(after: index)
            guard index != utf8.endIndex, let low = Self.hexValue(utf8[index]) else { return nil }
            index = utf8.index(after: index)
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
