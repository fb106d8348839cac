import Foundation
import Testing
@testable import Tessera

/// s3:// URLs and the AWS environment variables, and the requests libcurl signs for them, checked against AWS's
/// published Signature Version 4 test vectors (`Tests/peers/data/sigv4-vectors.json`) through a loopback listener.
@Suite struct S3SigningTests {
    private struct Vectors: Decodable {
        struct Scope: Decodable {
            var credentials: [String: String]
            var region: String
            var service: String
            var host: String
            var date: String
        }
        struct Vector: Decodable {
            var name: String
            var scope: String
            var target: String
            var headers: [[String]]
            var sessionToken: String?
            var canonicalRequest: String
            var authorization: String
        }
        var suite: Scope
        var s3: Scope
        var vectors: [Vector]
    }

    private static let vectors: Vectors = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("peers/data/sigv4-vectors.json")
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.attempts = 1
        configuration.connectTimeout = 5
        configuration.requestTimeout = 10
        return HTTPClient(configuration: configuration)
    }()

    /// Sends `request` to a fresh listener (its URL's `PORT` replaced by the listener's) and returns what arrived.
    private func recorded(_ request: HTTPClient.Request) throws -> LoopbackRecorder.Request {
        let listener = try LoopbackRecorder()
        defer { listener.stop() }
        var request = request
        request.url = request.url.replacingOccurrences(of: "PORT", with: "\(listener.port)")
        let response = try Self.client.send(request)
        #expect(response.status == 200)
        return try #require(listener.requests.first)
    }

    /// The canonical request of what arrived, built from the headers its Authorization names, each value trimmed
    /// with its runs of spaces made one, repeated equal values once (libcurl 7.88 sends a given X-Amz-Date twice:
    /// its own copy beside the caller's).
    private func canonicalRequest(of request: LoopbackRecorder.Request) -> String {
        let authorization = request.values("Authorization").first ?? ""
        let signed = authorization.components(separatedBy: "SignedHeaders=").last?
            .components(separatedBy: ",").first ?? ""
        let path = request.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let lines = signed.split(separator: ";").map { name -> String in
            var values: [String] = []
            for value in request.values(String(name)) {
                let tidy = value.split(separator: " ").joined(separator: " ")
                if !values.contains(tidy) { values.append(tidy) }
            }
            return "\(name):\(values.joined(separator: ","))"
        }
        let payload = request.values("x-amz-content-sha256").first ?? AWSSigning.emptyPayloadHash
        return ([request.method, String(path[0]), path.count > 1 ? String(path[1]) : ""] + lines
                + ["", signed, payload]).joined(separator: "\n")
    }

    @Test(arguments: vectors.vectors.map(\.name))
    func libcurlSignsAsTheVectorSays(_ name: String) throws {
        let vector = try #require(Self.vectors.vectors.first { $0.name == name })
        let scope = vector.scope == "s3" ? Self.vectors.s3 : Self.vectors.suite
        let credentials = AWSCredentials(accessKey: scope.credentials["accessKey"]!,
                                         secretKey: scope.credentials["secretKey"]!, sessionToken: vector.sessionToken)
        // The vector's host is signed from the Host header given; the fixed date from the X-Amz-Date given, which
        // libcurl uses instead of its clock. The S3 vector's Range is a header here, so that it is signed as there.
        let headers = [HTTPClient.Header("Host", scope.host), HTTPClient.Header("X-Amz-Date", scope.date)]
            + vector.headers.map { HTTPClient.Header($0[0], $0[1]) }
        let request = try recorded(HTTPClient.Request(
            url: "http://127.0.0.1:PORT\(vector.target)", headers: headers,
            signing: AWSSigning(credentials: credentials, region: scope.region, service: scope.service)))
        #expect(request.values("Authorization") == [vector.authorization])
        #expect(canonicalRequest(of: request) == vector.canonicalRequest)
    }

    @Test func anS3ObjectIsRequestedSignedWithItsContentHashFromTheEnvironmentsCredentials() throws {
        let listener = try LoopbackRecorder()
        defer { listener.stop() }
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
                           "AWS_SESSION_TOKEN": "token", "AWS_REGION": "eu-west-3",
                           "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(listener.port)/"]
        let remote = try RemoteURL.resolve("s3://scans/maps/sheet 1.tif", environment: environment)
        #expect(remote.url == "http://127.0.0.1:\(listener.port)/scans/maps/sheet%201.tif")
        #expect(try Self.client.send(remote.request(range: 0..<16)).status == 200)
        let request = try #require(listener.requests.first)
        #expect(request.target == "/scans/maps/sheet%201.tif")
        #expect(request.values("Range") == ["bytes=0-15"])
        #expect(request.values("x-amz-content-sha256")
                == [AWSSigning.emptyPayloadHash])
        #expect(request.values("X-Amz-Security-Token") == ["token"])
        let authorization = try #require(request.values("Authorization").first)
        #expect(authorization.contains("Credential=AKIDEXAMPLE/"))
        #expect(authorization.contains("/eu-west-3/s3/aws4_request"))
        #expect(authorization.contains("x-amz-content-sha256"))
    }

    @Test func publicAndPresignedURLsAreSentUnsigned() throws {
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"]
        let url = "https://scans.s3.us-east-1.amazonaws.com/map.tif"
        #expect(try RemoteURL.resolve(url, environment: environment) == RemoteURL(url: url))
        let presigned = "http://127.0.0.1:PORT/map.tif?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=A%2F1"
            + "&X-Amz-Signature=abc"
        let signing = AWSSigning(credentials: AWSCredentials(accessKey: "AKIDEXAMPLE", secretKey: "secret"),
                                 region: "us-east-1")
        let request = try recorded(HTTPClient.Request(url: presigned, signing: signing))
        #expect(request.values("Authorization").isEmpty)
        #expect(request.values("x-amz-content-sha256").isEmpty)
        #expect(request.target.hasSuffix("X-Amz-Credential=A%2F1&X-Amz-Signature=abc"), "the query as it was")
    }

    @Test func s3URLsAreAddressedAsTheAWSCLIAddressesThem() throws {
        let object = try S3Location(url: "s3://scans/maps/a+b ü.tif")
        #expect(object == S3Location(bucket: "scans", key: "maps/a+b ü.tif"))
        #expect(S3Store(region: "eu-west-3").url(of: object)
                == "https://scans.s3.eu-west-3.amazonaws.com/maps/a%2Bb%20%C3%BC.tif")
        #expect(S3Store().url(of: S3Location(bucket: "my.scans", key: "a.tif"))
                == "https://s3.us-east-1.amazonaws.com/my.scans/a.tif", "a dotted bucket goes path style")
        #expect(S3Store(endpoint: "https://store.example:9000").url(of: object)
                == "https://store.example:9000/scans/maps/a%2Bb%20%C3%BC.tif", "a custom endpoint goes path style")
        #expect(try RemoteURL.resolve("s3://scans/a.tif", environment: [:])
                == RemoteURL(url: "https://scans.s3.us-east-1.amazonaws.com/a.tif"), "no credentials: unsigned")
    }

    @Test func theEnvironmentIsReadAsTheAWSCLIReadsIt() throws {
        #expect(try S3Store.fromEnvironment([:]) == S3Store())
        let store = try S3Store.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
            "AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "eu-west-1",
            "AWS_ENDPOINT_URL": "http://general:1", "AWS_ENDPOINT_URL_S3": "http://s3only:2/"])
        #expect(store == S3Store(credentials: AWSCredentials(accessKey: "key", secretKey: "secret"),
                                 region: "ap-south-1", endpoint: "http://s3only:2"))
        #expect(store.signing == AWSSigning(credentials: store.credentials!, region: "ap-south-1", service: "s3"))
        #expect(try S3Store.fromEnvironment(["AWS_DEFAULT_REGION": "eu-west-1"]).region == "eu-west-1")
        #expect(try S3Store.fromEnvironment(["AWS_ENDPOINT_URL": "http://general:1"]).endpoint == "http://general:1")
        #expect(try S3Store.fromEnvironment(["AWS_ENDPOINT_URL": "http://general:1",
                                             "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"]).endpoint == nil)
    }

    @Test func badS3URLsAndEnvironmentsAreErrorsNamingThem() {
        let cases: [(String, [String: String], String)] = [
            ("s3://scans", [:], "s3://scans: no object key (write s3://BUCKET/KEY)"),
            ("s3://scans/", [:], "s3://scans/: no object key (write s3://BUCKET/KEY)"),
            ("s3://Scans/a.tif", [:], "s3://Scans/a.tif: \"Scans\" is not a bucket name"),
            ("s3://scans/a.tif", ["AWS_ACCESS_KEY_ID": "key"],
             "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"),
            ("s3://scans/a.tif", ["AWS_ENDPOINT_URL_S3": "store:9000"],
             "AWS_ENDPOINT_URL_S3=store:9000: not an http:// or https:// URL"),
        ]
        for (url, environment, message) in cases {
            #expect {
                try RemoteURL.resolve(url, environment: environment)
            } throws: { error in
                (error as? TesseraError)?.description.hasPrefix(message) == true
            }
        }
        #expect(RemoteURL.isRemote("S3://scans/a.tif") && RemoteURL.isRemote("https://host/a.tif"))
        #expect(!RemoteURL.isRemote("scans/a.tif"))
    }
}
