/// Finds where a JPEG's scans end, reading the bytes as they arrive: marker segments are skipped by their
/// length, entropy-coded data up to the first marker that is neither a stuffed zero nor a restart marker.
/// A progressive image is fed to libjpeg only up to the end of its last complete scan, so that the coefficients
/// libjpeg holds are exactly those after that scan.
struct JPEGScanBoundaries {
    /// Where reading resumes: the start of the next marker, or a byte inside entropy-coded data.
    private var position = 0
    private var inEntropyData = false
    /// Scans whose entropy-coded data has ended.
    private(set) var completedScans = 0
    /// The offset just past the marker code that ends the last complete scan (libjpeg must see that marker to
    /// finish the scan's last blocks), or past the EOI marker once it has arrived; 0 before either.
    private(set) var safeEnd = 0
    /// Whether the EOI marker has arrived.
    private(set) var reachedEnd = false

    /// Reads the bytes of `data` (the whole prefix received so far) past where the last call stopped.
    mutating func scan(_ data: UnsafeRawBufferPointer) {
        let count = data.count
        while position < count && !reachedEnd {
            if inEntropyData {
                guard let marker = nextMarker(in: data) else { return }
                position = marker
                inEntropyData = false
                completedScans += 1
                safeEnd = marker + 2
                continue
            }
            // A marker: 0xFF, any fill bytes, then the code.
            guard data[position] == 0xFF else {
                position += 1  // garbage between segments, which libjpeg also skips
                continue
            }
            var code = position + 1
            while code < count && data[code] == 0xFF { code += 1 }
            guard code < count else { return }
            let marker = data[code]
            switch marker {
            case 0xD8, 0x01, 0xD0...0xD7:
                position = code + 1
            case 0xD9:
                position = code + 1
                safeEnd = code + 1
                reachedEnd = true
            default:
                guard code + 2 < count else { return }
                let length = Int(data[code + 1]) << 8 | Int(data[code + 2])
                position = code + 1 + length
                if marker == 0xDA { inEntropyData = true }
            }
        }
    }

    /// The offset of the first marker in the entropy-coded data from `position`, or nil when the data so far
    /// has none (the position then moves to where the search can resume).
    private mutating func nextMarker(in data: UnsafeRawBufferPointer) -> Int? {
        var index = position
        let count = data.count
        while index + 1 < count {
            if data[index] == 0xFF {
                let next = data[index + 1]
                if next != 0x00 && next != 0xFF && !(0xD0...0xD7).contains(next) { return index }
                index += next == 0xFF ? 1 : 2
            } else {
                index += 1
            }
        }
        position = index
        return nil
    }
}
