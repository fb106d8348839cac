import Foundation
import Synchronization

/// The claims of one process on building pyramids in a cache folder that several processes (on one machine or
/// over a shared file system) may use at once: a claim is a lock file beside the pyramid, created exclusively
/// (`O_EXCL`), so exactly one process builds each pyramid. While a build runs its lock's modification time is
/// touched every `timeout / 4` seconds (the heartbeat); a lock whose heartbeat is older than `timeout` seconds was
/// left by a process that died, and is taken over. Held locks are registered with `TemporaryFiles`, so a process
/// stopped by a signal removes them with its temporary files.
final class BuildLocks: Sendable {
    /// Seconds without a heartbeat after which a lock is stale.
    let timeout: Double
    private let held = Mutex<(paths: Set<String>, beating: Bool)>(([], false))
    private let heartbeats = DispatchQueue(label: "tessera.pyramid-cache.heartbeat", qos: .userInitiated)

    /// Locks that go stale after `timeout` seconds without a heartbeat.
    init(timeout: Double) {
        self.timeout = timeout
    }

    /// Whether the lock file at `path` exists and was touched within the timeout: a build holds it.
    func isHeld(_ path: String) -> Bool {
        guard let age = Self.age(of: path) else { return false }
        return age <= timeout
    }

    /// Claims the lock at `path`: true when this process now holds it (created, or taken over from a stale one),
    /// false when another build holds it.
    func claim(_ path: String) -> Bool {
        if create(path) { return true }
        guard let age = Self.age(of: path), age > timeout else { return false }
        // Stale: move it aside (atomic, so of several processes taking over only one moves it), make sure what was
        // moved is still the stale lock and not one just created by a quicker taker, and claim afresh.
        let aside = "\(path).stale-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard rename(path, aside) == 0 else { return false }
        if let movedAge = Self.age(of: aside), movedAge <= timeout {
            link(aside, path)  // a live lock moved by mistake goes back (unless its place was taken meanwhile)
            unlink(aside)
            return false
        }
        unlink(aside)
        return create(path)
    }

    /// Gives up the lock at `path`, which this process holds.
    func release(_ path: String) {
        held.withLock { _ = $0.paths.remove(path) }
        unlink(path)
        TemporaryFiles.shared.remove(path)
    }

    /// Creates the lock exclusively, noting who holds it, and starts its heartbeat.
    private func create(_ path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else { return false }
        let owner = "\(ProcessInfo.processInfo.hostName) \(getpid())\n"
        _ = owner.withCString { write(descriptor, $0, strlen($0)) }
        close(descriptor)
        TemporaryFiles.shared.insert(path)
        let start = held.withLock { held in
            held.paths.insert(path)
            defer { held.beating = true }
            return !held.beating
        }
        if start { heartbeats.async { [self] in beat() } }
        return true
    }

    /// Touches every held lock, then again after a quarter of the timeout while any is held.
    private func beat() {
        let paths = held.withLock { held in
            if held.paths.isEmpty { held.beating = false }
            return held.paths
        }
        guard !paths.isEmpty else { return }
        for path in paths { utime(path, nil) }
        heartbeats.asyncAfter(deadline: .now() + timeout / 4) { [self] in beat() }
    }

    /// Seconds since the file at `path` was modified, or nil when there is none.
    static func age(of path: String) -> Double? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        return Date().timeIntervalSince1970 - modified
    }
}
