/// Finds marker segments in a JPEG's header bytes without libjpeg, for data libjpeg is not asked to keep.
enum JPEGMarkers {
    /// How much of the file to read to find the EXIF block: an APP1 segment holds at most 64 KiB, and it
    /// comes before the image data, normally right after SOI and APP0.
    static let exifSearchLength = 1 << 17

    /// The payload of the first APP1 segment that starts with `Exif\0\0`, or nil when the header has none.
    static func exifBlock(in header: [UInt8]) -> [UInt8]? {
        guard header.count >= 4, header[0] == 0xFF, header[1] == 0xD8 else { return nil }
        var offset = 2
        while offset + 4 <= header.count, header[offset] == 0xFF {
            let marker = header[offset + 1]
            // Start of scan or end of image: the headers are over.
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(header[offset + 2]) << 8 | Int(header[offset + 3])
            let payload = offset + 4, end = offset + 2 + length
            guard length >= 2, end <= header.count else { return nil }
            if marker == 0xE1, header[payload..<end].starts(with: Array("Exif\u{0}\u{0}".utf8)) {
                return Array(header[payload..<end])
            }
            offset = end
        }
        return nil
    }
}
