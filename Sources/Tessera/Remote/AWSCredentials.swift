/// An AWS access key pair, and a temporary credential's session token: what signs requests to a private bucket.
public struct AWSCredentials: Sendable, Equatable {
    public var accessKey: String
    public var secretKey: String
    /// A temporary credential's session token, sent as `X-Amz-Security-Token`.
    public var sessionToken: String?

    public init(accessKey: String, secretKey: String, sessionToken: String? = nil) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
    }

    /// The credentials the AWS CLI's environment variables give (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_SESSION_TOKEN`; an empty variable counts as unset), or nil when there are none: requests then go
    /// unsigned, which public buckets accept. One key without the other is an error, as it is for the AWS CLI.
    public static func fromEnvironment(_ environment: [String: String]) throws -> AWSCredentials? {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch (value("AWS_ACCESS_KEY_ID"), value("AWS_SECRET_ACCESS_KEY")) {
        case (nil, nil):
            return nil
        case let (access?, secret?):
            return AWSCredentials(accessKey: access, secretKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        case (_?, nil):
            throw TesseraError.invalidArgument("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
        case (nil, _?):
            throw TesseraError.invalidArgument("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not")
        }
    }
}
