#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors, which bounds a server's concurrent connections: each takes one,
/// besides the images and cache files it reads. Linux starts processes at a soft limit of 1,024 (a hard limit far
/// above it is usual), so a server that kept it would refuse connections near 1,000 clients.
public enum FileDescriptorLimit {
    /// Raises the soft limit to the hard one and returns the limit now in force (descriptors), or nil if it cannot
    /// be read. A process may always raise its soft limit up to its hard limit; nothing is lowered.
    public static func raiseToHardLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }

    /// The most connections a server may hold open with `descriptors` (the limit in force; nil when unknown):
    /// `maxConnections`, or fewer when the limit leaves less after `reserved` descriptors for the files the server
    /// reads. At its limit libmicrohttpd stops accepting until a connection closes; past the descriptors it would
    /// fail every accept and report each failure, over and over.
    public static func connectionLimit(descriptors: UInt64?) -> Int {
        guard let descriptors else { return maxConnections }
        return max(minConnections, min(maxConnections, Int(clamping: descriptors) - reserved))
    }

    /// The most connections a server holds open at once.
    public static let maxConnections = 4096
    /// Descriptors kept for what a server reads and writes besides its connections: images, cache files, logs.
    static let reserved = 256
    /// The fewest connections a server is given, however low the limit.
    static let minConnections = 16
}
