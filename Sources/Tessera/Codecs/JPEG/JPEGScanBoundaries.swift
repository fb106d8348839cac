/// Finds where a JPEG's scans end, reading the bytes as they arrive through `JPEGMarkerTokenizer`. A progressive
/// image is fed to libjpeg only up to the end of its last complete scan, so that the coefficients libjpeg holds
/// are exactly those after that scan.
struct JPEGScanBoundaries {
    private var tokenizer = JPEGMarkerTokenizer()
    /// Scans whose entropy-coded data has ended.
    private(set) var completedScans = 0
    /// The offset just past the marker code that ends the last complete scan (libjpeg must see that marker to
    /// finish the scan's last blocks), or past the EOI marker once it has arrived; 0 before either.
    private(set) var safeEnd = 0
    /// Whether the EOI marker has arrived.
    private(set) var reachedEnd = false

    /// Reads the bytes of `data` (the whole prefix received so far) past where the last call stopped.
    mutating func scan(_ data: UnsafeRawBufferPointer) {
        while !reachedEnd, let token = tokenizer.next(in: data) {
            switch token {
            case let .entropyCodedData(range):
                completedScans += 1
                safeEnd = range.upperBound + 2
            case let .segment(segment) where segment.marker == 0xD9:
                safeEnd = segment.end
                reachedEnd = true
            case .segment:
                break
            }
        }
    }
}
