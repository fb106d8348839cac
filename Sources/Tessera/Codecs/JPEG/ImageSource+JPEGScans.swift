extension ImageSource {
    /// The number of scans in a progressive JPEG (10 for libjpeg's default progression); nil for other images,
    /// whose properties stay a header read. Walks every marker of the file, skipping the compressed data between
    /// them, so it reads the whole file but decodes nothing.
    public func scanCount() throws -> Int? {
        guard properties.format == .jpeg, properties.isProgressive else { return nil }
        return try JPEGScanIndex(input: input).scans.count
    }
}
