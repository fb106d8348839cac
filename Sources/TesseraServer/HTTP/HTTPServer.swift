import CMicroHTTPD
import CServerShims
import Foundation
import Synchronization
import Tessera

/// An HTTP request as the handler sees it: the method, the path exactly as sent (still percent-encoded), and
/// the headers the server uses.
public struct HTTPRequest: Sendable {
    public let method: String
    /// The path without the query, percent-encoding intact.
    public let path: String
    /// Header values by lower-case name (only those `HTTPServer.headerNames` lists).
    public let headers: [String: String]
    /// The query as sent, after the `?` (empty when there is none).
    public let query: String
    /// The idle-time thread of the server that received the request, for work that may start before its response
    /// is made (`IdleTimeThread.standBy`); nil for a request made otherwise.
    var idleTime: IdleTimeThread?

    /// A request for `path` (still percent-encoded) with `headers` by lower-case name and `query`.
    public init(method: String, path: String, headers: [String: String] = [:], query: String = "") {
        self.method = method
        self.path = path
        self.headers = headers
        self.query = query
    }

    /// The path and, when there is one, `?` and the query: the target as the client sent it.
    public var target: String { query.isEmpty ? path : path + "?" + query }
}

/// An HTTP response: status, headers in order, and the body bytes (left out for HEAD by libmicrohttpd).
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// A body produced while it is sent (chunked transfer encoding), used instead of `body` when set.
    public var stream: HTTPBodyStream?
    /// What the server's own log says beside the status, never sent: the error behind a failure in full, naming
    /// the files and URLs the server read, which the body a client gets leaves out.
    public var logNote: String?
    /// Work for what the client may ask next, which `HTTPServer` queues with the response, to run only in the
    /// machine's idle time (`IdleTimeThread`): it takes no core from the sending, nor from the client reading it
    /// and asking again, and yields its core often to the requests that come meanwhile. Callers that are not the server
    /// (`HTTPAnswer.response`) leave it undone.
    public var idleFollowUp: (@Sendable () -> Void)?
    /// Like `idleFollowUp`, for what the client asks for at once (an image's thumbnails after its info.json): run
    /// before the other idle-time work waiting, and at the next yield point of the job in progress, nested in it,
    /// rather than after it. It must not wait for a `SharedCache` value that other idle-time work may be making.
    public var preemptingIdleFollowUp: (@Sendable () -> Void)?

    /// A response with `status`, `headers` in order, and `body` sent whole.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is streamed as `stream` produces it.
    public init(status: Int, headers: [(String, String)] = [], stream: HTTPBodyStream) {
        self.init(status: status, headers: headers)
        self.stream = stream
    }

    /// A short plain-text response, for errors.
    public static func text(_ status: Int, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")],
                     body: Array((message + "\n").utf8))
    }
}

/// Whether a server has begun to drain (`HTTPServer.drain`): shared with what answers load balancers' checks.
public final class DrainState: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    /// True from the moment `drain` starts.
    public var isDraining: Bool { flag.load(ordering: .relaxed) }

    func begin() { flag.store(true, ordering: .relaxed) }
}

/// How many requests a server has in progress: their request line arrived, their response not all sent. Shared
/// with the site it serves, which does speculative work only while the server is quiet
/// (`IIIFService.Configuration.isQuiet`).
public final class RequestCount: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// The requests in progress now.
    public var inProgress: Int { count.load(ordering: .relaxed) }

    func started() { count.add(1, ordering: .relaxed) }

    func finished() { count.subtract(1, ordering: .relaxed) }
}

