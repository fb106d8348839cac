import Foundation

/// A local file's size and modification time from one `stat(2)`: what caches key a file's version by (the pyramid
/// cache, the open images, entropy indexes, build keys). FileManager's `attributesOfItem` gives the same two and
/// also looks up the owner's and group's names (reading /etc/passwd and /etc/group), which cost more than serving a
/// stored tile.
public struct FileStamp: Equatable, Sendable {
    /// The size in bytes.
    public let size: Int
    /// The modification time, to the nanosecond the file system keeps.
    public let modified: Date

    /// The stamp of the file at `path` now (symbolic links followed), or nil when it cannot be read.
    public init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// The stamp of the file `status` (from `stat(2)`) describes.
    public init(_ status: stat) {
        size = Int(status.st_size)
        // Seconds from the reference date first, then the nanoseconds, as Foundation rounds them.
        modified = Date(timeIntervalSinceReferenceDate: TimeInterval(status.st_mtim.tv_sec)
                            - Date.timeIntervalBetween1970AndReferenceDate
                            + TimeInterval(status.st_mtim.tv_nsec) / 1_000_000_000)
    }
}
