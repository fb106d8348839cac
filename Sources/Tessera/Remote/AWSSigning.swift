/// How a request is signed with AWS Signature Version 4 (S3 and S3-compatible stores). libcurl computes the
/// signature (`CURLOPT_AWS_SIGV4`); this says with what, and supplies the headers and URL form the signature
/// needs that libcurl 7.88 does not add itself.
public struct AWSSigning: Sendable, Equatable {
    public var credentials: AWSCredentials
    public var region: String
    /// The service name in the credential scope: `s3` for object storage.
    public var service: String

    public init(credentials: AWSCredentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The SHA-256 of an empty body, hex: the payload hash of every GET and HEAD Tessera sends.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// Whether `url` carries a signature of its own in its query (a presigned URL): it is never signed again.
    public static func isPresigned(_ url: String) -> Bool {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return false }
        return query.split(separator: "&").contains { $0.lowercased().hasPrefix("x-amz-signature=") }
    }

    /// The headers to send beside `headers` so that they are signed too: the session token, and for S3 the
    /// `x-amz-content-sha256` every S3 request must carry (libcurl 7.88 adds neither).
    func extraHeaders(beside headers: [HTTPClient.Header]) -> [HTTPClient.Header] {
        var extra: [HTTPClient.Header] = []
        if let token = credentials.sessionToken { extra.append(HTTPClient.Header("X-Amz-Security-Token", token)) }
        if service == "s3" && !headers.contains(where: { $0.name.lowercased() == "x-amz-content-sha256" }) {
            extra.append(HTTPClient.Header("x-amz-content-sha256", Self.emptyPayloadHash))
        }
        return extra
    }

    /// `url` with its query parameters in the canonical request's order (by name, then value). libcurl 7.88 signs
    /// the query as it stands, so a URL whose parameters are out of order would carry a signature the server
    /// computes differently; sent in that order, the query and its canonical form are the same.
    static func canonicalQueryOrder(_ url: String) -> String {
        let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return url }
        let fragmentless = parts[1].split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let parameters = fragmentless[0].split(separator: "&").map { parameter -> (Substring, Substring) in
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (pair[0], pair.count == 2 ? pair[1] : "")
        }
        let sorted = parameters.sorted { ($0.0.utf8.lexicographicallyPrecedes($1.0.utf8))
            || ($0.0 == $1.0 && $0.1.utf8.lexicographicallyPrecedes($1.1.utf8)) }
        let query = sorted.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        return "\(parts[0])?\(query)"
    }
}
