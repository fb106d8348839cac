import Synchronization
import Tessera

/// A web server scripted by the fuzzer's bytes, for the `remote-file` target: it holds a file (`content`) and
/// answers each request as the next script byte says: honestly (a 206 of the range asked for), or with the whole
/// file, another range, a body cut short or too long, another ETag, an error status or a 416; every `206` claims
/// the total `claimedTotal`, which may be a lie (beyond the file, up to `Int.max`). Bodies over a request's
/// `bodyLimit` throw as `HTTPClient` does.
final class FuzzServer: HTTPFetching {
    let content: [UInt8]
    let claimedTotal: Int
    private let script: Mutex<(bytes: [UInt8], next: Int)>

    init(content: [UInt8], claimedTotal: Int, script: [UInt8]) {
        self.content = content
        self.claimedTotal = claimedTotal
        self.script = Mutex((script, 0))
    }

    /// The next script byte (0 once the script is spent: honest answers from then on).
    private func nextByte() -> Int {
        script.withLock { script in
            defer { script.next += 1 }
            return script.next < script.bytes.count ? Int(script.bytes[script.next]) : 0
        }
    }

    func send(_ request: HTTPClient.Request) throws -> HTTPClient.Response {
        let choice = nextByte(), skew = nextByte()
        var headers = ["etag": "\"v1\""]
        func answer(_ status: Int, _ body: [UInt8]) throws -> HTTPClient.Response {
            if let limit = request.bodyLimit, body.count > limit {
                throw TesseraError.memoryLimit(path: request.url, needed: body.count, limit: limit, purpose: "the answer")
            }
            return HTTPClient.Response(status: status, reason: "", headers: headers, body: body)
        }
        /// A 206 of `content[range]` saying it starts at `start`.
        func partial(_ range: Range<Int>, start: Int) throws -> HTTPClient.Response {
            let clipped = range.clamped(to: 0..<content.count)
            headers["content-range"] = "bytes \(start)-\(start + max(0, range.count - 1))/\(claimedTotal)"
            return try answer(206, Array(content[clipped]))
        }
        guard request.method == .get, let range = request.range else { return try answer(200, content) }
        switch choice % 16 {
        case 0..<9: return try partial(range, start: range.lowerBound)
        case 9: return try answer(200, content)
        case 10: return try partial(range, start: range.lowerBound + skew - 128)
        case 11: return try partial(range.lowerBound..<max(range.lowerBound, range.upperBound - skew), start: range.lowerBound)
        case 12: return try partial(range.lowerBound..<range.upperBound + skew, start: range.lowerBound)
        case 13:
            headers["etag"] = "\"v\(skew)\""
            return try partial(range, start: range.lowerBound)
        case 14:
            headers["content-range"] = "bytes */\(skew % 4 == 0 ? 0 : claimedTotal)"
            return try answer(416, [])
        default: return try answer([404, 412, 500, 503][skew % 4], [])
        }
    }
}
