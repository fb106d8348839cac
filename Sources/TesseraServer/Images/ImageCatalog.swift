import Foundation
import Tessera

/// The images a server may serve: every image file under a root folder (or one file), and every pre-built pyramid
/// there (a Deep Zoom `.dzi`, a IIIF level-0 folder with its `info.json`, either in a zip), looked up by identifier.
/// An identifier is a path relative to the root, percent-decoded once by the router; it must stay inside the
/// root after every symlink is followed, so `..`, absolute paths and links pointing out are all "not found".
/// A catalog of `RemoteImages` maps identifiers to URLs instead, and "files" are those URLs.
public struct ImageCatalog: Sendable {
    /// The root folder, with symlinks resolved (for remote images, the template or catalog file they come from).
    public let root: String
    /// When serving one file, its name (the only identifier).
    private let singleFile: String?
    /// The images on a web server, when they are served instead of files.
    private let remote: RemoteImages?
    /// The files identifiers resolved to, shared by every copy of the catalog.
    private let resolutions = ResolvedFiles()

    /// Serves the images `remote` names, by URL.
    public init(remote: RemoteImages) {
        root = remote.description
        singleFile = nil
        self.remote = remote
    }

    /// Whether the front page can list the images: false for remote images named by a template.
    public var listsImages: Bool { remote.map { $0.identifiers != nil } ?? true }

    /// Identifiers longer than this are refused without touching the file system.
    static let maxIdentifierLength = 1024

