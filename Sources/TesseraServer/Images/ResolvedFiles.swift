import Foundation
import Synchronization
import TesseraTiling

/// The files that identifiers resolved to (every link followed, checked to be inside the catalog's root), each with
/// the identity of the file reached, so that an identifier asked for again costs one `stat(2)` of its path instead
/// of `realpath(3)`'s `readlink` of every component (6 us against 1.5, of the 70 us of CPU a stored tile costs). A
/// path that now reaches another file (replaced, or a link along it changed, in or out of the root) is resolved
/// again. Regular files only: a folder's `info.json` could change under the same folder. Bounded by a count, the
/// least recently used dropped first.
final class ResolvedFiles: Sendable {
    /// A file as `stat(2)` tells it apart from every other: its device and inode.
    struct Identity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64

        /// The identity of the file `status` describes.
        init(_ status: stat) {
            device = UInt64(truncatingIfNeeded: status.st_dev)
            inode = UInt64(truncatingIfNeeded: status.st_ino)
        }
    }

    /// The most identifiers kept: a few megabytes of paths.
    static let capacity = 16_384

    /// What an identifier resolved to: its path with every link followed, and the file that path reached.
    private struct Entry {
        let path: String
        let identity: Identity
    }

    private let entries = Mutex(LRUList<String, Entry>())

    /// The path `identifier` resolved to, when the file it reached then is `identity`, the one its path reaches now.
    func path(of identifier: String, reaching identity: Identity) -> String? {
        entries.withLock { entries in
            guard let known = entries.use(identifier) else { return nil }
            guard known.identity == identity else {
                _ = entries.remove(identifier)
                return nil
            }
            return known.path
        }
    }

    /// Keeps that `identifier` resolved to `path`, the file `identity`.
    func remember(_ identifier: String, path: String, identity: Identity) {
        entries.withLock { entries in
            _ = entries.set(Entry(path: path, identity: identity), for: identifier)
            var excess = entries.count - Self.capacity
            entries.evictOldest(keeping: [identifier], while: { excess > 0 }) { _, _ in excess -= 1 }
        }
    }
}
