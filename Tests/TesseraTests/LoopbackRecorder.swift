import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A listener on 127.0.0.1 (a free port) that records the head of each request it gets and answers each with an
/// empty 200, for tests of what the HTTP client sends. Every wait is bounded; `stop` closes the socket and joins
/// the thread it started.
final class LoopbackRecorder: @unchecked Sendable {
    /// One request as it arrived: the request line and the header fields in order (names as sent).
    struct Request {
        var method: String
        var target: String
        var headers: [(name: String, value: String)]

        /// Every value of the header `name` (any case), in order, without the spaces around it.
        func values(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name.lowercased() }
                .map { $0.value.trimmingCharacters(in: .whitespaces) }
        }
    }

    let port: Int
    private let socket: Int32
    private let lock = NSLock()
    private var received: [Request] = []
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private var stopping = false

    init() throws {
        let listener = try LoopbackListener(backlog: 8)
        socket = listener.descriptor
        port = listener.port
        let thread = Thread { [self] in serve() }
        self.thread = thread
        thread.start()
    }

    /// The requests received so far.
    var requests: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Stops listening and waits (at most 5 s) for the thread to end.
    func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
        shutdown(socket, Int32(SHUT_RDWR))
        _ = finished.wait(timeout: .now() + 5)
        close(socket)
    }

    private func serve() {
        defer { finished.signal() }
        while true {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 200)
            lock.lock()
            let done = stopping
            lock.unlock()
            if done { return }
            guard ready > 0 else { continue }
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else { continue }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if let head = readHead(connection), let request = Self.parse(head) {
                lock.lock()
                received.append(request)
                lock.unlock()
            }
            let answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            _ = answer.withCString { send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
    }

    private func readHead(_ connection: Int32) -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            bytes += chunk[..<count]
            if let text = String(bytes: bytes, encoding: .utf8), let end = text.range(of: "\r\n\r\n") {
                return String(text[..<end.lowerBound])
            }
        }
        return nil
    }

    private static func parse(_ head: String) -> Request? {
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]))
        }
        return Request(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers)
    }
}
