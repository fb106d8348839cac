import Foundation
import Tessera

/// The browser viewer's files (the repository's `Web/` folder), served under `/web/` and as the page of
/// `/view/{identifier}`. Only regular files inside the folder are ever served: a path is percent-decoded once,
/// refused if any segment is empty, hidden (`.`, `..`, `.git`) or holds a NUL or a backslash, then resolved with
/// every symlink followed and refused unless it is still inside the folder.
///
/// Every response carries an ETag and Last-Modified and `Cache-Control: no-cache`: browsers revalidate each
/// time (a 304 costs a round trip, not a transfer), so an edited viewer is never shadowed by a stale copy.
public struct ViewerAssets: Sendable {
    /// The folder, with symlinks resolved.
    public let folder: String

    /// Media types by file extension; anything else is served as bytes.
    static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "json": "application/json", "svg": "image/svg+xml", "png": "image/png", "ico": "image/x-icon",
    ]

    /// The page every viewer URL serves; `data-src=""` in it receives the image's info.json address.
    static let pageName = "index.html"

    /// The viewer in `folder`, which must hold `index.html`.
    public init(folder: String) throws {
        guard let resolved = realPath(folder),
              FileManager.default.isReadableFile(atPath: resolved + "/" + Self.pageName) else {
            throw TesseraServerError.viewerNotFound(folder: folder)
        }
        self.folder = resolved
    }

    /// The viewer's folder found from `executable` (a path): the first `Web/` holding `index.html` in the
    /// executable's folder or one of its parents, so `.build/<triple>/release/tessera` finds the repository's
    /// `Web/`. Nil when there is none.
    public static func locate(from executable: String) -> String? {
        var folder = ((realPath(executable) ?? executable) as NSString).deletingLastPathComponent
        while folder.count > 1 {
            let candidate = folder + "/Web"
            if FileManager.default.isReadableFile(atPath: candidate + "/" + pageName) { return candidate }
            folder = (folder as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// The file at `relative` (still percent-encoded, from after `/web/`) with its media type, or a 404.
    func file(_ relative: Substring, request: HTTPRequest) -> HTTPResponse {
        guard let decoded = relative.percentDecoded, let path = resolve(decoded),
              let body = FileManager.default.contents(atPath: path) else {
            return .text(404, "not found")
        }
        let type = Self.contentTypes[(path as NSString).pathExtension.lowercased()] ?? "application/octet-stream"
        return cached(Array(body), contentType: type, path: path, request: request)
    }

    /// The viewer page opening `source` (an info.json or .dzi address, absolute or relative to the page), or
    /// opening whatever the page's `?src=` query names when `source` is nil. The source is also preloaded from the
    /// page's head, so it arrives while the scripts load rather than after them. The page's links to the viewer's
    /// files start with `root`, the path a proxy puts before the server's ("" when there is none).
    func page(source: String?, root: String, request: HTTPRequest) -> HTTPResponse {
        let path = folder + "/" + Self.pageName
        guard var html = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) })
        else { return .text(404, "not found") }
        if !root.isEmpty { html = html.replacingOccurrences(of: "=\"/web/", with: "=\"\(escapeHTML(root))/web/") }
        if let source {
            let escaped = escapeHTML(source)
            html = html.replacingOccurrences(of: "data-src=\"\"", with: "data-src=\"\(escaped)\"")
                .replacingOccurrences(of: "</head>", with: """
                    <link rel="preload" as="fetch" crossorigin="anonymous" href="\(escaped)">
                    </head>
                    """)
        }
        return cached(Array(html.utf8), contentType: Self.contentTypes["html"]!, path: path, request: request)
    }

    /// `relative` resolved inside the folder to a regular file, or nil.
    func resolve(_ relative: String) -> String? {
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !relative.isEmpty, relative.utf8.count <= 1024,
              !segments.contains(where: { $0.isEmpty || $0.hasPrefix(".") || $0.contains("\0") || $0.contains("\\") }),
              let resolved = realPath(folder + "/" + relative), resolved.hasPrefix(folder + "/") else { return nil }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: resolved, isDirectory: &isFolder), !isFolder.boolValue else {
            return nil
        }
        return resolved
    }

    /// A 200 with validators, or a 304 when the client's copy is current. The tag covers the body, so a page made
    /// for one image never validates another's.
    private func cached(_ body: [UInt8], contentType: String, path: String, request: HTTPRequest) -> HTTPResponse {
        let modified = FileStamp(path: path)?.modified ?? .distantPast
        let validators = ConditionalGET(identity: "\(modified.timeIntervalSince1970) " + String(decoding: body, as: UTF8.self),
                                        lastModified: HTTPLastModified(modified), cacheControl: "no-cache")
        return validators.respond(to: request) { (body, contentType) }
    }
}

/// `text` safe inside an HTML attribute value or element.
func escapeHTML(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
}

/// `path` with every symlink resolved, or nil when it does not exist.
func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}
