/// Reads the one EXIF field Tessera needs, the orientation, from an EXIF block in any container
/// (JPEG APP1, PNG eXIf, WebP EXIF): a TIFF header and IFD0, optionally after `Exif\0\0`.
enum EXIF {
    /// The orientation (1-8), or nil when the block has none or is malformed.
    static func orientation(in block: [UInt8]) -> Int? {
        var bytes = block[...]
        if bytes.starts(with: Array("Exif\u{0}\u{0}".utf8)) { bytes = bytes.dropFirst(6) }
        let data = Array(bytes)
        guard data.count >= 8 else { return nil }
        let little: Bool
        switch (data[0], data[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func read(_ offset: Int, _ count: Int) -> Int? {
            guard offset >= 0, offset + count <= data.count else { return nil }
            var value = 0
            for index in 0..<count {
                let byte = Int(data[offset + (little ? count - 1 - index : index)])
                value = value << 8 | byte
            }
            return value
        }
        guard let ifd = read(4, 4), let entries = read(ifd, 2) else { return nil }
        for entry in 0..<entries {
            let base = ifd + 2 + entry * 12
            guard let tag = read(base, 2) else { return nil }
            if tag == 0x0112, let value = read(base + 8, 2), (1...8).contains(value) { return value }
        }
        return nil
    }
}
