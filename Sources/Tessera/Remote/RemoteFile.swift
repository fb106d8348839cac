import Foundation

/// A file on a web server, read by byte ranges: opened with one request that learns its size, its version (ETag,
/// else Last-Modified) and whether the server serves ranges; then read through a `BlockCache` of fixed-size
/// blocks, concurrent reads of a block fetched once, adjacent missing blocks fetched by one range request, with
/// read-ahead for sequential readers (`ReadCursor`). Every range carries the version (`If-Match`, `If-Range`),
/// so a file replaced while it is read fails with "changed while being read" and never mixes two versions; the
/// next open starts fresh. A server without ranges gives the whole file once, within the memory budget.
public final class RemoteFile: @unchecked Sendable {
    /// How one version of the file is told from another: its strong ETag, else its Last-Modified date.
    public enum Version: Sendable, Equatable, CustomStringConvertible {
        case etag(String)
        case lastModified(String)
        /// The server sent neither: the file cannot be validated, and its blocks are never shared between opens.
        case unknown

        /// The version a response names, if any (weak ETags cannot validate ranges, so they are passed over).
        init(_ response: HTTPClient.Response) {
            if let tag = response.header("etag"), !tag.hasPrefix("W/") {
                self = .etag(tag)
            } else if let date = response.header("last-modified") {
                self = .lastModified(date)
            } else {
                self = .unknown
            }
        }

        public var description: String {
            switch self {
            case let .etag(tag): return "ETag \(tag)"
            case let .lastModified(date): return "Last-Modified \(date)"
            case .unknown: return "no ETag or Last-Modified"
            }
        }

        /// The conditions every range request carries: the server answers 412 (or the whole file) for another version.
        var conditions: [HTTPClient.Header] {
            switch self {
            case let .etag(tag): return [HTTPClient.Header("If-Match", tag), HTTPClient.Header("If-Range", tag)]
            case let .lastModified(date):
                return [HTTPClient.Header("If-Unmodified-Since", date), HTTPClient.Header("If-Range", date)]
            case .unknown: return []
            }
        }

        /// Whether `other`, the version an answer names, is another version than this one.
        func differs(from other: Version) -> Bool {
            switch (self, other) {
            case let (.etag(mine), .etag(theirs)): return mine != theirs
            case let (.lastModified(mine), .lastModified(theirs)): return mine != theirs
            default: return false
            }
        }
    }

    /// Requests sent and body bytes received by one file: what benchmarks and tests count.
    public struct Traffic: Sendable, Equatable {
        public var requests = 0
        public var bytes = 0
    }

    /// The URL, as error messages name it.
    public let url: String
    /// The file's size in bytes.
    public let byteCount: Int
    /// The version recorded at open.
    public let version: Version
    /// Whether the server answered the first range with 206; otherwise the whole file is held in memory.
    public let servesRanges: Bool
    /// The size in bytes of the blocks it is read and cached by.
    public let blockSize: Int

    /// The default block: a few tiles of a pyramidal TIFF, a small part of a stream.
    public static let defaultBlockSize = 64 << 10
    /// The most bytes one range request asks for.
    static let largestRequest = 8 << 20
    /// The largest file a server may claim, in bytes (4 EiB): more is a lie that would overflow the block arithmetic.
    static let largestFile = 1 << 62

    /// Where the requests go and how they are signed (`url` resolved: an `s3://` object's store URL).
    private let address: RemoteURL
    private let fetcher: any HTTPFetching
    private let cache: BlockCache
    /// How the cache names this version of this file, its size and its block size.
    private let cacheName: String
    /// The whole file, from a server without ranges.
    private let whole: [UInt8]?
    private let state = NSCondition()
    private var inFlight: Set<Int> = []
    private var changed: TesseraError?
    private var lastFailure: TesseraError?
    private var counted = Traffic()

    /// Opens `url` (`http://`, `https://`, or `s3://bucket/key`, signed when the environment has credentials) with
    /// one ranged GET of its first block; a server answering with the whole file (no ranges)
    /// has it checked against `budget`. Throws naming the URL and the status for any other answer.
    public init(url: String, fetcher: any HTTPFetching = HTTPClient.shared, cache: BlockCache = .shared,
                blockSize: Int = RemoteFile.defaultBlockSize, budget: MemoryBudget = .default) throws {
        self.url = url
        address = try RemoteURL.resolve(url)
        self.fetcher = fetcher
        self.cache = cache
        self.blockSize = max(1, blockSize)
        let response: HTTPClient.Response
        do {
            response = try fetcher.send(address.request(range: 0..<self.blockSize, bodyLimit: budget.limit))
        } catch let TesseraError.memoryLimit(_, needed, limit, _) {
            throw TesseraError.memoryLimit(path: url, needed: needed, limit: limit,
                                           purpose: "the whole file (the server does not serve byte ranges)")
        }
        counted = Traffic(requests: 1, bytes: response.body.count)
        version = Version(response)
        switch response.status {
        case 206:
            guard let served = ContentRange(response.header("content-range")), served.start == 0,
                  served.total > 0, response.body.count == min(self.blockSize, served.total) else {
                throw TesseraError.http(url: url, detail: "the server's Content-Range does not match the bytes asked for")
            }
            guard served.total <= Self.largestFile else {
                throw TesseraError.http(url: url, detail: "the server claims a file of \(served.total.grouped) bytes")
            }
            byteCount = served.total
            servesRanges = true
            whole = nil
        case 200:
            byteCount = response.body.count
            servesRanges = false
            whole = response.body
        case 416 where ContentRange(response.header("content-range"))?.total == 0:
            byteCount = 0
            servesRanges = true
            whole = []
        default:
            throw TesseraError.http(url: url, detail: response.statusLine)
        }
        cacheName = (version == .unknown ? url + "\n" + UUID().uuidString : url + "\n" + version.description)
            + "\n\(byteCount) bytes in blocks of \(self.blockSize)"
        if servesRanges, byteCount > 0 { store(block: 0, response.body) }
    }

