import Foundation
import Tessera

/// Images on a web server, served by identifier: a URL template whose `{id}` is the identifier
/// (`--source-url 'https://host/images/{id}'`), or a catalog file of one identifier and one URL per line
/// (`--source-catalog FILE`; blank lines and lines starting with `#` are skipped). Identifiers follow the local
/// catalog's rules: no empty, `.` or `..` component, no NUL, at most `ImageCatalog.maxIdentifierLength` bytes.
public struct RemoteImages: Sendable {
    private enum Source: Sendable {
        case template(String)
        case listed([String: String], order: [String])
    }

    private let source: Source
    /// How the banner and messages name where the images come from: the template or the catalog file.
    public let description: String

    /// Images at `template`, an `http(s)://` URL with `{id}` in it.
    public init(template: String) throws {
        guard RemoteURL.isRemote(template), template.contains("{id}") else {
            throw TesseraError.invalidArgument("--source-url must be an http:// or https:// URL with {id} in it, not '\(template)'")
        }
        source = .template(template)
        description = template
    }

    /// Images listed in the catalog file at `path`: `IDENTIFIER URL` per line, separated by spaces or a tab.
    public init(catalog path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TesseraError.io(path: path, detail: "cannot read the catalog")
        }
        var urls: [String: String] = [:], order: [String] = []
        for (number, line) in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).enumerated() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.isEmpty || fields[0].hasPrefix("#") { continue }
            guard fields.count == 2, RemoteURL.isRemote(String(fields[1])), Self.isValid(String(fields[0])) else {
                throw TesseraError.corrupt(path: path, detail: "line \(number + 1) is not an identifier and an http(s) URL")
            }
            let identifier = String(fields[0])
            guard urls[identifier] == nil else {
                throw TesseraError.corrupt(path: path, detail: "line \(number + 1) lists '\(identifier)' again")
            }
            urls[identifier] = String(fields[1])
            order.append(identifier)
        }
        source = .listed(urls, order: order)
        description = path
    }

    /// The URL of `identifier`, or nil when it names no image.
    public func url(for identifier: String) -> String? {
        guard Self.isValid(identifier) else { return nil }
        switch source {
        case let .template(template):
            let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#;"))
            guard let encoded = identifier.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
            return template.replacingOccurrences(of: "{id}", with: encoded)
        case let .listed(urls, _):
            return urls[identifier]
        }
    }

    /// The identifiers of a catalog file, in its order; nil for a template, which cannot list its images.
    public var identifiers: [String]? {
        if case let .listed(_, order) = source { return order }
        return nil
    }

    private static func isValid(_ identifier: String) -> Bool {
        identifier.utf8.count <= ImageCatalog.maxIdentifierLength && !identifier.contains("\0")
            && !identifier.split(separator: "/", omittingEmptySubsequences: false)
                .contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
    }
}