/// An HTTP/1.1 server on libmicrohttpd: a pool of polling threads, keep-alive, HEAD handled by the library.
/// Every request goes to one handler, called concurrently from the polling threads once the request is complete.
/// What it answers `.now` is sent at once; what it answers `.later` is made on a worker of the server's
/// `HandlerPool` while the connection is suspended (`SuspendedConnections`), and sent when it is ready: a slow
/// answer holds no polling thread, so the thread's other connections are served meanwhile and none of them
/// waits unread past libmicrohttpd's connection timeout. A streamed body's reader suspends its connection the
/// same way while the producer has nothing ready. `drain` stops it gracefully: no new connections, the requests
/// already there answered (the suspended ones too), then the threads stopped.
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPAnswer

    /// The request headers copied into `HTTPRequest.headers`.
    static let headerNames = ["host", "if-none-match", "if-modified-since", "accept", "origin", "x-forwarded-proto",
                              "x-forwarded-host", "x-forwarded-prefix"]

    private let handler: Handler
    private let daemon = Mutex<Daemon?>(nil)
    /// The workers that make `.later` answers.
    public let workers: HandlerPool
    /// The thread that runs responses' idle follow-ups.
    private let idleTime = IdleTimeThread(name: "tessera idle time")
    private let suspended = SuspendedConnections()
    /// Requests whose request line has arrived and that are not yet answered (or abandoned).
    private let requests: RequestCount
    /// Set by `drain`: every response then closes its connection, and health checks fail.
    public let drainState: DrainState
    /// Connections the polling threads have taken, and the threads that a connection set up
    /// (`connectionNotified`), for `prepareEveryPollingThread`.
    private let connectionsTaken = Atomic<Int>(0)
    private let threadsPrepared = Atomic<Int>(0)

    /// One request's state between libmicrohttpd's calls: its whole URI, and how far it has got.
    private final class RequestState: Sendable {
        enum Phase {
            /// The headers arrived; libmicrohttpd calls again once the body (if any) is read.
            case arrived
            /// The body is being skipped; the call with no more of it makes the answer.
            case reading
            /// A worker makes the response; the connection is suspended.
            case working
            /// The worker's response, queued when libmicrohttpd calls after the connection is resumed.
            case ready(HTTPResponse)
        }

        let uri: String
        let phase = Mutex(Phase.arrived)

        init(uri: String) { self.uri = uri }
    }

    /// libmicrohttpd's daemon handle; the library is thread-safe, and the handle is only used under the mutex.
    private struct Daemon: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// A server that answers every request with `handler`, called on the server's polling threads, its `.later`
    /// answers made on `workers` (closed when the server stops), reports its draining in `drainState` (which
    /// the site's health check reads) and counts its requests in progress in `requests` (which the site reads
    /// too); `start` listens.
    public init(drainState: DrainState = DrainState(), requests: RequestCount = RequestCount(), workers: HandlerPool,
                handler: @escaping Handler) {
        self.drainState = drainState
        self.requests = requests
        self.workers = workers
        self.handler = handler
    }

    deinit { stop() }

    /// Starts listening on `address:port` (port 0 picks a free one; see `port`) with `threads` polling threads,
    /// closing a connection silent for `connectionTimeout` seconds, holding at most `connectionLimit` open
    /// (`FileDescriptorLimit.connectionLimit`: more wait in the listen queue).
    public func start(address: String = "127.0.0.1", port: UInt16, threads: Int, connectionTimeout: Int,
                      connectionLimit: Int = FileDescriptorLimit.maxConnections) throws {
        if let failure = tessera_microhttpd_load() {
            throw TesseraError.missingLibrary(detail: String(cString: failure), purpose: "the server needs libmicrohttpd",
                                              package: "libmicrohttpd12")
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard let started = tessera_http_start(address, port, UInt32(max(1, threads)), UInt32(max(1, connectionTimeout)),
                                               UInt32(max(1, connectionLimit)),
                                               HTTPServer.callback, context, HTTPServer.requestStarted,
                                               HTTPServer.requestCompleted, HTTPServer.connectionNotified)
        else {
            throw TesseraServerError.cannotListen(address: address, port: Int(port))
        }
        daemon.withLock { $0 = Daemon(pointer: started) }
        prepareEveryPollingThread(address: address, port: Int(tessera_http_port(started)), threads: max(1, threads))
    }

    /// The longest `prepareEveryPollingThread` takes, in seconds, and the most connections it has open at once
    /// (fewer than the fewest a server may hold, `FileDescriptorLimit.minConnections`).
    static let preparingTime = 0.2, preparingConnections = 8

    /// Connects to the server itself, and closes, until each of its `threads` polling threads has taken a
    /// connection, for at most `preparingTime`: a round of connections at once (as many as there are threads, at
    /// most `preparingConnections`), each taken by whichever thread accepts it first, then the next. A thread's
    /// first connection sets it up for JPEG (`connectionNotified`), which took 100 us on this VM: before, a
    /// client's first request on a thread waited for it.
    private func prepareEveryPollingThread(address: String, port: Int, threads: Int) {
        let deadline = DispatchTime.now() + Self.preparingTime
        let target = address == "0.0.0.0" ? "127.0.0.1" : address
        while threadsPrepared.load(ordering: .relaxed) < threads, DispatchTime.now() < deadline {
            let taken = connectionsTaken.load(ordering: .acquiring)
            let connections = (0..<min(threads, Self.preparingConnections)).compactMap { _ in
                Self.connect(to: target, port: port)
            }
            if connections.isEmpty { return }
            // Closed once taken.
            while connectionsTaken.load(ordering: .acquiring) - taken < connections.count,
                  DispatchTime.now() < deadline {
                usleep(50)
            }
            connections.forEach { close($0) }
        }
    }

    /// The number of polling threads set up by a connection so far.
    var pollingThreadsPrepared: Int { threadsPrepared.load(ordering: .relaxed) }

    /// A TCP connection to `address` (IPv4) at `port`, or nil when none could be made within 100 ms (its sends
    /// time out after 100 ms too).
    static func connect(to address: String, port: Int) -> Int32? {
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = UInt16(port).bigEndian
        let connection = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard connection >= 0 else { return nil }
        // Linux bounds a blocking connect by the send timeout.
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = inet_pton(AF_INET, address, &target.sin_addr) == 1 && withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if !connected { close(connection) }
        return connected ? connection : nil
    }

    /// The port the server listens on, or nil when stopped.
    public var port: Int? {
        daemon.withLock { daemon in
            guard let daemon else { return nil }
            return Int(tessera_http_port(daemon.pointer))
        }
    }

    /// Stops gracefully: closes the listening socket at once (new connections are refused), answers the requests
    /// already there with `Connection: close` (those on workers too), and stops once none is left (or none has
    /// been in progress for a second, with only idle keep-alive connections open) or `grace` seconds have passed.
    /// Returns whether every request in progress was answered.
    @discardableResult
    public func drain(grace: Double) -> Bool {
        drainState.begin()
        daemon.withLock { daemon in
            guard let daemon else { return }
            let listening = MHD_quiesce_daemon(daemon.pointer)
            if listening >= 0 { close(listening) }
        }
        let deadline = DispatchTime.now() + grace
        var idleSince: DispatchTime?
        while DispatchTime.now() < deadline {
            let connections = daemon.withLock { $0.map { tessera_http_connections($0.pointer) } ?? 0 }
            if connections == 0 { break }
            if requests.inProgress == 0 {
                let since = idleSince ?? .now()
                idleSince = since
                if DispatchTime.now() >= since + 1 { break }
            } else {
                idleSince = nil
            }
            usleep(20_000)
        }
        let finished = requests.inProgress == 0
        stop()
        return finished
    }

    /// Queues `job` on the server's idle-time thread (`IdleTimeThread`), after the jobs waiting there: it runs only
    /// in the machine's idle time, from now on (listening or not), and is dropped when too many wait or the server
    /// has stopped. Returns whether it was queued.
    @discardableResult
    public func runInIdleTime(_ job: @escaping @Sendable () -> Void) -> Bool { idleTime.submit(job) }

    /// Stops accepting connections and stops the threads: the suspended connections are resumed first (and
    /// closed unanswered: a worker's response after this is dropped), the jobs still queued refused.
    public func stop() {
        daemon.withLock { daemon in
            suspended.resumeAll()
            if let running = daemon { MHD_stop_daemon(running.pointer) }
            daemon = nil
        }
        workers.close()
        idleTime.close()
    }

    private static let callback: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, uploadSize,
                                                               requestState in
        guard let context, let connection, let url, let method, let state = requestState?.pointee else { return .NO }
        let request = Unmanaged<RequestState>.fromOpaque(state).takeUnretainedValue()
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        // libmicrohttpd calls once when the headers arrive, then again once the body (if any) is read. A response
        // queued on the first call counts as an early reply and closes the connection, losing keep-alive, so the
        // first call only marks the request as seen, and any body is skipped.
        switch request.phase.withLock({ $0 }) {
        case .arrived:
            request.phase.withLock { $0 = .reading }
            return .YES
        case .reading:
            if let uploadSize, uploadSize.pointee > 0 {
                uploadSize.pointee = 0
                return .YES
            }
        case .working:
            // Called again while suspended only when the server stops: the connection is closed.
            return server.suspended.isStopping ? .NO : .YES
        case let .ready(response):
            return server.queue(response, on: connection)
        }
        var headers: [String: String] = [:]
        for name in headerNames {
            if let value = MHD_lookup_connection_value(connection, .HEADER_KIND, name) {
                headers[name] = String(cString: value)
            }
        }
        let query = request.uri.firstIndex(of: "?").map { String(request.uri[request.uri.index(after: $0)...]) } ?? ""
        var received = HTTPRequest(method: String(cString: method), path: String(cString: url), headers: headers,
                                   query: query)
        received.idleTime = server.idleTime
        switch server.handler(received) {
        case let .now(response):
            return server.queue(response, on: connection)
        case let .later(work, finish):
            return server.handOff(work: work, finish: finish, of: request, on: connection)
        }
    }

    /// Suspends `connection` and has a worker make its response with `work`, `finish`ed; the connection is
    /// resumed once it is ready (or refused: a 503), and libmicrohttpd's next call queues it.
    private func handOff(work: @escaping @Sendable () -> HTTPResponse,
                         finish: @escaping @Sendable (HTTPResponse) -> HTTPResponse,
                         of request: RequestState, on connection: OpaquePointer) -> MHD_Result {
        guard let ticket = suspended.suspend(connection) else {
            return queue(finish(.text(503, "the server is stopping")), on: connection)
        }
        request.phase.withLock { $0 = .working }
        let suspended = self.suspended
        let retryAfter = max(1, Int(workers.limits.maxWait.rounded(.up)))
        let answer: @Sendable (HTTPResponse) -> Void = { response in
            request.phase.withLock { $0 = .ready(response) }
            suspended.resume(ticket)
        }
        workers.submit({ answer(finish(work())) }, refuse: {
            var busy = HTTPResponse.text(503, "the server is busy: no worker came free in time; retry later")
            busy.headers.append(("Retry-After", "\(retryAfter)"))
            answer(finish(busy))
        })
        return .YES
    }

    /// Queues `response` on `connection`, with `Connection: close` while draining, and its idle follow-ups for the
    /// idle-time thread. Not when the request completes: libmicrohttpd reports a kept-alive request complete at
    /// the connection's next event, often the client's next request, and the follow-up started with it then (a
    /// new server's first thumbnail waited for the level that info.json's follow-up decodes, and a second image's
    /// thumbnails for the first's foreseen renders).
    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        var response = response
        if drainState.isDraining { response.headers.append(("Connection", "close")) }
        if let preempting = response.preemptingIdleFollowUp { idleTime.submit(preempting, preempting: true) }
        if let idleFollowUp = response.idleFollowUp { idleTime.submit(idleFollowUp) }
        if let stream = response.stream { return queue(response, streaming: stream, on: connection) }
        return response.body.withUnsafeBytes { body -> MHD_Result in
            guard let reply = MHD_create_response_from_buffer(body.count, UnsafeMutableRawPointer(mutating: body.baseAddress),
                                                               .RESPMEM_MUST_COPY) else { return .NO }
            defer { MHD_destroy_response(reply) }
            for (name, value) in response.headers { MHD_add_response_header(reply, name, value) }
            return MHD_queue_response(connection, UInt32(response.status), reply)
        }
    }
}

