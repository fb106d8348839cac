import Foundation
import Tessera

/// The validators of a response and the conditional-GET rule of RFC 9110 (section 13), the one place every response
/// that can be cached is answered from: a request whose `If-None-Match` lists the entity tag (or is `*`) gets a 304;
/// one without `If-None-Match` whose `If-Modified-Since` is not before `lastModified` (to the second) gets a 304;
/// any other gets the body. Both answers carry the validators and `Cache-Control`.
struct ConditionalGET: Sendable {
    /// The strong entity tag, quoted.
    let entityTag: String
    let lastModified: HTTPLastModified
    /// `no-cache` (revalidate every time) or a lifetime such as `public, max-age=86400`.
    let cacheControl: String

    /// Validators tagging `identity` (whatever tells one version of the body from another) with a stable hash.
    init(identity: String, lastModified: HTTPLastModified, cacheControl: String) {
        entityTag = "\"" + stableHash(identity) + "\""
        self.lastModified = lastModified
        self.cacheControl = cacheControl
    }

    /// The headers both answers carry.
    var headers: [(String, String)] {
        [("ETag", entityTag), ("Last-Modified", lastModified.text), ("Cache-Control", cacheControl)]
    }

    /// Whether the client's copy is current, by the request's `If-None-Match` or else its `If-Modified-Since`.
    func isNotModified(_ request: HTTPRequest) -> Bool {
        if let tags = request.headers["if-none-match"] {
            return tags.split(separator: ",").contains {
                let tag = $0.trimmingCharacters(in: .whitespaces)
                return tag == "*" || tag == entityTag || tag == "W/" + entityTag
            }
        }
        guard let since = request.headers["if-modified-since"].flatMap(HTTPDate.parse) else { return false }
        return Double(lastModified.seconds) <= since.timeIntervalSince1970
    }

    /// A 304 when the client's copy is current, else a 200 with the body and media type `makeBody` gives (not
    /// called for a 304, so a body that is costly to make is made only when it is sent).
    func respond(to request: HTTPRequest, makeBody: () throws -> (body: [UInt8], contentType: String)) rethrows
        -> HTTPResponse {
        if isNotModified(request) { return HTTPResponse(status: 304, headers: headers) }
        let (body, contentType) = try makeBody()
        return HTTPResponse(status: 200, headers: [("Content-Type", contentType)] + headers, body: body)
    }
}
