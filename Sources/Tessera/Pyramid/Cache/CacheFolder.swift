import Foundation

/// A pyramid cache's folder as a whole, which several processes may share: per image (its stem, a hash) a
/// finished pyramid `{stem}.tif`, a preview `{stem}.preview.tif` while the full one is built, the build's lock
/// `{stem}.lock`, and the builds' temporary files (`AtomicFile`'s names). What dead builds left is removed here,
/// and the space the folder takes, temporary files of builds in progress included, is kept within the limit.
struct CacheFolder: Sendable {
    /// The folder.
    let path: String
    let locks: BuildLocks

    /// The lock of the image whose cache files start with `stem` (a path in the folder, no extension).
    static func lock(ofStem stem: String) -> String { stem + ".lock" }

    /// One file in the folder: its name, size in bytes and modification time.
    private struct Entry {
        let name: String
        let bytes: Int
        let modified: Date
    }

    private func entries() -> [Entry] {
        let files = FileManager.default
        guard let names = try? files.contentsOfDirectory(atPath: path) else { return [] }
        return names.compactMap { name in
            guard let stamp = FileStamp(path: "\(path)/\(name)") else { return nil }
            return Entry(name: name, bytes: stamp.size, modified: stamp.modified)
        }
    }

    /// The stem (the image's hash) a pyramid's file name starts with.
    private static func stem(of name: String) -> Substring { name.prefix { $0 != "." } }

    /// Removes what dead builds left behind: locks whose heartbeat stopped over the timeout ago, locks moved aside
    /// by a takeover, and the temporary files of pyramids that no live build holds the lock of.
    func removeLeftovers() {
        for entry in entries() {
            let file = "\(path)/\(entry.name)"
            if entry.name.hasSuffix(".lock") {
                if !locks.isHeld(file) { unlink(file) }
            } else if entry.name.contains(".lock.stale-") {
                unlink(file)
            } else if let target = AtomicFile.target(ofTemporaryName: entry.name), target.hasSuffix(".tif"),
                      !locks.isHeld(Self.lock(ofStem: "\(path)/\(Self.stem(of: target))")),
                      Date().timeIntervalSince(entry.modified) > locks.timeout {
                unlink(file)
            }
        }
    }

    /// Removes the temporary files of the image's pyramids (`stem`, a path in the folder without extension): a
    /// dead build's, once its lock is taken over.
    func removeTemporaryFiles(ofStem stem: String) {
        let own = (stem as NSString).lastPathComponent
        for entry in entries() {
            if let target = AtomicFile.target(ofTemporaryName: entry.name), target.hasSuffix(".tif"),
               Self.stem(of: target) == own {
                unlink("\(path)/\(entry.name)")
            }
        }
    }

    /// Removes the least recently used pyramids until everything in the folder that counts (the pyramids and the
    /// temporary files of builds in progress) fits in `limit` bytes.
    func evict(limit: Int) {
        let all = entries()
        var total = all.filter { $0.name.hasSuffix(".tif") || AtomicFile.target(ofTemporaryName: $0.name) != nil }
            .reduce(0) { $0 + $1.bytes }
        let pyramids = all.filter { $0.name.hasSuffix(".tif") && !$0.name.hasPrefix(".") }.sorted { $0.modified < $1.modified }
        for pyramid in pyramids where total > limit {
            unlink("\(path)/\(pyramid.name)")
            total -= pyramid.bytes
        }
    }
}
