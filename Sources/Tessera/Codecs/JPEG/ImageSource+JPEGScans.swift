extension ImageSource {
    /// The number of scans in a JPEG: 1 for a baseline image (or one per component when they are not
    /// interleaved), 10 for libjpeg's default progression; nil for other formats. Walks every marker of the file,
    /// skipping the compressed data between them, so it reads the whole file but decodes nothing.
    public func scanCount() throws -> Int? {
        guard properties.format == .jpeg else { return nil }
        return try JPEGScanIndex(input: input).scans.count
    }
}
