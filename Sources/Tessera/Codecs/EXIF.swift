/// Reads the EXIF fields Tessera needs from an EXIF block in any container (JPEG APP1, PNG eXIf, WebP EXIF):
/// a TIFF header and IFDs, optionally after `Exif\0\0`. IFD0 holds the orientation; IFD1, the embedded thumbnail.
struct EXIF {
    private let data: [UInt8]
    private let little: Bool

    /// Parses the header; nil when the block is not TIFF-structured.
    init?(_ block: [UInt8]) {
        var bytes = block[...]
        if bytes.starts(with: Array("Exif\u{0}\u{0}".utf8)) { bytes = bytes.dropFirst(6) }
        data = Array(bytes)
        guard data.count >= 8 else { return nil }
        switch (data[0], data[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
    }

    /// The orientation (1-8), or nil when the block has none or is malformed.
    static func orientation(in block: [UInt8]) -> Int? {
        guard let exif = EXIF(block), let ifd0 = exif.read(4, 4),
              let value = exif.value(of: 0x0112, inIFDAt: ifd0), (1...8).contains(value) else { return nil }
        return value
    }

    /// The bytes of the JPEG thumbnail IFD1 points to (`JPEGInterchangeFormat` and its length), or nil.
    static func thumbnail(in block: [UInt8]) -> [UInt8]? {
        guard let exif = EXIF(block), let ifd0 = exif.read(4, 4), let entries = exif.read(ifd0, 2),
              let ifd1 = exif.read(ifd0 + 2 + entries * 12, 4), ifd1 > 0,
              let start = exif.value(of: 0x0201, inIFDAt: ifd1), let length = exif.value(of: 0x0202, inIFDAt: ifd1),
              length > 0, start + length <= exif.data.count else { return nil }
        return Array(exif.data[start..<start + length])
    }

    /// The value of a SHORT or LONG `tag` in the IFD at `offset`, or nil.
    private func value(of tag: Int, inIFDAt offset: Int) -> Int? {
        guard let entries = read(offset, 2) else { return nil }
        for entry in 0..<entries {
            let base = offset + 2 + entry * 12
            guard read(base, 2) == tag, let type = read(base + 2, 2) else { continue }
            return type == 3 ? read(base + 8, 2) : read(base + 8, 4)
        }
        return nil
    }

    /// An unsigned integer of `count` bytes at `offset`, in the block's byte order, or nil past the end.
    private func read(_ offset: Int, _ count: Int) -> Int? {
        guard offset >= 0, offset + count <= data.count else { return nil }
        var value = 0
        for index in 0..<count {
            value = value << 8 | Int(data[offset + (little ? count - 1 - index : index)])
        }
        return value
    }
}
