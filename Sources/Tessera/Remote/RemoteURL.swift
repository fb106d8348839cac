import Foundation

/// A remote image's address as its requests use it: the http(s) URL, and the signing they carry. The one place
/// that turns what a user wrote (`https://...`, `http://...`, `s3://bucket/key`) into requests.
public struct RemoteURL: Sendable, Equatable {
    public var url: String
    /// How every request for `url` is signed; nil for public and presigned URLs.
    public var signing: AWSSigning?

    public init(url: String, signing: AWSSigning? = nil) {
        self.url = url
        self.signing = signing
    }

    /// Whether `text` names a remote image (`http://`, `https://` or `s3://`) rather than a file.
    public static func isRemote(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return ["http://", "https://", "s3://"].contains { lowered.hasPrefix($0) }
    }

    /// An http(s) URL as it is, unsigned (a public or presigned URL needs no credentials); `s3://bucket/key` as
    /// the store's URL for the object, signed when the environment has credentials. Bad input (a malformed s3://
    /// URL, half a key pair, a bad endpoint) is a `TesseraError` naming it.
    public static func resolve(_ text: String,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws -> RemoteURL {
        let lowered = text.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return RemoteURL(url: text) }
        let object = try S3Location(url: text)
        let store = try S3Store.fromEnvironment(environment)
        return RemoteURL(url: store.url(of: object), signing: store.signing)
    }

    /// A request for this URL, carrying its signing; `bodyLimit` bounds the answer, in bytes.
    public func request(_ method: HTTPClient.Request.Method = .get, range: Range<Int>? = nil,
                        headers: [HTTPClient.Header] = [], bodyLimit: Int? = nil) -> HTTPClient.Request {
        HTTPClient.Request(url: url, method: method, range: range, headers: headers, signing: signing, bodyLimit: bodyLimit)
    }
}
