import Foundation
import Synchronization

/// A file written under a temporary name in its target folder and renamed into place by `commit()`:
/// an interrupted or failed write never leaves a half file under the real name. Dropped without a commit,
/// the temporary file is removed.
final class AtomicFile {
    let path: String
    let temporaryPath: String
    private(set) var handle: UnsafeMutablePointer<FILE>?

    init(path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var template = Array("\(folder)/.\(url.lastPathComponent)\(Self.temporaryMarker)XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw TesseraError.io(path: path, detail: "cannot create a file in \(folder): "
                                  + String(cString: strerror(errno)).lowercased())
        }
        fchmod(descriptor, 0o644)
        self.path = path
        self.temporaryPath = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        self.handle = fdopen(descriptor, "wb")
        TemporaryFiles.shared.insert(temporaryPath)
    }

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
        TemporaryFiles.shared.remove(temporaryPath)
    }

    /// Flushes, closes and renames the file to its real name.
    func commit() throws {
        guard let handle else { return }
        self.handle = nil
        let failed = fflush(handle) != 0 || ferror(handle) != 0
        let closeFailed = fclose(handle) != 0
        if failed || closeFailed {
            unlink(temporaryPath)
            throw TesseraError.io(path: path, detail: "write failed: " + String(cString: strerror(errno)).lowercased())
        }
        guard rename(temporaryPath, path) == 0 else {
            let detail = String(cString: strerror(errno)).lowercased()
            unlink(temporaryPath)
            throw TesseraError.io(path: path, detail: "cannot rename into place: \(detail)")
        }
    }
}

/// The temporary files being written right now, so that a process interrupted by a signal can remove them.
public final class TemporaryFiles: Sendable {
    public static let shared = TemporaryFiles()
    private let paths = Mutex<Set<String>>([])

    func insert(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    func remove(_ path: String) { paths.withLock { _ = $0.remove(path) } }

    /// Deletes every temporary file still open; for signal handlers that are about to exit.
    public func removeAll() {
        paths.withLock { paths in
            for path in paths { unlink(path) }
            paths.removeAll()
        }
    }
}
