import Foundation
import Synchronization

/// A file written under a temporary name in its target folder and renamed into place by `commit()`:
/// an interrupted or failed write never leaves a half file under the real name. Dropped without a commit,
/// the temporary file is removed.
final class AtomicFile {
    let path: String
    let temporaryPath: String
    private(set) var handle: UnsafeMutablePointer<FILE>?
    /// stdio's buffer, ours: glibc's setvbuf ignores the size it is given with no buffer and allocates one block.
    private let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: AtomicFile.bufferSize)

    init(path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var template = Array("\(folder)/.\(url.lastPathComponent)\(Self.temporaryMarker)XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw TesseraError.io(path: path, action: "cannot create a file in \(folder)")
        }
        fchmod(descriptor, 0o644)
        self.path = path
        self.temporaryPath = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        self.handle = fdopen(descriptor, "wb")
        // stdio's buffer of one block made a system call per 4 KiB written.
        if let handle { setvbuf(handle, buffer, _IOFBF, Self.bufferSize) }
        TemporaryFiles.shared.insert(temporaryPath)
    }

    /// Bytes written to the file at a time.
    private static let bufferSize = 1 << 16

    /// What a temporary name carries between the target's name and its random suffix.
    private static let temporaryMarker = ".tessera-"

    /// The name of the file a temporary file named `name` (a name in a folder, no slashes) was being written
    /// for, or nil when `name` is not one of `AtomicFile`'s temporary names.
    static func target(ofTemporaryName name: String) -> String? {
        guard name.hasPrefix("."), let marker = name.range(of: temporaryMarker, options: .backwards) else { return nil }
        let target = name[name.index(after: name.startIndex)..<marker.lowerBound]
        return target.isEmpty ? nil : String(target)
    }

    deinit {
        if let handle {
            fclose(handle)
            unlink(temporaryPath)
        }
        buffer.deallocate()
        TemporaryFiles.shared.remove(temporaryPath)
    }

    /// Flushes, closes and renames the file to its real name.
    func commit() throws {
        guard let handle else { return }
        self.handle = nil
        let failed = fflush(handle) != 0 || ferror(handle) != 0
        let closeFailed = fclose(handle) != 0
        if failed || closeFailed {
            let code = errno
            unlink(temporaryPath)
            throw TesseraError.io(path: path, action: "write failed", code: code)
        }
        guard rename(temporaryPath, path) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw TesseraError.io(path: path, action: "cannot rename into place", code: code)
        }
    }
}

/// The temporary files being written right now, so that a process interrupted by a signal can remove them.
public final class TemporaryFiles: Sendable {
    public static let shared = TemporaryFiles()

    private struct State {
        var paths: Set<String> = []
        /// Set by `removeAll`: the process is stopping, and a file a build thread still starts goes at once.
        var closed = false
    }

    private let state = Mutex(State())

    /// Adds the file at `path`, to be removed if the process is stopped before it is done with it (at once when
    /// it is stopping already).
    public func insert(_ path: String) {
        state.withLock { state in
            if state.closed { unlink(path) } else { state.paths.insert(path) }
        }
    }

    /// Forgets the file at `path`: it was renamed into place, or removed.
    public func remove(_ path: String) { state.withLock { _ = $0.paths.remove(path) } }

    /// Deletes every temporary file still open, and any started from now on; for a process about to exit.
    public func removeAll() {
        state.withLock { state in
            for path in state.paths { unlink(path) }
            state.paths.removeAll()
            state.closed = true
        }
    }
}
