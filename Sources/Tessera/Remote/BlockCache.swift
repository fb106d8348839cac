import Foundation
import Synchronization

/// Blocks of remote files kept in memory, bounded in bytes, least recently used evicted first, and optionally in a
/// `BlockFolder` behind it: a block missing from memory is looked for there, and every block fetched of a file
/// with a version is written there. A block is named by its file's URL and version (ETag or Last-Modified) and its
/// index, so a replaced file never meets its old blocks. Thread-safe; one cache is shared by every `RemoteFile` of
/// a process unless another is given.
public final class BlockCache: @unchecked Sendable {
    /// A block of one version of one file.
    struct Key: Hashable {
        /// The file, its version, its size and its block size (`RemoteFile`'s name for them).
        var file: String
        var index: Int
        /// Whether `file` names a version the server gave (ETag or Last-Modified), so the block may outlive this
        /// process in the folder; a file without one is never written there.
        var isVersioned = false
    }

    private struct Entry {
        var bytes: [UInt8]
        var lastUse: Int
    }

    /// The most bytes the blocks may hold in memory.
    public let budget: Int
    /// Where blocks are also kept, across runs and processes, if anywhere.
    public let folder: BlockFolder?
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    /// Uses in order, oldest first; an element whose `use` is older than its entry's `lastUse` is stale.
    private var uses: [(key: Key, use: Int)] = []
    private var usesStart = 0
    private var clock = 0
    private var held = 0

    /// The memory budget unless told otherwise: 256 MiB.
    public static let defaultBudget = 256 << 20

    private static let current = Mutex(BlockCache(budget: defaultBudget))

    /// The cache every `RemoteFile` uses unless given another: `defaultBudget` of memory and no folder, until
    /// `share` replaces it.
    public static var shared: BlockCache { current.withLock { $0 } }

    /// Makes `cache` the shared one, for the files opened from now on: what a program's options set up at start.
    public static func share(_ cache: BlockCache) { current.withLock { $0 = cache } }

    /// A cache holding at most `budget` bytes of blocks in memory, and more in `folder` if given.
    public init(budget: Int, folder: BlockFolder? = nil) {
        self.budget = budget
        self.folder = folder
    }

    /// The bytes the blocks hold in memory now.
    public var byteCount: Int { lock.withLock { held } }

    /// The block, from memory or else the folder (then kept in memory too), if cached; marks it used.
    func block(_ key: Key) -> [UInt8]? {
        let inMemory: [UInt8]? = lock.withLock {
            guard var entry = entries[key] else { return nil }
            clock += 1
            entry.lastUse = clock
            entries[key] = entry
            uses.append((key, clock))
            compactUses()
            return entry.bytes
        }
        if let inMemory { return inMemory }
        guard key.isVersioned, let bytes = folder?.block(key) else { return nil }
        keep(key, bytes)
        return bytes
    }

    /// Whether the block is cached, without marking it used.
    func contains(_ key: Key) -> Bool {
        lock.withLock { entries[key] != nil } || (key.isVersioned && folder?.contains(key) == true)
    }

    /// Keeps `bytes` as the block in memory, evicting the least recently used blocks while over the budget, and
    /// in the folder when its file has a version.
    func store(_ key: Key, _ bytes: [UInt8]) {
        keep(key, bytes)
        if key.isVersioned { folder?.store(key, bytes) }
    }

    /// Keeps `bytes` as the block in memory.
    private func keep(_ key: Key, _ bytes: [UInt8]) {
        lock.withLock {
            clock += 1
            held += bytes.count - (entries[key]?.bytes.count ?? 0)
            entries[key] = Entry(bytes: bytes, lastUse: clock)
            uses.append((key, clock))
            while held > budget, usesStart < uses.count {
                let oldest = uses[usesStart]
                usesStart += 1
                if let entry = entries[oldest.key], entry.lastUse == oldest.use {
                    held -= entry.bytes.count
                    entries[oldest.key] = nil
                }
            }
            compactUses()
        }
    }

    /// Keeps the list of uses within a few times the number of blocks: one element per block, oldest first.
    private func compactUses() {
        guard uses.count - usesStart > 4 * entries.count + 1024 else { return }
        uses = entries.map { ($0.key, $0.value.lastUse) }.sorted { $0.use < $1.use }
        usesStart = 0
    }
}
