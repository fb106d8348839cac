import Foundation

/// The images a server may serve: every file under a root folder (or one file), looked up by identifier.
/// An identifier is a path relative to the root, percent-decoded once by the router; it must stay inside the
/// root after every symlink is followed, so `..`, absolute paths and links pointing out are all "not found".
public struct ImageCatalog: Sendable {
    /// The root folder, with symlinks resolved.
    public let root: String
    /// When serving one file, its name (the only identifier).
    private let singleFile: String?

    /// Identifiers longer than this are refused without touching the file system.
    static let maxIdentifierLength = 1024

    /// Serves `path`: a folder (every image under it) or one image file.
    public init(path: String) throws {
        guard let resolved = Self.realPath(path) else {
            throw IIIFError.notFound("\(path): no such file or folder")
        }
        var isFolder: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder)
        if isFolder.boolValue {
            root = resolved
            singleFile = nil
        } else {
            root = (resolved as NSString).deletingLastPathComponent
            singleFile = (resolved as NSString).lastPathComponent
        }
    }

    /// Extensions tried, in order, for an identifier given without one (`maps/china` for `maps/china.jpg`).
    static let imageExtensions = ["jpg", "jpeg", "png", "tif", "tiff", "webp", "bmp", "gif"]

    /// The file an identifier names, with or without its extension, or nil if it names nothing servable inside
    /// the root.
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
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder), !isFolder.boolValue else {
            return nil
        }
        return resolved
    }

    /// Every servable image's identifier, sorted, for the index page; hidden files and folders, and links that lead
    /// out of the root, are skipped.
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
