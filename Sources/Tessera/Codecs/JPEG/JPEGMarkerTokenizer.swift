import Glibc

/// One piece of a JPEG's structure as `JPEGMarkerTokenizer` finds it. Offsets are from the start of the file.
enum JPEGToken {
    /// A marker, with its segment when it has one.
    case segment(JPEGSegment)
    /// A scan's entropy-coded data: from the end of its SOS segment to the 0xFF of the marker that ends it.
    /// Restart markers and stuffed zero bytes are inside it.
    case entropyCodedData(Range<Int>)
}

/// A marker and its length-prefixed segment (T.81 B.1.1.4), as offsets into the file.
struct JPEGSegment {
    /// The marker's second byte: 0xD8 SOI, 0xC4 DHT, 0xDA SOS, 0xD9 EOI...
    let marker: UInt8
    /// The offset of the marker's 0xFF (the last one, after any fill bytes).
    let offset: Int
    /// The segment's length field (its payload and the field's own two bytes); 0 for a marker with no segment
    /// (SOI, EOI, RSTn, TEM).
    let length: Int
    /// The payload, after the length field; empty, at the end of the marker, for a marker with no segment.
    let payload: Range<Int>

    /// Where the next token starts.
    var end: Int { payload.upperBound }

    /// Whether `marker` stands alone, with no length and no segment.
    static func isStandalone(_ marker: UInt8) -> Bool {
        marker == 0x01 || (0xD0...0xD9).contains(marker)
    }
}

/// Walks a JPEG's markers and segments in file order without decoding anything: marker segments are skipped by
/// their length, a scan's entropy-coded data up to the first marker that is neither a stuffed zero (0xFF00), a
/// fill byte nor a restart marker (RSTn). Bytes before a marker that are not one (garbage, or 0xFF00 outside a
/// scan) are skipped, as libjpeg skips them. The one walker under every reader of JPEG structure: the scan index,
/// the incremental decoder's scan boundaries and the EXIF lookup.
///
/// It reads no file itself: each call is handed a window of the file's bytes and returns the next token, or nil
/// when the window ends first; the next call resumes at `position`, with a window from there on (or, for bytes
/// that only grow, the same prefix extended).
struct JPEGMarkerTokenizer {
    /// The offset at which the next token, or the search for it, starts.
    private(set) var position: Int
    /// Whether `position` is inside a scan's entropy-coded data, which starts at `entropyStart`.
    private var inEntropyData = false
    private var entropyStart = 0

    /// Starts at `position`, which must be the start of a marker (or bytes skipped before one).
    init(position: Int = 0) {
        self.position = position
    }

    /// The next token, read from `data`, which holds the file's bytes from offset `base` on; nil when `data` ends
    /// before the token does (a segment's payload need not be in `data`: the token gives where it is).
    mutating func next(in data: UnsafeRawBufferPointer, at base: Int = 0) -> JPEGToken? {
        guard position >= base, position < base + data.count, let bytes = data.baseAddress else { return nil }
        if inEntropyData {
            guard let marker = endOfEntropyData(bytes, count: data.count, base: base) else { return nil }
            inEntropyData = false
            position = marker
            return .entropyCodedData(entropyStart..<marker)
        }
        let count = data.count
        var index = position - base
        while true {
            // The marker's 0xFF; anything before it is skipped.
            guard let hit = memchr(bytes + index, 0xFF, count - index) else {
                position = base + count
                return nil
            }
            index = bytes.distance(to: UnsafeRawPointer(hit))
            position = base + index
            var code = index + 1
            while code < count && bytes.load(fromByteOffset: code, as: UInt8.self) == 0xFF { code += 1 }
            guard code < count else {
                // Fill bytes to the window's end: resume at the last, which may still start the marker.
                position = base + count - 1
                return nil
            }
            let marker = bytes.load(fromByteOffset: code, as: UInt8.self)
            if marker == 0 {
                index = code + 1
                continue
            }
            // The fill bytes are behind: should the length be missing, the search resumes at the last 0xFF.
            position = base + code - 1
            if JPEGSegment.isStandalone(marker) {
                position = base + code + 1
                return .segment(JPEGSegment(marker: marker, offset: base + code - 1, length: 0,
                                            payload: position..<position))
            }
            guard code + 2 < count else { return nil }
            let length = Int(bytes.load(fromByteOffset: code + 1, as: UInt8.self)) << 8
                | Int(bytes.load(fromByteOffset: code + 2, as: UInt8.self))
            let payload = base + code + 3..<base + code + 1 + max(length, 2)
            position = payload.upperBound
            if marker == 0xDA {
                inEntropyData = true
                entropyStart = position
            }
            return .segment(JPEGSegment(marker: marker, offset: base + code - 1, length: length, payload: payload))
        }
    }

    /// The offset of the 0xFF of the marker that ends the entropy-coded data, or nil when `data` has none yet
    /// (`position` then moves to where the search resumes: the last byte, whose successor is not known).
    private mutating func endOfEntropyData(_ bytes: UnsafeRawPointer, count: Int, base: Int) -> Int? {
        var index = position - base
        while index < count - 1 {
            guard let hit = memchr(bytes + index, 0xFF, count - 1 - index) else { break }
            let found = bytes.distance(to: UnsafeRawPointer(hit))
            let next = bytes.load(fromByteOffset: found + 1, as: UInt8.self)
            if next != 0 && next != 0xFF && !(0xD0...0xD7).contains(next) { return base + found }
            index = found + 1
        }
        position = base + max(index, count - 1)
        return nil
    }
}
