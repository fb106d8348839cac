import Foundation

/// A minimal HTTP/1.1 client for plain `http://` URLs over a socket, enough to fetch a IIIF server's info.json
/// and tiles. Foundation's URLSession needs libcurl, which does not link into the statically linked CLI.
///
/// One request per connection (`Connection: close`); bodies by Content-Length, chunked, or up to the close.
enum HTTPClient {
    /// A response: its status code and body.
    struct Response {
        var status: Int
        var body: [UInt8]
    }

    /// The parts of an `http://host[:port]/path` URL.
    struct Address: Hashable {
        var host: String
        var port: Int
        var path: String

        /// Splits `url`; throws for other schemes and malformed URLs.
        init(_ url: String) throws {
            guard url.hasPrefix("http://") else {
                throw ViewerError.http(url: url, detail: "only http:// URLs are supported")
            }
            let rest = url.dropFirst("http://".count)
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            let authority = rest[..<slash]
            path = slash == rest.endIndex ? "/" : String(rest[slash...])
            if let colon = authority.lastIndex(of: ":") {
                guard let number = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(number) else {
                    throw ViewerError.http(url: url, detail: "bad port")
                }
                host = String(authority[..<colon])
                port = number
            } else {
                host = String(authority)
                port = 80
            }
            guard !host.isEmpty else { throw ViewerError.http(url: url, detail: "no host") }
        }
    }

    /// Fetches `url` with GET; throws when the server cannot be reached or the answer is not HTTP.
    static func get(_ url: String, timeoutSeconds: Int = 30) throws -> Response {
        let address = try Address(url)
        let socket = try connect(address, url: url, timeoutSeconds: timeoutSeconds)
        defer { close(socket) }
        let request = "GET \(address.path) HTTP/1.1\r\nHost: \(address.host):\(address.port)\r\n"
            + "User-Agent: tessera-view\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw ViewerError.http(url: url, detail: "sending the request failed") }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else { throw ViewerError.http(url: url, detail: "no answer (timed out or reset)") }
            received += buffer[..<count]
        }
        return try parse(received, url: url)
    }

    /// Splits a whole response into status and body.
    static func parse(_ response: [UInt8], url: String) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headerEnd = response.firstRange(of: separator),
            let head = String(bytes: response[..<headerEnd.lowerBound], encoding: .utf8)
        else { throw ViewerError.http(url: url, detail: "not an HTTP response") }
        let lines = head.components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
            throw ViewerError.http(url: url, detail: "bad status line '\(lines[0])'")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(response[headerEnd.upperBound...])
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            body = try dechunk(body, url: url)
        } else if let length = headers["content-length"].flatMap(Int.init) {
            guard body.count >= length else {
                throw ViewerError.http(url: url, detail: "body cut short at \(body.count) of \(length) bytes")
            }
            body = Array(body.prefix(length))
        }
        return Response(status: status, body: body)
    }

    /// The body of a chunked transfer: hexadecimal sizes, each followed by that many bytes, until a size 0.
    private static func dechunk(_ data: [UInt8], url: String) throws -> [UInt8] {
        var body: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = data[index...].firstRange(of: [13, 10]),
                let sizeText = String(bytes: data[index..<lineEnd.lowerBound], encoding: .utf8),
                let size = Int(sizeText.split(separator: ";")[0].trimmingCharacters(in: .whitespaces), radix: 16)
            else { throw ViewerError.http(url: url, detail: "bad chunked body") }
            if size == 0 { return body }
            let start = lineEnd.upperBound
            guard start + size <= data.count else { throw ViewerError.http(url: url, detail: "chunked body cut short") }
            body += data[start..<start + size]
            index = start + size + 2
        }
    }

    private static func connect(_ address: Address, url: String, timeoutSeconds: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(address.host, String(address.port), &hints, &list) == 0, let first = list else {
            throw ViewerError.http(url: url, detail: "cannot resolve host \(address.host)")
        }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let socket = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if socket >= 0 {
                var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(socket, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return socket }
                close(socket)
            }
            entry = info.pointee.ai_next
        }
        throw ViewerError.http(url: url, detail: "cannot connect to \(address.host):\(address.port)")
    }
}
