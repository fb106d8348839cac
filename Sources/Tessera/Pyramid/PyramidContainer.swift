/// Holds a pyramid's files while it is built, and makes them visible under their real names when it is done:
/// a folder tree, or one zip file. Written from several threads at once.
public protocol PyramidContainer: AnyObject, Sendable {
    /// Whether an interrupted earlier build left a complete file at `path` (`--resume`).
    func hasCompleteFile(at path: String) -> Bool
    /// Stores a file at `path` (relative, `/`-separated), creating folders as needed.
    func write(_ bytes: [UInt8], to path: String) throws
    /// Moves the finished pyramid into place.
    func commit() throws
    /// Removes the partial build, after a failure a resume would not mend (the source is bad).
    func discard()
}

/// What a new build does with the partial build an interrupted one left under the same output.
public enum PartialBuildPolicy: Sendable {
    /// Starts again from nothing.
    case discard
    /// Reuses its complete files; a partial build with another key is an error (`--resume`).
    case resume
    /// Reuses it when its key is the same, else starts again from nothing (a batch run).
    case resumeIfSameBuild

    /// Whether tiles already there may be reused.
    public var reusesTiles: Bool { self != .discard }
}

/// Whether `bytes` are a whole encoded image, judged by the format's end marker, so that a tile cut short by a
/// killed build is written again on `--resume`.
func isCompleteImage(_ bytes: some Collection<UInt8>) -> Bool {
    let data = Array(bytes)
    guard let format = ImageFormat.detect(data.prefix(16)) else { return false }
    switch format {
    case .jpeg: return data.count > 4 && data[data.count - 2] == 0xFF && data[data.count - 1] == 0xD9
    case .png: return data.count > 12 && Array(data.suffix(8).prefix(4)) == Array("IEND".utf8)
    case .webp:
        guard data.count >= 12 else { return false }
        let riffSize = Int(data[4]) | Int(data[5]) << 8 | Int(data[6]) << 16 | Int(data[7]) << 24
        return riffSize + 8 + (riffSize & 1) == data.count || riffSize + 8 == data.count
    default: return false
    }
}