extension HTTPServer {
    /// libmicrohttpd's URI log callback: a request line has arrived; its state (the URI) goes with the request.
    private static let requestStarted: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?)
        -> UnsafeMutableRawPointer? = { context, uri, _ in
        let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
        server.requests.started()
        return Unmanaged.passRetained(RequestState(uri: uri.map { String(cString: $0) } ?? "")).toOpaque()
    }

    /// libmicrohttpd's completion callback: the request is answered or abandoned; its state is freed.
    private static let requestCompleted: MHD_RequestCompletedCallback = { context, _, state, _ in
        guard let context, let state, let request = state.pointee else { return }
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        Unmanaged<RequestState>.fromOpaque(request).release()
        state.pointee = nil
        server.requests.finished()
    }

    /// libmicrohttpd's connection callback, on the polling thread that will serve the connection: a thread's first
    /// connection has libjpeg-turbo set the thread up (`JPEGThreadSetup`) before its requests, which render on it.
    private static let connectionNotified: MHD_NotifyConnectionCallback = { context, _, _, event in
        guard event == .CONNECTION_NOTIFY_STARTED, let context else { return }
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        if JPEGThreadSetup.prepareCallingThread() { server.threadsPrepared.add(1, ordering: .relaxed) }
        server.connectionsTaken.add(1, ordering: .releasing)
    }

    /// A streamed body's reader: the stream, and what suspends its connection while the stream has nothing ready.
    private final class StreamReader {
        let stream: HTTPBodyStream
        let connection: OpaquePointer
        let suspended: SuspendedConnections

        init(stream: HTTPBodyStream, connection: OpaquePointer, suspended: SuspendedConnections) {
            self.stream = stream
            self.connection = connection
            self.suspended = suspended
        }

        /// libmicrohttpd's content reader result: a byte count (0 while suspended, waiting for the producer),
        /// MHD_CONTENT_READER_END_OF_STREAM (-1) or MHD_CONTENT_READER_END_WITH_ERROR (-2).
        func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
            let suspended = self.suspended, connection = connection
            let suspend = { () -> (@Sendable () -> Void)? in
                guard let ticket = suspended.suspend(connection) else { return nil }
                return { suspended.resume(ticket) }
            }
            switch stream.read(into: buffer, suspend: suspend) {
            case let .bytes(count): return count
            case .waiting: return 0
            case let .end(failed): return failed ? -2 : -1
            }
        }
    }

    /// Queues a response whose body libmicrohttpd pulls from `stream` as the socket accepts it; an unknown size
    /// makes it use chunked transfer encoding. The stream is retained until libmicrohttpd frees the response,
    /// which also happens when the client disconnects: then the producer is released with an error.
    private func queue(_ response: HTTPResponse, streaming stream: HTTPBodyStream,
                       on connection: OpaquePointer) -> MHD_Result {
        let reader = StreamReader(stream: stream, connection: connection, suspended: suspended)
        let context = Unmanaged.passRetained(reader).toOpaque()
        guard let reply = MHD_create_response_from_callback(UInt64.max, 64 * 1024, { context, _, buffer, size in
            let reader = Unmanaged<StreamReader>.fromOpaque(context!).takeUnretainedValue()
            return reader.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size))
        }, context, { context in
            Unmanaged<StreamReader>.fromOpaque(context!).takeRetainedValue().stream.cancel()
        }) else {
            Unmanaged<StreamReader>.fromOpaque(context).release()
            stream.cancel()
            return .NO
        }
        defer { MHD_destroy_response(reply) }
        for (name, value) in response.headers { MHD_add_response_header(reply, name, value) }
        return MHD_queue_response(connection, UInt32(response.status), reply)
    }
}

/// Failures of the server itself (not of a request).
public enum TesseraServerError: Error, CustomStringConvertible, Equatable {
    case cannotListen(address: String, port: Int)
    /// The viewer's folder is missing or lacks its `index.html`.
    case viewerNotFound(folder: String)

    public var description: String {
        switch self {
        case let .cannotListen(address, port): return "cannot listen on \(address):\(port) (in use, or not allowed)"
        case let .viewerNotFound(folder): return "\(folder): not the viewer's folder (no index.html in it)"
        }
    }
}
