/// The walk over a codestream's tile-part headers that runs before OpenJPEG decodes: every tile-part's length
/// (Psot) must end inside the codestream, at the next tile-part or the end-of-codestream marker. OpenJPEG 2.5
/// aborts the process (an assertion in its stream code) on some codestreams cut inside a tile-part, so a cut or
/// inconsistent one is refused here, with a message naming the file, before OpenJPEG reads it.
enum JPEG2000TileParts {
    /// Checks the tile-parts of the codestream at `range` of `source`; returns how many there are.
    @discardableResult
    static func check(_ source: JPEG2000ByteSource, codestream range: Range<Int>) throws -> Int {
        func number(_ bytes: [UInt8]) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }
        func truncated(_ detail: String) -> TesseraError { .truncated(path: source.name, detail: "(\(detail))") }
        func corrupt(_ detail: String) -> TesseraError { .corrupt(path: source.name, detail: detail) }
        // The main header: marker segments after SOC up to the first SOT.
        var offset = range.lowerBound + 2
        while true {
            let segment = source.bytes(at: offset, count: 4)
            guard segment.count == 4, offset + 4 <= range.upperBound else {
                throw truncated("the codestream's main header ends past the end of the file")
            }
            guard segment[0] == 0xFF else { throw corrupt("no marker at byte \(offset.grouped) of the main header") }
            if segment[1] == 0x90 { break }
            offset += 2 + number(Array(segment[2..<4]))
        }
        var count = 0
        while offset < range.upperBound {
            let header = source.bytes(at: offset, count: 12)
            if header.count >= 2 && header[0] == 0xFF && header[1] == 0xD9 { return count }
            guard header.count == 12, offset + 12 <= range.upperBound else {
                throw truncated("tile-part \(count + 1) ends past the end of the file")
            }
            guard header[0] == 0xFF, header[1] == 0x90 else {
                throw corrupt("tile-part \(count + 1) does not start with a tile-part marker")
            }
            let length = number(Array(header[6..<10]))
            count += 1
            // A length of 0 means the last tile-part, running to the end of the codestream.
            if length == 0 { return count }
            guard length >= 14 else { throw corrupt("tile-part \(count) claims a length of \(length) bytes") }
            guard offset + length <= range.upperBound else {
                throw truncated("tile-part \(count) ends \((offset + length - range.upperBound).grouped) bytes past the"
                                + " end of the file")
            }
            offset += length
        }
        return count
    }
}
