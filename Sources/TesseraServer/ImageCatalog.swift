import Foundation

/// The images a server may serve: every image file under a root folder (or one file), and every pre-built pyramid
/// there (a Deep Zoom `.dzi`, a IIIF level-0 folder with its `info.json`), looked up by identifier.
/// An identifier is a path relative to the root, percent-decoded once by the router; it must stay inside the
/// root after every symlink is followed, so `..`, absolute paths and links pointing out are all "not found".
public struct ImageCatalog: Sendable {
    /// The root folder, with symlinks resolved.
    public let root: String
    /// When serving one file, its name (the only identifier).
    private let singleFile: String?

    /// Identifiers longer than this are refused without touching the file system.
    static let maxIdentifierLength = 1024

    /// Serves `path`: a folder (every image under it) or one image: a file, or a IIIF level-0 folder.
    public init(path: String) throws {
        guard let resolved = Self.realPath(path) else {
            throw IIIFError.notFound("\(path): no such file or folder")
        }
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
    static let imageExtensions = ["jpg", "jpeg", "png", "tif", "tiff", "webp", "bmp", "gif", "dzi"]

    /// The file an identifier names, with or without its extension, or nil if it names nothing servable inside
    /// the root; for a IIIF level-0 folder, its `info.json`.
    public func file(for identifier: String) -> String? {
        if let exact = exactFile(for: identifier) { return exact }
        guard (identifier as NSString).pathExtension.isEmpty else { return nil }
        return Self.imageExtensions.lazy.compactMap { exactFile(for: identifier + "." + $0) }.first
    }

    private func exactFile(for identifier: String) -> String? {
        guard !identifier.isEmpty, identifier.utf8.count <= Self.maxIdentifierLength, !identifier.contains("\0"),
              !identifier.hasPrefix("/") else { return nil }
        let components = identifier.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return nil }
        if let singleFile, identifier != singleFile { return nil }
        guard let resolved = Self.realPath(root + "/" + identifier), resolved.hasPrefix(root + "/") else { return nil }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder) else { return nil }
        guard isFolder.boolValue else { return resolved }
        guard let info = Self.realPath(resolved + "/info.json"), info.hasPrefix(root + "/") else { return nil }
        return info
    }

    /// Whether `folder` (relative to the root) is a pyramid's tile folder rather than a folder of images: a IIIF
    /// level-0 folder, or the `NAME_files` of a Deep Zoom `NAME.dzi`.
    private func isPyramidFolder(_ folder: String) -> Bool {
        let path = root + "/" + folder
        if FileManager.default.fileExists(atPath: path + "/info.json") { return true }
        return folder.hasSuffix("_files") && FileManager.default.fileExists(atPath: String(path.dropLast(6)) + ".dzi")
    }

    /// Every servable image's identifier, sorted, for the index page; hidden files and folders, links that lead
    /// out of the root, and the tiles inside pyramids are skipped.
    public func identifiers(limit: Int = 10_000) -> [String] {
        if let singleFile { return [singleFile] }
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        while let relative = walker.nextObject() as? String, found.count < limit {
            let name = (relative as NSString).lastPathComponent
            if name.hasPrefix(".") {
                walker.skipDescendants()
                continue
            }
            if walker.fileAttributes?[.type] as? FileAttributeType == .typeDirectory, isPyramidFolder(relative) {
                walker.skipDescendants()
                if !relative.hasSuffix("_files") && exactFile(for: relative) != nil { found.append(relative) }
                continue
            }
            let isImage = Self.imageExtensions.contains((name as NSString).pathExtension.lowercased())
            if isImage && exactFile(for: relative) != nil { found.append(relative) }
        }
        return found.sorted()
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
