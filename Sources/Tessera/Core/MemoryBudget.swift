/// The most memory one decode or encode may buffer beyond its width-bounded window of rows, in bytes.
/// Paths that must hold more (progressive JPEG coefficients, interlaced PNG, whole-image formats) ask first
/// and fail with `TesseraError.memoryLimit` instead of being killed.
public struct MemoryBudget: Sendable, Hashable {
    /// Bytes allowed; the default is 1 GiB.
    public var limit: Int

    public init(limit: Int = 1 << 30) { self.limit = limit }

    public static let `default` = MemoryBudget()

    /// Throws unless `bytes` fits; `purpose` says what would be held, for the message.
    public func check(_ bytes: Int, for purpose: String, path: String) throws {
        if bytes > limit || bytes < 0 {
            throw TesseraError.memoryLimit(path: path, needed: bytes, limit: limit, purpose: purpose)
        }
    }

    /// The bytes of `rows` rows of `width` pixels, or nil when that overflows.
    public static func bytes(width: Int, rows: Int, format: PixelFormat) -> Int? {
        let (perRow, overflowA) = width.multipliedReportingOverflow(by: format.bytesPerPixel)
        let (total, overflowB) = perRow.multipliedReportingOverflow(by: rows)
        return overflowA || overflowB ? nil : total
    }

    /// Throws unless `rows` rows of `width` pixels fit; the check every buffer allocation goes through.
    public func checkRows(width: Int, rows: Int, format: PixelFormat, for purpose: String, path: String) throws {
        try check(Self.bytes(width: width, rows: rows, format: format) ?? Int.max, for: purpose, path: path)
    }
}
