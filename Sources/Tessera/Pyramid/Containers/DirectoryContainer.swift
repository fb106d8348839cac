import Foundation
import Synchronization

/// Builds a pyramid as a folder tree under a hidden sibling, `.NAME.tessera-partial`, and moves its top-level
/// entries into place when the build completes, so a killed build never looks finished. With `resume`, a
/// partial tree left by a killed build of the same image and options is kept and its complete tiles reused
/// (`PartialBuildPolicy`).
public final class DirectoryContainer: PyramidContainer {
    /// The folder the output goes in.
    public let parent: String
    /// The hidden folder the tree is built in.
    public let partialRoot: String
    private let entries: [String]
    private let buildKey: String
    private let createdFolders = Mutex<Set<String>>([])

    /// The file, inside every top-level folder Tessera makes, that marks the folder as replaceable by a new build
    /// and holds the key of the build that made it.
    static let marker = ".tessera-pyramid"
    private static let buildKeyFile = ".tessera-build"

    /// `entries` are the layout's top-level names; `buildKey` identifies the source and options, so that
    /// a partial build is reused only by the same build.
    public init(parent: String, entries: [String], buildKey: String, partial policy: PartialBuildPolicy) throws {
        self.parent = parent.isEmpty ? "." : parent
        self.entries = entries
        self.buildKey = buildKey
        self.partialRoot = "\(self.parent)/.\(entries[0]).tessera-partial"
        let files = FileManager.default
        for entry in entries {
            let destination = "\(self.parent)/\(entry)"
            var isFolder: ObjCBool = false
            if files.fileExists(atPath: destination, isDirectory: &isFolder), isFolder.boolValue,
               !files.fileExists(atPath: "\(destination)/\(Self.marker)") {
                throw TesseraError.invalidArgument(
                    "\(destination) exists and was not made by tessera: remove it or choose another output name")
            }
        }
        let keyPath = "\(partialRoot)/\(Self.buildKeyFile)"
        if files.fileExists(atPath: partialRoot) {
            let sameBuild = (try? String(contentsOfFile: keyPath, encoding: .utf8)) == buildKey
            if policy == .resume && !sameBuild {
                throw TesseraError.invalidArgument(
                    "\(partialRoot) is from a build of another image or with other options: rerun without --resume")
            }
            if policy == .discard || !sameBuild { try files.removeItem(atPath: partialRoot) }
        }
        try ensureFolder(partialRoot)
        try Data(buildKey.utf8).write(to: URL(fileURLWithPath: keyPath))
    }

    public func hasCompleteFile(at path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "\(partialRoot)/\(path)") else { return false }
        return isCompleteImage(data)
    }

    public func write(_ bytes: [UInt8], to path: String) throws {
        let full = "\(partialRoot)/\(path)"
        if let slash = full.lastIndex(of: "/") { try ensureFolder(String(full[..<slash])) }
        let descriptor = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw TesseraError.io(path: full) }
        defer { close(descriptor) }
        var written = 0
        try bytes.withUnsafeBytes { raw in
            while written < raw.count {
                let count = Foundation.write(descriptor, raw.baseAddress! + written, raw.count - written)
                guard count > 0 else { throw TesseraError.io(path: full) }
                written += count
            }
        }
    }

    /// Moves the tree into place. Every folder's marker holds the build key (the first folder's is the build's
    /// `CompletionRecord`); the markers of the build being replaced are emptied first and the first folder goes
    /// last, so a kill in between leaves no marker vouching for a mix of two builds.
    public func commit() throws {
        let files = FileManager.default
        try? files.removeItem(atPath: "\(partialRoot)/\(Self.buildKeyFile)")
        for entry in entries {
            var isFolder: ObjCBool = false
            guard files.fileExists(atPath: "\(partialRoot)/\(entry)", isDirectory: &isFolder), isFolder.boolValue
            else { continue }
            try write(Array(buildKey.utf8), to: "\(entry)/\(Self.marker)")
            let replaced = "\(parent)/\(entry)/\(Self.marker)"
            if files.fileExists(atPath: replaced) { try Data().write(to: URL(fileURLWithPath: replaced)) }
        }
        for entry in entries.reversed() {
            let built = "\(partialRoot)/\(entry)", destination = "\(parent)/\(entry)"
            guard files.fileExists(atPath: built) else { continue }
            if files.fileExists(atPath: destination) {
                // Replace the previous build: move it aside first so the new one appears in one rename.
                let aside = "\(partialRoot)/.replaced-\(entry)"
                guard rename(destination, aside) == 0 else { throw TesseraError.io(path: destination) }
            }
            guard rename(built, destination) == 0 else { throw TesseraError.io(path: destination) }
        }
        try files.removeItem(atPath: partialRoot)
    }

    public func discard() {
        try? FileManager.default.removeItem(atPath: partialRoot)
    }

    /// Creates `folder` and its parents once, remembering what exists so tiles do not each pay for mkdir.
    private func ensureFolder(_ folder: String) throws {
        if createdFolders.withLock({ $0.contains(folder) }) { return }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw TesseraError.io(path: folder, detail: "cannot create the folder: \(error.localizedDescription)")
        }
        createdFolders.withLock { _ = $0.insert(folder) }
    }
}