    /// Serves `path`: a folder (every image under it) or one image: a file, or a IIIF level-0 folder. A path that
    /// does not exist is an I/O error naming it.
    public init(path: String) throws {
        guard let resolved = realPath(path) else {
            throw TesseraError.io(path: path, detail: "no such file or directory")
        }
        remote = nil
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder)
        if isFolder.boolValue && !FileManager.default.fileExists(atPath: resolved + "/info.json") {
            root = resolved
            singleFile = nil
        } else {
            root = (resolved as NSString).deletingLastPathComponent
            singleFile = (resolved as NSString).lastPathComponent
        }
    }

    /// Extensions tried, in order, for an identifier given without one (`maps/china` for `maps/china.jpg`).
    static let imageExtensions = ["jpg", "jpeg", "png", "tif", "tiff", "webp", "bmp", "gif", "jp2", "jph", "j2k", "j2c", "dzi"]
        + zipExtensions
    /// The extensions of zips, listed only when they look like a pyramid packed whole.
    static let zipExtensions = ["zip", "szi"]

    /// What an identifier names: the file (or URL), and the file's size and time as the `stat(2)` that found it
    /// read them, so that opening it needs no other (nil for a URL, and for a IIIF level-0 folder's `info.json`).
    public struct File: Sendable {
        public let path: String
        public let stamp: FileStamp?
    }

    /// The file an identifier names, with or without its extension, or nil if it names nothing servable inside
    /// the root; for a IIIF level-0 folder, its `info.json`.
    public func file(for identifier: String) -> File? {
        if let remote { return remote.url(for: identifier).map { File(path: $0, stamp: nil) } }
        if let exact = exactFile(for: identifier) { return exact }
        guard Self.fileExtension(of: identifier).isEmpty else { return nil }
        return Self.imageExtensions.lazy.compactMap { exactFile(for: identifier + "." + $0) }.first
    }

    /// The file `identifier` names exactly; one `stat(2)` when it was resolved before and still reaches that file.
    private func exactFile(for identifier: String) -> File? {
        if let singleFile, identifier != singleFile { return nil }
        // Nothing there (realpath would fail too), or what is there now: the file resolved before, or not.
        var status = stat()
        guard Self.isWellFormed(identifier), stat(root + "/" + identifier, &status) == 0 else { return nil }
        let isFolder = status.st_mode & S_IFMT == S_IFDIR
        if !isFolder, let known = resolutions.path(of: identifier, reaching: ResolvedFiles.Identity(status)) {
            return File(path: known, stamp: FileStamp(status))
        }
        guard let resolved = resolvedInside(identifier) else { return nil }
        guard isFolder else {
            // The identity of the file resolved, not the one stat reached before: the path may have changed between.
            guard stat(resolved, &status) == 0 else { return File(path: resolved, stamp: nil) }
            if status.st_mode & S_IFMT == S_IFREG {
                resolutions.remember(identifier, path: resolved, identity: ResolvedFiles.Identity(status))
            }
            return File(path: resolved, stamp: FileStamp(status))
        }
        guard let info = realPath(resolved + "/info.json"), info.hasPrefix(root + "/") else { return nil }
        return File(path: info, stamp: nil)
    }

    /// Whether `folder` (relative to the root) is a pyramid's tile folder rather than a folder of images: a IIIF
    /// level-0 folder, or the `NAME_files` of a Deep Zoom `NAME.dzi`.
    private func isPyramidFolder(_ folder: String) -> Bool {
        let path = root + "/" + folder
        if FileManager.default.fileExists(atPath: path + "/info.json") { return true }
        return folder.hasSuffix("_files") && FileManager.default.fileExists(atPath: String(path.dropLast(6)) + ".dzi")
    }

    /// Every servable image's identifier, sorted; hidden files and folders, links that lead out of the root, and
    /// the tiles inside pyramids are skipped.
    public func identifiers(limit: Int = 10_000) -> [String] {
        if let remote { return Array((remote.identifiers ?? []).prefix(limit)) }
        if let singleFile { return [singleFile] }
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        while let relative = walker.nextObject() as? String, found.count < limit {
            let isFolder = walker.fileAttributes?[.type] as? FileAttributeType == .typeDirectory
            let kind = entry(relative, isFolder: isFolder)
            if kind == .image { found.append(relative) }
            if isFolder && kind != .folder { walker.skipDescendants() }
        }
        return found.sorted()
    }

    /// What one folder under the root holds, for the front page: the folder, relative to the root ("" for the
    /// root), its subfolders (relative to the root, excluding hidden folders and pyramids' tile folders) and the
    /// identifiers of the images directly in it, both sorted.
    public struct Folder: Sendable, Equatable {
        public let path: String
        public let folders: [String]
        public let images: [String]
    }

    /// The contents of `folder` (relative to the root, "" for the root itself), or nil when it is not a folder of
    /// images inside the root (missing, hidden, outside after links are followed, or a pyramid).
    public func folder(_ folder: String) -> Folder? {
        if let remote { return folder.isEmpty ? Folder(path: "", folders: [], images: remote.identifiers ?? []) : nil }
        if let singleFile { return folder.isEmpty ? Folder(path: "", folders: [], images: [singleFile]) : nil }
        guard folder.isEmpty || entry(folder, isFolder: true) == .folder && resolvedInside(folder) != nil,
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? root : root + "/" + folder)
        else { return nil }
        var folders: [String] = [], images: [String] = []
        for name in names {
            let relative = folder.isEmpty ? name : folder + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isFolder) else { continue }
            switch entry(relative, isFolder: isFolder.boolValue) {
            case .image: images.append(relative)
            case .folder: if resolvedInside(relative) != nil { folders.append(relative) }
            case nil: break
            }
        }
        return Folder(path: folder, folders: folders.sorted(), images: images.sorted())
    }

    /// What the catalog makes of a path under the root: an image (a file with an image extension, or a pyramid's
    /// descriptor or IIIF level-0 folder, inside the root), a folder to look into, or nothing (hidden, a pyramid's
    /// tile folder, a link out of the root, any other file).
    private enum Entry { case image, folder }

    private func entry(_ relative: String, isFolder: Bool) -> Entry? {
        let name = Self.lastComponent(of: relative)
        guard !name.hasPrefix("."), !relative.isEmpty else { return nil }
        if isFolder {
            guard isPyramidFolder(relative) else { return .folder }
            return !relative.hasSuffix("_files") && exactFile(for: relative) != nil ? .image : nil
        }
        let fileExtension = Self.fileExtension(of: name).lowercased()
        guard Self.imageExtensions.contains(fileExtension), let file = exactFile(for: relative) else { return nil }
        // A zip is listed when it looks like a pyramid packed whole; other archives are not images.
        let isZip = Self.zipExtensions.contains(fileExtension)
        return !isZip || ImageFormat.zipLooksLikePyramid(atPath: file.path) ? .image : nil
    }

    /// The path `relative` names with every link followed, when it is well formed (`isWellFormed`), exists and
    /// stays inside the root; nil otherwise.
    private func resolvedInside(_ relative: String) -> String? {
        guard Self.isWellFormed(relative), let resolved = realPath(root + "/" + relative),
              resolved.hasPrefix(root + "/") else { return nil }
        return resolved
    }

    /// Whether `relative` may name something under the root before any link is followed: no empty, `.` or `..`
    /// component (so no leading `/`), no NUL, at most `maxIdentifierLength` bytes.
    private static func isWellFormed(_ relative: String) -> Bool {
        relative.utf8.count <= maxIdentifierLength && !relative.utf8.contains(0)
            && !relative.split(separator: "/", omittingEmptySubsequences: false)
                .contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
    }

    /// An identifier (or a folder) as one URL path segment, `/` written `%2F`, as the IIIF service and the
    /// viewer's routes take it.
    static func pathSegment(of identifier: String) -> String {
        identifier.addingPercentEncoding(withAllowedCharacters: segmentCharacters) ?? identifier
    }

    private static let segmentCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// The last `/`-separated component of an identifier. Foundation's path functions are not used on
    /// identifiers: they come from requests, and NSString's trap on some (a multi-byte character after repeated
    /// slashes, found by the fuzzer).
    static func lastComponent(of identifier: String) -> String {
        identifier.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? identifier
    }

    /// The extension of an identifier's last component, after its last dot ("" for none or a leading dot only).
    static func fileExtension(of identifier: String) -> String {
        let name = lastComponent(of: identifier)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}