    /// The file at `url`, or nil when the server says there is none (404 or 410): for tile trees, where a tile
    /// left out reads as blank.
    public static func existing(url: String, budget: MemoryBudget = .default) throws -> RemoteFile? {
        do {
            return try RemoteFile(url: url, budget: budget)
        } catch let error as TesseraError where isMissing(error) {
            return nil
        }
    }

    /// Whether `error` is a server saying a URL names nothing (404 Not Found or 410 Gone).
    public static func isMissing(_ error: TesseraError) -> Bool {
        guard case let .http(_, detail) = error else { return false }
        return detail.hasPrefix("HTTP 404") || detail.hasPrefix("HTTP 410")
    }

    /// `location` without its last path component (the folder of a file, the base of a URL), and that component.
    public static func split(_ location: String) -> (parent: String, name: String) {
        guard let slash = location.lastIndex(of: "/") else { return (".", location) }
        let parent = String(location[..<slash])
        return (parent.isEmpty ? "/" : parent, String(location[location.index(after: slash)...]))
    }

    /// The requests and bytes this file has fetched so far, its open included.
    public var traffic: Traffic { state.withLock { counted } }

    /// Whether the file was found replaced while it was read: this open reads nothing more, a new one must be made.
    public var hasChanged: Bool { state.withLock { changed != nil } }

    /// The last failure of a read: what a codec that saw only "no more data" reports instead.
    public var failure: TesseraError? { state.withLock { changed ?? lastFailure } }

    /// Up to `count` bytes at `offset` (fewer at the end of the file), in an array of that size made before they
    /// arrive: the caller bounds `count` (a header's prefix, a stored tile's byte count, a whole file checked against
    /// its budget), as the file's size is what its server claims.
    public func read(at offset: Int, count: Int, readAhead: Int = 0) throws -> [UInt8] {
        guard offset >= 0, offset < byteCount else { return [] }
        let wanted = max(0, min(count, byteCount - offset))
        var bytes = [UInt8](repeating: 0, count: wanted)
        let got = try bytes.withUnsafeMutableBytes { try read(into: $0, at: offset, readAhead: readAhead) }
        bytes.removeLast(wanted - got)
        return bytes
    }

