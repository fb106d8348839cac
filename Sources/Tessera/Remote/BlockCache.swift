import Foundation

/// Blocks of remote files kept in memory, bounded in bytes, least recently used evicted first. A block is named by
/// its file's URL and version (ETag or Last-Modified) and its index, so a replaced file never meets its old blocks.
/// Thread-safe; one cache is shared by every `RemoteFile` of a process unless another is given.
public final class BlockCache: @unchecked Sendable {
    /// A block of one version of one file.
    struct Key: Hashable {
        var file: String
        var index: Int
    }

    private struct Entry {
        var bytes: [UInt8]
        var lastUse: Int
    }

    /// The most bytes the blocks may hold.
    public let budget: Int
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    /// Uses in order, oldest first; an element whose `use` is older than its entry's `lastUse` is stale.
    private var uses: [(key: Key, use: Int)] = []
    private var usesStart = 0
    private var clock = 0
    private var held = 0

    /// The cache `RemoteFile.open` uses unless told otherwise: 256 MiB.
    public static let shared = BlockCache(budget: 256 << 20)

    /// A cache holding at most `budget` bytes of blocks.
    public init(budget: Int) { self.budget = budget }

    /// The bytes the blocks hold now.
    public var byteCount: Int { lock.withLock { held } }

    /// The block, if cached; marks it used.
    func block(_ key: Key) -> [UInt8]? {
        lock.withLock {
            guard var entry = entries[key] else { return nil }
            clock += 1
            entry.lastUse = clock
            entries[key] = entry
            uses.append((key, clock))
            compactUses()
            return entry.bytes
        }
    }

    /// Whether the block is cached, without marking it used.
    func contains(_ key: Key) -> Bool { lock.withLock { entries[key] != nil } }

    /// Keeps `bytes` as the block, evicting the least recently used blocks while over the budget.
    func store(_ key: Key, _ bytes: [UInt8]) {
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
