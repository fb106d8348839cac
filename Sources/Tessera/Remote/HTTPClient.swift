import CCurl
import CCurlShims
import Foundation

/// The one HTTP client of Tessera, over libcurl: TLS, HTTP/2 where the server offers it, keep-alive (each
/// pooled handle keeps its connections), redirects, the usual proxy variables (`https_proxy`, `no_proxy`),
/// timeouts, and retries with exponential back-off on timeouts, dropped connections, 429 and 5xx answers.
/// Thread-safe: each request takes a handle from the pool and gives it back.
public final class HTTPClient: HTTPFetching, @unchecked Sendable {
    /// Limits and identity of a client. Times are in seconds.
    public struct Configuration: Sendable {
        /// How long to wait for a connection.
        public var connectTimeout: Double = 10
        /// How long one attempt may take in all.
        public var requestTimeout: Double = 60
        /// Tries per request, the first included.
        public var attempts: Int = 4
        /// The wait before the first retry; each next one doubles it.
        public var firstBackoff: Double = 0.2
        /// After a request could not connect to its host (every try refused, or the name not resolved, or one try
        /// timed out connecting), how long later requests to the same scheme, host and port fail at once with the
        /// same words, untried, while one request a period tries the host again; 0 never.
        public var downFor: Double = 2
        /// The largest body accepted, in bytes: a longer answer is an error, not an allocation.
        public var bodyLimit: Int = 1 << 30
        public var userAgent = "tessera"

        public init() {}
    }

    /// The client every command shares, with the default configuration.
    public static let shared = HTTPClient()

    public let configuration: Configuration
    /// The hosts found down lately (`Configuration.downFor`).
    private let unreachable = UnreachableOrigins()
    private let lock = NSLock()
    private var idle: [UnsafeMutableRawPointer] = []

    /// libcurl, opened and initialized on the first request (CCurlShims), so commands without a URL never load it:
    /// nil once it is ready, else why it could not be loaded.
    private static let libraryFailure: TesseraError? = {
        if let failure = tessera_curl_load() {
            return .missingLibrary(detail: String(cString: failure), purpose: "remote inputs need libcurl",
                                   package: "libcurl4")
        }
        _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        return nil
    }()

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    deinit {
        for handle in idle { curl_easy_cleanup(handle) }
    }

    /// Sends `request`, retrying what is worth retrying, and returns the final answer whatever its status.
    /// Throws `TesseraError.http` naming the URL when no answer came (unreachable, timed out, reset), and
    /// `TesseraError.memoryLimit` when the body is over the request's or the client's limit.
    /// A connect timeout is not tried again: it has waited `Configuration.connectTimeout`, the system's own retries
    /// of the connection included. A host found down (refused, unresolved, timed out connecting) is not tried again
    /// for `Configuration.downFor`: its requests meanwhile fail at once with the words of the one that found it down.
    public func send(_ request: Request) throws -> Response {
        let origin = UnreachableOrigins.origin(of: request.url)
        if let origin, let detail = unreachable.failure(of: origin) {
            throw TesseraError.http(url: request.url, detail: detail + " (not tried again within"
                                    + " \(String(format: "%g", configuration.downFor)) s)")
        }
        var wait = configuration.firstBackoff
        for attempt in 1...max(1, configuration.attempts) {
            let last = attempt == max(1, configuration.attempts)
            do {
                let response = try perform(request)
                if let origin { unreachable.markUp(origin) }
                if last || !Self.retried(status: response.status) { return response }
            } catch let failure as TransferFailure {
                if last || !failure.retryable {
                    if failure.unreachable, configuration.downFor > 0, let origin {
                        unreachable.markDown(origin, detail: failure.message, for: configuration.downFor)
                    }
                    throw TesseraError.http(url: request.url, detail: failure.message)
                }
            }
            usleep(useconds_t(wait * 1_000_000))
            wait *= 2
        }
        preconditionFailure("the last attempt returns or throws")
    }

