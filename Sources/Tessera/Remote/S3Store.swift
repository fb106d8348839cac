/// The S3-compatible store `s3://` URLs refer to, as the AWS CLI's environment variables describe it: the
/// credentials (none: requests go unsigned), the region, and a custom endpoint for an S3-compatible store.
public struct S3Store: Sendable, Equatable {
    public var credentials: AWSCredentials?
    public var region: String
    /// The base URL of an S3-compatible store (`http://127.0.0.1:9000`), or nil for AWS itself.
    public var endpoint: String?

    /// The region when neither `AWS_REGION` nor `AWS_DEFAULT_REGION` names one, as for the AWS CLI's S3 commands.
    public static let defaultRegion = "us-east-1"

    public init(credentials: AWSCredentials? = nil, region: String = S3Store.defaultRegion, endpoint: String? = nil) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
    }

    /// The store `environment` describes: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`;
    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`; `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL` (both ignored when
    /// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is `true`). An endpoint that is not an http(s) URL is an error
    /// naming the variable.
    public static func fromEnvironment(_ environment: [String: String]) throws -> S3Store {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        var store = S3Store(credentials: try AWSCredentials.fromEnvironment(environment),
                            region: value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? defaultRegion)
        guard value("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")?.lowercased() != "true" else { return store }
        for name in ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"] {
            guard let endpoint = value(name) else { continue }
            let lowered = endpoint.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), !endpoint.contains("?") else {
                throw TesseraError.invalidArgument("\(name)=\(endpoint): not an http:// or https:// URL")
            }
            store.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            break
        }
        return store
    }

    /// The https URL of `object`: path style under a custom endpoint (`ENDPOINT/bucket/key`, what S3-compatible
    /// stores expect and the AWS CLI sends), virtual-hosted style on AWS (`https://bucket.s3.REGION.amazonaws.com/key`),
    /// or path style on AWS for a bucket with dots.
    public func url(of object: S3Location) -> String {
        if let endpoint { return "\(endpoint)/\(object.bucket)/\(object.escapedKey)" }
        if object.isVirtualHostable { return "https://\(object.bucket).s3.\(region).amazonaws.com/\(object.escapedKey)" }
        return "https://s3.\(region).amazonaws.com/\(object.bucket)/\(object.escapedKey)"
    }

    /// How requests to the store are signed, or nil when the environment has no credentials.
    public var signing: AWSSigning? {
        credentials.map { AWSSigning(credentials: $0, region: region, service: "s3") }
    }
}
