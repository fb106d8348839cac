import Foundation
import Tessera

/// The front page of `tessera serve`: one folder of the catalog as a grid of cards, its subfolders first, then its
/// images, each with a thumbnail from the IIIF service itself (so it costs a reduced decode or a stored level, and
/// the browser loads it lazily, as the page scrolls), its name, pixel size and format, and links to the viewer, the
/// info.json, the IIIF Manifest and the progressive-loading page, and a link to the folder's IIIF Collection. `/`
/// shows the root; `/browse/{folder}/` a folder under it.
struct FrontPage: Sendable {
    /// The path before a folder's, e.g. `/browse/maps/scans/`.
    static let browsePrefix = "/browse/"

    let catalog: ImageCatalog
    /// The IIIF service's path prefix, e.g. `/iiif`.
    let prefix: String
    let limits: IIIFLimits
    /// Whether the viewer's pages are served (images then link to them).
    let hasViewer: Bool

    /// The page for `folder` (relative to the catalog's root, "" for the root), or a 404 when there is none; its
    /// links start with `root`, the path a proxy puts before the server's ("" when there is none).
    func response(folder: String, root: String) -> HTTPResponse {
        guard let contents = catalog.folder(folder) else { return .text(404, "no folder '\(folder)'") }
        let cards = contents.folders.map { folderCard($0, root: root) } + contents.images.map { imageCard($0, root: root) }
        let count = "\(contents.images.count) image\(contents.images.count == 1 ? "" : "s")"
            + (contents.folders.isEmpty ? "" : ", \(contents.folders.count) folder\(contents.folders.count == 1 ? "" : "s")")
        let html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Tessera\(folder.isEmpty ? "" : ": " + escapeHTML(folder))</title>
            <link rel="icon" href="data:,">
            <style>\(Self.style)</style>
            </head>
            <body>
            <header><nav>\(breadcrumbs(folder, root: root))</nav><p>\(catalog.listsImages ? count : Self.unlisted)</p>\
            \(catalog.listsImages ? "<a href=\"\(root)\(prefix)\(IIIFPresentation.collectionPath(of: folder))\">IIIF collection</a>" : "")</header>
            <ul class="grid">
            \(cards.joined(separator: "\n"))
            </ul>
            </body>
            </html>

            """
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                   ("Cache-Control", "no-cache")], body: Array(html.utf8))
    }

    /// What the page says when images come from URLs by a template, which cannot be listed.
    static let unlisted = "images come from a URL template (--source-url) and cannot be listed: the front page lists"
        + " local folders and catalog files only; open /view/{identifier} or /iiif/{identifier}/info.json"

    /// The folder a `/browse/...` path names (percent-decoded, without slashes at either end), or nil.
    static func folder(fromPath path: String) -> String? {
        guard path.hasPrefix(browsePrefix) else { return path == "/" || path == "/index.html" ? "" : nil }
        let encoded = path.dropFirst(browsePrefix.count)
        return (encoded.hasSuffix("/") ? encoded.dropLast() : encoded).percentDecoded
    }

    /// Links to the root and to each folder above `folder`, the last one (this page) as plain text.
    private func breadcrumbs(_ folder: String, root: String) -> String {
        let segments = folder.split(separator: "/").map(String.init)
        var links = [segments.isEmpty ? "<strong>Tessera</strong>" : "<a href=\"\(root)/\">Tessera</a>"]
        for index in segments.indices {
            let name = escapeHTML(segments[index])
            links.append(index == segments.count - 1 ? "<strong>\(name)</strong>"
                : "<a href=\"\(root)\(Self.browsePath(segments[...index].joined(separator: "/")))\">\(name)</a>")
        }
        return links.joined(separator: " / ")
    }

    private func folderCard(_ folder: String, root: String) -> String {
        let name = escapeHTML(ImageCatalog.lastComponent(of: folder))
        return "<li class=\"folder\"><a href=\"\(root)\(Self.browsePath(folder))\"><span class=\"icon\"></span>"
            + "<span class=\"name\">\(name)/</span></a></li>"
    }

    /// A card for one image: its thumbnail, name, size and format, or what is wrong with it.
    private func imageCard(_ identifier: String, root: String) -> String {
        let encoded = ImageCatalog.pathSegment(of: identifier)
        let name = escapeHTML(ImageCatalog.lastComponent(of: identifier))
        let info = "\(root)\(prefix)/\(encoded)/info.json"
        let properties: ImageProperties
        do {
            guard let path = catalog.file(for: identifier)?.path else { throw IIIFError.notFound("gone") }
            properties = try ImageSource(path: path).properties
        } catch {
            return "<li class=\"image broken\"><span class=\"thumb\"></span><span class=\"name\">\(name)</span>"
                + "<span class=\"meta\">\(escapeHTML(TesseraError.message(for: error, about: identifier)))</span></li>"
        }
        let target = hasViewer ? "\(root)/view/\(encoded)" : info
        let thumbnail = IIIFRequest.thumbnail(of: properties.size, limits: limits)
        let links = ["<a href=\"\(info)\">info.json</a>",
                     "<a href=\"\(root)\(prefix)\(IIIFPresentation.manifestPath(of: identifier))\">manifest</a>"]
            + (hasViewer ? ["<a href=\"\(root)/web/progressive.html?id=\(encoded)\">progressive</a>"] : [])
        return """
            <li class="image"><a class="thumb" href="\(target)"><img loading="lazy" decoding="async" alt="" \
            width="\(thumbnail.size.width)" height="\(thumbnail.size.height)" \
            src="\(root)\(prefix)/\(encoded)/full/\(thumbnail.request)/0/default.jpg"></a>\
            <a class="name" href="\(target)" title="\(escapeHTML(identifier))">\(name)</a>\
            <span class="meta">\(properties.width.grouped) &times; \(properties.height.grouped) \
            &middot; \(properties.format.displayName)</span><span class="links">\(links.joined(separator: " "))</span></li>
            """
    }

    /// The page of `folder`: `/browse/` and its segments, each percent-encoded, and a trailing slash.
    static func browsePath(_ folder: String) -> String {
        browsePrefix + folder.split(separator: "/").map { ImageCatalog.pathSegment(of: String($0)) }.joined(separator: "/") + "/"
    }

    private static let style = """
        body { margin: 0; font: 14px system-ui, sans-serif; background: #161616; color: #ddd; }
        header { padding: 12px 16px; display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
        header p { margin: 0; color: #999; }
        a { color: #9cf; }
        nav strong { color: #fff; }
        .grid { list-style: none; margin: 0; padding: 0 16px 16px; display: grid; gap: 12px;
                grid-template-columns: repeat(auto-fill, minmax(210px, 1fr)); }
        .grid li { background: #222; border-radius: 6px; padding: 8px; display: flex; flex-direction: column;
                   gap: 4px; min-width: 0; }
        .thumb { height: 200px; display: flex; align-items: center; justify-content: center; background: #1b1b1b; }
        .thumb img { max-width: 100%; max-height: 100%; width: auto; height: auto; }
        .name { color: #eee; font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .meta, .links { color: #999; font-size: 12px; overflow-wrap: anywhere; }
        .links a { margin-right: 8px; }
        .folder a { display: flex; flex-direction: column; gap: 4px; text-decoration: none; }
        .folder .icon { height: 200px; display: block; background: #1b1b1b; border-radius: 4px;
                        background-image: linear-gradient(#3a3a2a, #3a3a2a); background-size: 60% 45%;
                        background-repeat: no-repeat; background-position: center; }
        .broken .thumb { background: #2a1b1b; }
        """
}
