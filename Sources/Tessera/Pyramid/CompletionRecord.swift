import Foundation

/// The marker a finished build leaves with its output, holding the `BuildKey` it was built with. An output is
/// complete for a key when its record holds that key and every top-level entry of the output is there.
///
/// A folder pyramid's record is the `DirectoryContainer`'s own marker in its first folder, written and replaced
/// with the tree as it commits; a zip's is its archive comment, written with it. A pyramidal TIFF has a hidden file
/// beside it, `.NAME.tessera-complete`, that the build removes before it starts (`willReplace`) and writes once
/// the file is in place (`didBuild`), so that a record never vouches for an output another build is replacing.
public struct CompletionRecord: Sendable {
    /// The file holding the key.
    public let path: String
    /// The output's top-level files and folders, as paths.
    public let entries: [String]
    private let storage: Storage

    /// Where the key is kept.
    private enum Storage {
        /// The whole of the file at `path`, written by the container (`marker`) or by the build (`besideOutput`).
        case marker, besideOutput
        /// The comment of the zip at `path`.
        case zipComment
    }

    /// The record of a folder pyramid whose top-level entries, in `folder`, are `entries` (the first a folder).
    public static func folder(_ folder: String, entries: [String]) -> CompletionRecord {
        let parent = folder.isEmpty ? "." : folder
        return CompletionRecord(path: "\(parent)/\(entries[0])/\(DirectoryContainer.marker)",
                                entries: entries.map { "\(parent)/\($0)" }, storage: .marker)
    }

    /// The record of a pyramid in one zip file.
    public static func zip(_ path: String) -> CompletionRecord {
        CompletionRecord(path: path, entries: [path], storage: .zipComment)
    }

    /// The record of an output that is one file of another kind (a pyramidal TIFF).
    public static func file(_ path: String) -> CompletionRecord {
        let url = URL(fileURLWithPath: path)
        return CompletionRecord(path: "\(url.deletingLastPathComponent().path)/.\(url.lastPathComponent).tessera-complete",
                                entries: [path], storage: .besideOutput)
    }

    /// Whether the output is a finished build of `key`.
    public func isComplete(for key: BuildKey) -> Bool {
        let stored = storage == .zipComment ? ZipContainer.buildKey(ofArchive: path)
            : try? String(contentsOfFile: path, encoding: .utf8)
        return stored == key.description && entries.allSatisfy { FileManager.default.fileExists(atPath: $0) }
    }

    /// Before a build that will replace the output: a record beside it is removed (a container's is replaced by
    /// the container as it commits).
    public func willReplace() throws {
        guard storage == .besideOutput, unlink(path) != 0, errno != ENOENT else { return }
        throw TesseraError.io(path: path, action: "cannot remove")
    }

    /// After the build of `key` put the output in place: a record beside it is written, under a temporary name
    /// and renamed (a container's already holds the key).
    public func didBuild(_ key: BuildKey) throws {
        guard storage == .besideOutput else { return }
        let file = try AtomicFile(path: path)
        let bytes = Array(key.description.utf8)
        guard let handle = file.handle, fwrite(bytes, 1, bytes.count, handle) == bytes.count else {
            throw TesseraError.io(path: path, action: "write failed")
        }
        try file.commit()
    }

    /// The bytes the output holds on disk: every file under its entries.
    public func outputBytes() -> Int {
        let files = FileManager.default
        return entries.reduce(0) { total, entry in
            var isFolder: ObjCBool = false
            guard files.fileExists(atPath: entry, isDirectory: &isFolder) else { return total }
            guard isFolder.boolValue else { return total + Self.size(of: entry) }
            let inside = files.enumerator(atPath: entry)?.compactMap { $0 as? String } ?? []
            return total + inside.reduce(0) { $0 + Self.size(of: "\(entry)/\($1)") }
        }
    }

    private static func size(of path: String) -> Int {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return 0 }
        return Int(status.st_size)
    }
}
