import Foundation
import Testing
@testable import Tessera

/// A web server in memory for `RemoteFile`: byte ranges, ETags (none when empty), `If-Match` and `If-Range` as
/// nginx answers them, and the requests it was sent.
private final class FakeServer: HTTPFetching, @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8]
    private var etag: String
    var servesRanges = true
    var missing = false
    /// The total its Content-Range headers claim, when not the file's own size (a server that lies).
    var claimedTotal: Int?
    private(set) var requests: [HTTPClient.Request] = []

    init(_ bytes: [UInt8], etag: String = "\"1\"") {
        self.bytes = bytes
        self.etag = etag
    }

    /// Replaces the file, as an upload over it would.
    func replace(with bytes: [UInt8], etag: String) {
        lock.withLock {
            self.bytes = bytes
            self.etag = etag
        }
    }

    var rangeRequests: Int { lock.withLock { requests.filter { $0.range != nil }.count } }

    func send(_ request: HTTPClient.Request) throws -> HTTPClient.Response {
        let (bytes, etag) = lock.withLock {
            requests.append(request)
            return (self.bytes, self.etag)
        }
        var headers = etag.isEmpty ? [:] : ["etag": etag]
        if missing { return HTTPClient.Response(status: 404, reason: "Not Found", headers: [:], body: []) }
        if request.method == .head { return HTTPClient.Response(status: 200, reason: "OK", headers: headers, body: []) }
        let condition = { (name: String) in request.headers.first { $0.name == name }?.value }
        if let match = condition("If-Match"), match != etag {
            return HTTPClient.Response(status: 412, reason: "Precondition Failed", headers: headers, body: [])
        }
        var body = bytes, status = 200
        if servesRanges, let range = request.range, condition("If-Range").map({ $0 == etag }) ?? true {
            guard range.lowerBound < bytes.count else {
                return HTTPClient.Response(status: 416, reason: "Range Not Satisfiable",
                                    headers: ["content-range": "bytes */\(bytes.count)"], body: [])
            }
            let end = min(bytes.count, range.upperBound)
            body = Array(bytes[range.lowerBound..<end])
            headers["content-range"] = "bytes \(range.lowerBound)-\(end - 1)/\(claimedTotal ?? bytes.count)"
            status = 206
        }
        if let limit = request.bodyLimit, body.count > limit {
            throw TesseraError.memoryLimit(path: request.url, needed: body.count, limit: limit, purpose: "the answer")
        }
        return HTTPClient.Response(status: status, reason: status == 206 ? "Partial Content" : "OK", headers: headers, body: body)
    }
}

