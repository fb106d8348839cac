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
    @discardableResult
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
}
