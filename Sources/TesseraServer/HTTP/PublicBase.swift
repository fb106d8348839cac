import Foundation

/// The address clients reach the server at, which a reverse proxy or load balancer in front of it changes:
/// `origin` (`scheme://host[:port]`) and `path` (what the proxy puts before every path the server answers, "" or
/// e.g. `/tiles`). The IIIF `id`s and the pages' links are made from it. It is the configured `--public-url` when
/// there is one, else the request's `X-Forwarded-Proto`, `X-Forwarded-Host` and `X-Forwarded-Prefix` (the first
/// value of each, as proxies append theirs), else its `Host` over plain HTTP.
public struct PublicBase: Sendable, Equatable {
    /// `scheme://host[:port]`, no trailing slash.
    public let origin: String
    /// The path before the server's own paths: "" or one starting with `/` and not ending with one.
    public let path: String

    /// `origin` followed by `path`.
    public var url: String { origin + path }

    /// The base an absolute `http(s)://host[:port][/path]` URL names (a trailing slash dropped), or nil when `url`
    /// is not one: another scheme, no host, a query or a fragment.
    public init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil, components.user == nil else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        self.init(origin: "\(scheme)://\(host)\(port)", path: path)
    }

    init(origin: String, path: String) {
        self.origin = origin
        self.path = path
    }

    /// The base `request` was made through: `configured` when given, else its forwarded headers and Host.
    static func of(_ request: HTTPRequest, configured: PublicBase?) -> PublicBase {
        if let configured { return configured }
        func first(_ name: String) -> String? {
            guard let value = request.headers[name]?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces),
                  !value.isEmpty, !value.contains(where: { $0 == "\"" || $0 == "<" || $0 == ">" || $0 == " " })
            else { return nil }
            return value
        }
        let scheme = first("x-forwarded-proto").map { $0.lowercased() }.flatMap { $0 == "https" || $0 == "http" ? $0 : nil }
        let host = first("x-forwarded-host") ?? request.headers["host"] ?? "localhost"
        var prefix = first("x-forwarded-prefix").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? ""
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return PublicBase(origin: "\(scheme ?? "http")://\(host)", path: prefix)
    }
}