/// `RemoteFile` over a fake server: what it fetches, how it validates, and codecs reading through it.
@Suite struct RemoteFileTests {
    private let url = "http://host/image.bin"
    private let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }

    private func open(_ server: FakeServer, blockSize: Int = 16 << 10, cache: BlockCache = BlockCache(budget: 64 << 20),
                      budget: MemoryBudget = .default) throws -> RemoteFile {
        try RemoteFile(url: url, fetcher: server, cache: cache, blockSize: blockSize, budget: budget)
    }

    @Test func opensWithOneRequestAndReadsAnyRange() throws {
        let server = FakeServer(content)
        let file = try open(server)
        #expect(server.requests.count == 1)
        #expect(file.byteCount == content.count && file.servesRanges && file.version == .etag("\"1\""))
        for (offset, count) in [(0, 10), (16_380, 10), (100_000, 70_000), (299_990, 50), (300_000, 5)] {
            #expect(try file.read(at: offset, count: count) == Array(content[min(offset, content.count)..<min(content.count, offset + count)]))
        }
    }

    @Test func adjacentMissingBlocksAreOneRequestAndCachedBlocksNone() throws {
        let server = FakeServer(content)
        let file = try open(server)
        _ = try file.read(at: 20_000, count: 50_000)
        #expect(server.rangeRequests == 2, "the open and one request for blocks 1 to 4")
        _ = try file.read(at: 30_000, count: 30_000)
        #expect(server.rangeRequests == 2)
        let range = try #require(server.requests.last?.range)
        #expect(range == (16 << 10)..<(80 << 10))
    }

    @Test func concurrentReadsOfABlockFetchItOnce() throws {
        let server = FakeServer(content)
        let file = try open(server)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            #expect((try? file.read(at: 200_000, count: 1_000)) == Array(content[200_000..<201_000]))
        }
        #expect(server.rangeRequests == 2)
    }

    @Test func sequentialReadsGrowTheirReadAhead() throws {
        let server = FakeServer(content)
        let file = try open(server, blockSize: 4 << 10)
        let cursor = ReadCursor(file)
        var read: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 4 << 10)
        while true {
            let got = try chunk.withUnsafeMutableBytes { try cursor.read(into: $0) }
            if got == 0 { break }
            read += chunk.prefix(got)
        }
        #expect(read == content)
        #expect(server.rangeRequests < 10, "74 blocks in a few growing requests, not one each")
    }

    @Test func aFileReplacedWhileReadFailsClearlyAndTheNextOpenReadsTheNewOne() throws {
        let server = FakeServer(content)
        let file = try open(server)
        _ = try file.read(at: 0, count: 100)
        let replacement = content.map { $0 ^ 0xFF }
        server.replace(with: replacement, etag: "\"2\"")
        #expect(try file.read(at: 10, count: 100) == Array(content[10..<110]), "a cached block is of the old version")
        #expect(throws: TesseraError.http(url: url, detail: "changed while being read (ETag \"1\" became \"2\")")) {
            try file.read(at: 100_000, count: 100)
        }
        #expect(throws: TesseraError.self) { try file.read(at: 200_000, count: 100) }
        #expect(file.failure != nil)
        let again = try open(server, cache: BlockCache(budget: 64 << 20))
        #expect(try again.read(at: 100_000, count: 100) == Array(replacement[100_000..<100_100]))
    }

    @Test func theSameCacheNeverMixesVersions() throws {
        let server = FakeServer(content), cache = BlockCache(budget: 64 << 20)
        _ = try open(server, cache: cache).read(at: 0, count: content.count)
        let replacement = content.map { $0 ^ 0x55 }
        server.replace(with: replacement, etag: "\"2\"")
        #expect(try open(server, cache: cache).read(at: 0, count: content.count) == replacement)
    }

    @Test func aServerWithoutRangesGivesTheWholeFileWithinTheBudget() throws {
        let server = FakeServer(content)
        server.servesRanges = false
        let file = try open(server)
        #expect(!file.servesRanges && file.byteCount == content.count)
        #expect(try file.read(at: 5, count: 10) == Array(content[5..<15]))
        #expect(server.requests.count == 1)
        #expect(throws: TesseraError.memoryLimit(path: url, needed: content.count, limit: 100_000,
                                                 purpose: "the whole file (the server does not serve byte ranges)")) {
            try open(server, budget: MemoryBudget(limit: 100_000))
        }
    }

    @Test func aMissingFileNamesTheURLAndTheStatus() throws {
        let server = FakeServer(content)
        server.missing = true
        #expect(throws: TesseraError.http(url: url, detail: "HTTP 404 Not Found")) { try open(server) }
        #expect("\(TesseraError.http(url: url, detail: "HTTP 404 Not Found"))" == "\(url): HTTP 404 Not Found")
    }

    /// A server claiming a file of nearly `Int.max` bytes is refused at open: a read near that end overflowed the
    /// block arithmetic and trapped (found by fuzzing). One claiming 4 EiB opens, and a read near that end fails
    /// with the server's answer.
    @Test func aServerClaimingAnAbsurdSizeIsRefused() throws {
        let server = FakeServer(Array(content.prefix(64)))
        server.claimedTotal = Int.max - 15
        do {
            _ = try open(server, blockSize: 16)
            Issue.record("a claim of \(Int.max - 15) bytes was accepted")
        } catch let error as TesseraError {
            #expect(error.description.contains(url) && error.description.contains("claims a file of"), "\(error)")
        }
        server.claimedTotal = RemoteFile.largestFile
        let file = try open(server, blockSize: 16)
        #expect(file.byteCount == RemoteFile.largestFile)
        #expect(throws: TesseraError.self) { try file.read(at: file.byteCount - 10, count: 100, readAhead: 64) }
        #expect(try file.read(at: -5, count: 10).isEmpty)
    }

    @Test func theBlockCacheStaysWithinItsBudget() {
        let cache = BlockCache(budget: 10_000)
        for index in 0..<100 { cache.store(BlockCache.Key(file: "f", index: index), [UInt8](repeating: 1, count: 1_000)) }
        #expect(cache.byteCount <= 10_000)
        #expect(cache.block(BlockCache.Key(file: "f", index: 99)) != nil)
        #expect(cache.block(BlockCache.Key(file: "f", index: 0)) == nil)
    }

    /// A new cache over the block folder at `path`, as a new process would make.
    private func cache(folder path: String, limit: Int = 64 << 20) throws -> BlockCache {
        BlockCache(budget: 64 << 20, folder: try BlockFolder(path: path, limit: limit))
    }

    private func blockFiles(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".block") }.sorted()
    }

    @Test func blocksComeFromTheFolderOnASecondOpenWithoutRequests() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = FakeServer(content)
        #expect(try open(server, cache: cache(folder: folder)).read(at: 0, count: content.count) == content)
        let fetched = server.rangeRequests
        #expect(try blockFiles(folder).count == (content.count + (16 << 10) - 1) / (16 << 10))
        let again = try open(server, cache: cache(folder: folder))
        #expect(try again.read(at: 0, count: content.count) == content)
        #expect(server.rangeRequests == fetched + 1, "the open, and every block from the folder")
    }

    @Test func anotherVersionOrBlockSizeMissesTheFolder() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = FakeServer(content)
        _ = try open(server, cache: cache(folder: folder)).read(at: 0, count: content.count)
        let replacement = content.map { $0 ^ 0x33 }
        server.replace(with: replacement, etag: "\"2\"")
        var before = server.rangeRequests
        #expect(try open(server, cache: cache(folder: folder)).read(at: 0, count: content.count) == replacement)
        #expect(server.rangeRequests > before + 1)
        before = server.rangeRequests
        #expect(try open(server, blockSize: 8 << 10, cache: cache(folder: folder)).read(at: 0, count: content.count)
                == replacement)
        #expect(server.rangeRequests > before + 1)
    }

    @Test func aFileWithoutAVersionNeverGoesToTheFolder() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = FakeServer(content, etag: "")
        let file = try open(server, cache: cache(folder: folder))
        #expect(file.version == .unknown)
        #expect(try file.read(at: 0, count: content.count) == content)
        #expect(try blockFiles(folder).isEmpty)
    }

    @Test func aTruncatedOrDamagedBlockFileIsRefetched() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = FakeServer(content)
        _ = try open(server, cache: cache(folder: folder)).read(at: 0, count: content.count)
        let files = try blockFiles(folder)
        for (number, name) in files.enumerated() {
            let path = "\(folder)/\(name)"
            var bytes = try #require(FileManager.default.contents(atPath: path))
            if number.isMultiple(of: 2) { bytes.removeLast(bytes.count / 3) } else { bytes[bytes.count - 100] ^= 1 }
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        let before = server.rangeRequests
        #expect(try open(server, cache: cache(folder: folder)).read(at: 0, count: content.count) == content)
        #expect(server.rangeRequests > before + 1, "every block fetched again")
        let fetched = server.rangeRequests
        #expect(try open(server, cache: cache(folder: folder)).read(at: 0, count: content.count) == content)
        #expect(server.rangeRequests == fetched + 1, "the blocks fetched again were written whole")
    }

    @Test func theBlockFolderStaysWithinItsLimit() throws {
        let path = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let folder = try BlockFolder(path: path, limit: 100_000)
        for index in 0..<60 {
            folder.store(BlockCache.Key(file: "f", index: index, isVersioned: true), [UInt8](repeating: 7, count: 10_000))
            #expect(folder.byteCount <= 100_000)
        }
        #expect(try blockFiles(path).count >= 5)
        let survivor = try #require(try blockFiles(path).first)
        let index = try #require((0..<60).first { folder.file(of: BlockCache.Key(file: "f", index: $0)) == "\(path)/\(survivor)" })
        #expect(folder.block(BlockCache.Key(file: "f", index: index)) == [UInt8](repeating: 7, count: 10_000))
    }

    @Test(arguments: ["jpg", "png"])
    func aStreamReplacedWhileDecodedFailsAsChangedNotTruncated(format: String) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/noise.\(format)"
        try TestImages.write(TestImages.make(width: 1200, height: 900, format: .rgb8), to: path)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        try #require(bytes.count > 128 << 10, "the stream outgrows its first reads")
        let server = FakeServer(Array(bytes))
        let remote = try RemoteFile(url: url, fetcher: server, cache: BlockCache(budget: 8 << 20), blockSize: 16 << 10)
        let source = try ImageSource(input: .remote(remote))
        server.replace(with: Array(bytes.reversed()), etag: "\"2\"")
        #expect(throws: TesseraError.http(url: url, detail: "changed while being read (ETag \"1\" became \"2\")")) {
            _ = try source.makeReader().readAll(budget: .default, name: url)
        }
    }

    @Test(arguments: ["jpg", "png", "tif"])
    func codecsReadThroughARemoteFileAsFromTheFile(format: String) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.\(format)"
        try TestImages.write(TestImages.gradient(width: 300, height: 200), to: path)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let remote = try RemoteFile(url: "http://host/image.\(format)", fetcher: FakeServer(Array(bytes)),
                                    cache: BlockCache(budget: 1 << 20), blockSize: 1 << 10)
        let region = Rect(x: 30, y: 40, width: 200, height: 100)
        let local = try ImageSource(path: path).makeReader(ReadOptions(region: region)).readAll(budget: .default, name: path)
        let read = try ImageSource(input: .remote(remote)).makeReader(ReadOptions(region: region))
            .readAll(budget: .default, name: remote.url)
        #expect(read.bytes == local.bytes)
    }

    /// A pyramid in a zip on a web server: its directory and each tile read by byte ranges, as from the file.
    @Test(arguments: ["dz", "iiif"])
    func aZippedPyramidReadsByRangesAsFromTheFile(layout: String) throws {
        let path = try TestImages.pyramid(TestImages.make(width: 300, height: 200, format: .rgb8), layout: layout,
                                          tileSize: 64, format: .jpeg, zipped: true)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let server = FakeServer(Array(bytes))
        let remote = try RemoteFile(url: "http://host/pyramid.zip", fetcher: server, cache: BlockCache(budget: 1 << 20),
                                    blockSize: 1 << 10)
        let region = Rect(x: 70, y: 20, width: 100, height: 90)
        let local = try ImageSource(path: path).makeReader(ReadOptions(region: region)).readAll(budget: .default, name: path)
        let read = try ImageSource(input: .remote(remote)).makeReader(ReadOptions(region: region))
            .readAll(budget: .default, name: remote.url)
        #expect(read.bytes == local.bytes)
        #expect(server.rangeRequests > 0 && Set(server.requests.compactMap(\.range)).count == server.rangeRequests,
                "read by ranges, none twice")
    }
}