    /// Sends `request` and returns the answer if its status is 2xx; otherwise throws naming the URL and status.
    public func fetch(_ request: Request) throws -> Response {
        let response = try send(request)
        guard (200..<300).contains(response.status) else {
            throw TesseraError.http(url: request.url, detail: response.statusLine)
        }
        return response
    }

    /// The whole resource at `url` (2xx only).
    public func get(_ url: String) throws -> Response { try fetch(Request(url: url)) }

    private static func retried(status: Int) -> Bool { status == 429 || (500...599).contains(status) && status != 501 }

    /// A transfer that got no HTTP answer: libcurl's message, whether trying again may help, and whether the host
    /// could not be reached at all (refused, its name not resolved, or no connection within the connect timeout).
    private struct TransferFailure: Error {
        var message: String
        var retryable: Bool
        var unreachable = false
    }

    private func perform(_ request: Request) throws -> Response {
        if let failure = Self.libraryFailure { throw failure }
        guard let handle = takeHandle() else {
            throw TransferFailure(message: "libcurl could not make a handle", retryable: false)
        }
        defer { giveBack(handle) }
        let limit = min(request.bodyLimit ?? configuration.bodyLimit, configuration.bodyLimit)
        let transfer = Transfer(bodyLimit: limit)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let code: CURLcode = withExtendedLifetime(transfer) {
            errorBuffer.withUnsafeMutableBufferPointer { buffer in
                configure(handle, for: request, transfer: transfer, headers: &headerList, errors: buffer.baseAddress)
                return curl_easy_perform(handle)
            }
        }
        guard code == CURLE_OK else {
            if code == CURLE_WRITE_ERROR && transfer.overLimit {
                let needed = transfer.headers["content-length"].flatMap { Int($0) } ?? limit + 1
                throw TesseraError.memoryLimit(path: request.url, needed: needed, limit: limit, purpose: "the answer")
            }
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            // No connection made and no request begun (a kept-alive connection that timed out later began one).
            var connected: curl_off_t = 0, began: curl_off_t = 0
            _ = tessera_curl_info_off_t(handle, CURLINFO_CONNECT_TIME_T, &connected)
            _ = tessera_curl_info_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &began)
            let connectTimedOut = code == CURLE_OPERATION_TIMEDOUT && connected == 0 && began == 0
            throw TransferFailure(message: message.lowercased(), retryable: Self.retryable(code) && !connectTimedOut,
                                  unreachable: connectTimedOut
                                      || [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST,
                                          CURLE_COULDNT_RESOLVE_PROXY].contains(code))
        }
        var status = 0
        _ = tessera_curl_info_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, reason: transfer.reason, headers: transfer.headers, body: transfer.body)
    }

    private static func retryable(_ code: CURLcode) -> Bool {
        [CURLE_OPERATION_TIMEDOUT, CURLE_COULDNT_CONNECT, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR,
         CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM].contains(code)
    }

    private func configure(_ handle: UnsafeMutableRawPointer, for request: Request, transfer: Transfer,
                           headers: inout UnsafeMutablePointer<curl_slist>?, errors: UnsafeMutablePointer<CChar>?) {
        let signing = AWSSigning.isPresigned(request.url) ? nil : request.signing
        _ = tessera_curl_set_string(handle, CURLOPT_URL,
                                    signing == nil ? request.url : AWSSigning.canonicalQueryOrder(request.url))
        _ = tessera_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = tessera_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 1)
        _ = tessera_curl_set_long(handle, CURLOPT_MAXREDIRS, 5)
        _ = tessera_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout * 1000))
        _ = tessera_curl_set_long(handle, CURLOPT_TIMEOUT_MS, Int(configuration.requestTimeout * 1000))
        _ = tessera_curl_set_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        _ = tessera_curl_set_string(handle, CURLOPT_USERAGENT, configuration.userAgent)
        _ = tessera_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errors)
        if request.method == .head { _ = tessera_curl_set_long(handle, CURLOPT_NOBODY, 1) }
        if let range = request.range {
            _ = tessera_curl_set_string(handle, CURLOPT_RANGE, "\(range.lowerBound)-\(range.upperBound - 1)")
        }
        var fields = request.headers
        if let signing {
            _ = tessera_curl_set_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(signing.region):\(signing.service)")
            _ = tessera_curl_set_string(handle, CURLOPT_USERNAME, signing.credentials.accessKey)
            _ = tessera_curl_set_string(handle, CURLOPT_PASSWORD, signing.credentials.secretKey)
            fields += signing.extraHeaders(beside: fields)
        }
        for field in fields { headers = curl_slist_append(headers, "\(field.name): \(field.value)") }
        if let headers { _ = tessera_curl_set_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)) }
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = tessera_curl_set_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.body(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        _ = tessera_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = tessera_curl_set_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            return transfer.header(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        _ = tessera_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
    }

    private func takeHandle() -> UnsafeMutableRawPointer? {
        lock.lock()
        let pooled = idle.popLast()
        lock.unlock()
        if let pooled {
            curl_easy_reset(pooled)
            return pooled
        }
        return curl_easy_init()
    }

    private func giveBack(_ handle: UnsafeMutableRawPointer) {
        lock.lock()
        idle.append(handle)
        lock.unlock()
    }
}