    /// Fills `buffer` from `offset`; returns how many bytes were read (fewer only at the end of the file).
    /// `readAhead` more bytes are fetched in the same request when a block has to be fetched anyway.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, readAhead: Int = 0) throws -> Int {
        guard offset >= 0, offset < byteCount, buffer.count > 0 else { return 0 }
        let end = min(byteCount, offset + buffer.count)
        if let whole {
            whole.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: end - offset) }
            return end - offset
        }
        let needed = (offset / blockSize)...((end - 1) / blockSize)
        let lastBlock = (byteCount - 1) / blockSize
        let ahead = min(lastBlock, needed.upperBound + (max(0, readAhead) + blockSize - 1) / blockSize)
        var have: [Int: [UInt8]] = [:]
        do {
            while true {
                let claimed = try claim(needed, aheadTo: ahead, have: &have)
                if !claimed.isEmpty { try fetch(claimed, into: &have) }
                if needed.allSatisfy({ have[$0] != nil }) { break }
                try wait(for: needed, have: &have)
            }
        } catch let error as TesseraError {
            state.withLock { lastFailure = error }
            throw error
        }
        for index in needed {
            let block = have[index]!, blockStart = index * blockSize
            let from = max(offset, blockStart), to = min(end, blockStart + block.count)
            block.withUnsafeBytes {
                (buffer.baseAddress! + (from - offset)).copyMemory(from: $0.baseAddress! + (from - blockStart),
                                                                   byteCount: to - from)
            }
        }
        return end - offset
    }

    // MARK: - Blocks

    private func key(_ index: Int) -> BlockCache.Key {
        BlockCache.Key(file: cacheName, index: index, isVersioned: version != .unknown)
    }

    private func store(block index: Int, _ bytes: [UInt8]) { cache.store(key(index), bytes) }

    /// Takes what the cache has into `have` and claims the blocks nobody is fetching (and, when fetching anyway,
    /// the read-ahead blocks after them up to `aheadTo`), marking them in flight.
    private func claim(_ needed: ClosedRange<Int>, aheadTo ahead: Int, have: inout [Int: [UInt8]]) throws -> [Int] {
        state.lock()
        defer { state.unlock() }
        if let changed { throw changed }
        var claimed: [Int] = []
        for index in needed where have[index] == nil {
            if let bytes = cache.block(key(index)) {
                have[index] = bytes
            } else if !inFlight.contains(index) {
                claimed.append(index)
            }
        }
        if claimed.last == needed.upperBound, ahead > needed.upperBound {
            for index in (needed.upperBound + 1)...ahead {
                guard !inFlight.contains(index), !cache.contains(key(index)) else { break }
                claimed.append(index)
            }
        }
        inFlight.formUnion(claimed)
        return claimed
    }

    /// Fetches `claimed` (ascending), one range request per run of adjacent blocks, into the cache and `have`;
    /// releases them from flight whatever happens.
    private func fetch(_ claimed: [Int], into have: inout [Int: [UInt8]]) throws {
        var pending = claimed[...]
        defer {
            state.withLock {
                inFlight.subtract(pending)
                state.broadcast()
            }
        }
        let blocksPerRequest = max(1, Self.largestRequest / blockSize)
        while let first = pending.first {
            var run = 1
            while run < pending.count, run < blocksPerRequest, pending[pending.startIndex + run] == first + run { run += 1 }
            let start = first * blockSize, end = min(byteCount, (first + run) * blockSize)
            let bytes = try fetchRange(start..<end)
            for offset in 0..<run {
                let index = first + offset
                let block = Array(bytes[(offset * blockSize)..<min(bytes.count, (offset + 1) * blockSize)])
                store(block: index, block)
                have[index] = block
            }
            state.withLock {
                inFlight.subtract(pending.prefix(run))
                state.broadcast()
            }
            pending = pending.dropFirst(run)
        }
    }

    /// Waits until no block of `needed` that `have` lacks is in flight, then takes what the cache has.
    private func wait(for needed: ClosedRange<Int>, have: inout [Int: [UInt8]]) throws {
        state.lock()
        defer { state.unlock() }
        while changed == nil, needed.contains(where: { have[$0] == nil && inFlight.contains($0) }) { state.wait() }
        if let changed { throw changed }
        for index in needed where have[index] == nil {
            if let bytes = cache.block(key(index)) { have[index] = bytes }
        }
    }

    /// The bytes of `range`, asked for on condition that the file is still the version recorded at open.
    private func fetchRange(_ range: Range<Int>) throws -> [UInt8] {
        let response: HTTPClient.Response
        do {
            response = try fetcher.send(address.request(range: range, headers: version.conditions,
                                                        bodyLimit: range.count))
        } catch TesseraError.memoryLimit {
            // More than the range came back: the server sent the whole file, as If-Range does for another version.
            throw replaced(by: nil)
        }
        state.withLock {
            counted.requests += 1
            counted.bytes += response.body.count
        }
        switch response.status {
        case 206:
            let now = Version(response)
            if version.differs(from: now) { throw replaced(by: now) }
            guard let served = ContentRange(response.header("content-range")), served.start == range.lowerBound,
                  response.body.count == range.count else {
                throw TesseraError.http(url: url, detail: "the server answered other bytes than \(range.lowerBound)-\(range.upperBound - 1)")
            }
            return response.body
        case 200, 412:
            throw replaced(by: response.status == 200 ? Version(response) : nil)
        default:
            throw TesseraError.http(url: url, detail: response.statusLine)
        }
    }

    /// The error for a file replaced while it was read, asking the server for the new version when the answer did
    /// not name it; recorded, so every later read of this open fails the same way.
    private func replaced(by newVersion: Version?) -> TesseraError {
        var now = newVersion ?? .unknown
        if now == .unknown, let head = try? fetcher.send(address.request(.head)), head.status == 200 {
            now = Version(head)
        }
        let detail = now == .unknown ? "\(version) no longer matches" : "\(version) became \(now.description.split(separator: " ", maxSplits: 1).last ?? "")"
        let error = TesseraError.http(url: url, detail: "changed while being read (\(detail))")
        state.withLock {
            if changed == nil { changed = error }
            state.broadcast()
        }
        return error
    }
}

/// A `Content-Range: bytes FIRST-LAST/TOTAL` (or `bytes */TOTAL`) header.
private struct ContentRange {
    var start: Int
    var total: Int

    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let total = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { return nil }
        if parts[0] == "*" {
            start = 0
        } else {
            guard let first = parts[0].split(separator: "-").first, let start = Int(first) else { return nil }
            self.start = start
        }
        self.total = total
    }
}
