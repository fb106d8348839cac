/// Finds a JPEG's EXIF block in its header bytes, for data libjpeg is not asked to keep.
enum JPEGEXIF {
    /// How much of the file to read to find the EXIF block: an APP1 segment holds at most 64 KiB, and it
    /// comes before the image data, normally right after SOI and APP0.
    static let searchLength = 1 << 17

    /// The payload of the first APP1 segment that starts with `Exif\0\0`, or nil when the header (the file's
    /// first bytes, from its SOI marker) has none.
    static func block(in header: [UInt8]) -> [UInt8]? {
        header.withUnsafeBytes { bytes in
            var tokenizer = JPEGMarkerTokenizer()
            guard case let .segment(start)? = tokenizer.next(in: bytes), start.marker == 0xD8, start.offset == 0 else {
                return nil
            }
            while case let .segment(segment)? = tokenizer.next(in: bytes) {
                // Start of scan or end of image: the headers are over.
                if segment.marker == 0xDA || segment.marker == 0xD9 { return nil }
                guard segment.end <= header.count else { return nil }
                if segment.marker == 0xE1, header[segment.payload].starts(with: Array("Exif\u{0}\u{0}".utf8)) {
                    return Array(header[segment.payload])
                }
            }
            return nil
        }
    }
}