/// What one transfer has received so far; libcurl's callbacks write into it.
private final class Transfer {
    let bodyLimit: Int
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    var reason = ""
    var overLimit = false

    init(bodyLimit: Int) { self.bodyLimit = bodyLimit }

    func body(_ chunk: UnsafeRawBufferPointer) -> Int {
        guard body.count + chunk.count <= bodyLimit else {
            overLimit = true
            return 0
        }
        body.append(contentsOf: chunk)
        return chunk.count
    }

    /// One header line; a status line starts a new set (a redirect's or an interim answer's headers are dropped).
    func header(_ line: UnsafeRawBufferPointer) -> Int {
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("HTTP/") {
            headers = [:]
            reason = text.split(separator: " ", maxSplits: 2).dropFirst(2).first.map(String.init) ?? ""
        } else if let colon = text.firstIndex(of: ":") {
            let name = text[..<colon].lowercased()
            headers[name] = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return line.count
    }
}

extension HTTPClient {
    /// One request to a web server: a GET or HEAD of `url`, optionally of one byte range, with extra headers.
    public struct Request: Sendable {
        /// The two methods Tessera reads with.
        public enum Method: String, Sendable { case get = "GET", head = "HEAD" }

        public var url: String
        public var method: Method
        /// The bytes asked for (`Range: bytes=lower-(upper-1)`), or nil for the whole resource.
        public var range: Range<Int>?
        /// Extra request headers, in order, as `name: value` pairs (e.g. `If-Match`).
        public var headers: [Header]
        /// How the request is signed (by libcurl), or nil to send it unsigned. A URL that carries its own signature
        /// (presigned: `X-Amz-Signature` in its query) is never signed again.
        public var signing: AWSSigning?
        /// The largest body accepted for this request, in bytes, when smaller than the client's own limit.
        public var bodyLimit: Int?

        public init(url: String, method: Method = .get, range: Range<Int>? = nil, headers: [Header] = [],
                    signing: AWSSigning? = nil, bodyLimit: Int? = nil) {
            self.url = url
            self.method = method
            self.range = range
            self.headers = headers
            self.signing = signing
            self.bodyLimit = bodyLimit
        }
    }

    /// A header field of a request.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What a server answered: the final status (after redirects), its reason phrase, the headers (names
    /// lowercased, the last value of a repeated one) and the body.
    public struct Response: Sendable {
        public var status: Int
        public var reason: String
        public var headers: [String: String]
        public var body: [UInt8]

        /// An answer of `status`, for an `HTTPFetching` other than `HTTPClient` (a test's, the fuzzer's); `headers`'
        /// names lowercased.
        public init(status: Int, reason: String, headers: [String: String], body: [UInt8]) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
        }

        /// The value of the header `name` (any case), if the server sent it.
        public func header(_ name: String) -> String? { headers[name.lowercased()] }

        /// `404 Not Found`: how error messages name the status.
        public var statusLine: String { reason.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(reason)" }
    }
}
