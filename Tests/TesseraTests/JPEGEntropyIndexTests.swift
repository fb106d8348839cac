import Foundation
import Testing
@testable import Tessera

/// The entropy index's file format: a round trip, the size limit, and a stale, truncated or damaged index never
/// trusted but rebuilt.
@Suite(.enabled(if: TestImages.run("cjpeg", ["-version"]) != nil, "needs libjpeg-turbo's cjpeg"))
final class JPEGEntropyIndexTests {
    let folder: String
    let cache: String

    init() throws {
        folder = try TestImages.folder()
        cache = folder + "/cache"
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// A JPEG large enough for an index within 0.5% of it.
    private func photo(_ name: String = "photo", arguments: [String] = ["-sample", "2x2"]) throws -> String {
        try SequentialCoefficientDecoderTests.cjpeg(name, width: 1200, height: 900, arguments: arguments, in: folder)
    }

    @Test func roundTripsWithinHalfAPercentOfTheFile() throws {
        for (name, arguments) in [("420", ["-sample", "2x2"]), ("gray", ["-grayscale"]),
                                  ("restarts", ["-sample", "2x1", "-restart", "3B"])] {
            let path = try photo(name, arguments: arguments)
            let key = try JPEGEntropyIndex.Key(path: path)
            let index = try JPEGEntropyIndex.build(input: .file(path: path), key: key)
            let bytes = index.encoded()
            #expect(bytes.count <= JPEGEntropyIndex.byteLimit(forFileSize: key.size), "\(name)")
            #expect(try JPEGEntropyIndex(decoding: bytes, name: path) == index, "\(name)")
            #expect(index.states.count == index.mcusDown * index.statesPerRow, "\(name)")
        }
    }

    @Test func everyDamagedCopyIsRefused() throws {
        let path = try photo()
        let bytes = try JPEGEntropyIndex.build(input: .file(path: path), key: try JPEGEntropyIndex.Key(path: path)).encoded()
        TestImages.damagedCopies(of: bytes) { damaged, label in
            guard damaged != bytes else { return }
            #expect(throws: TesseraError.self, "\(label)") { try JPEGEntropyIndex(decoding: damaged, name: path) }
        }
    }

    @Test func aStaleTruncatedOrDamagedIndexIsRebuilt() throws {
        let path = try photo()
        let first = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache)
        #expect(first.outcome == .built)
        #expect(try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache).outcome == .reused)
        let good = try Data(contentsOf: URL(fileURLWithPath: first.file))
        // Cut short, then one byte flipped: rebuilt both times, and the rebuilt file is the good one.
        try good.prefix(good.count / 2).write(to: URL(fileURLWithPath: first.file))
        #expect(try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache).outcome == .rebuilt)
        var flipped = good
        flipped[good.count / 3] ^= 0x10
        try flipped.write(to: URL(fileURLWithPath: first.file))
        #expect(try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache).outcome == .rebuilt)
        #expect(try Data(contentsOf: URL(fileURLWithPath: first.file)) == good)
        // The JPEG rewritten (another image, its time set back): the old index, put where the new one would be,
        // names another size and time and describes another scan; it is rebuilt.
        _ = try photo(arguments: ["-sample", "2x2", "-restart", "1"])
        let key = try JPEGEntropyIndex.Key(path: path)
        let stale = JPEGEntropyIndex.location(of: path, key: key, folder: cache)
        try good.write(to: URL(fileURLWithPath: stale))
        let scans = try JPEGScanIndex(input: .file(path: path))
        #expect(JPEGEntropyIndex.load(for: path, scans: scans, folder: cache) == nil)
        let rebuilt = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache)
        #expect(rebuilt.outcome == .rebuilt && rebuilt.index.key == key && rebuilt.index.restartInterval > 0)
    }

    @Test func aProgressiveOrTinyJPEGGetsNoIndex() throws {
        let tiny = try SequentialCoefficientDecoderTests.cjpeg("tiny", width: 40, height: 30, arguments: [], in: folder)
        #expect(throws: TesseraError.self) { try JPEGEntropyIndex.loadOrBuild(for: tiny, folder: self.cache) }
        let progressive = try SequentialCoefficientDecoderTests.cjpeg("progressive", width: 1000, height: 700,
                                                                       arguments: ["-progressive"], in: folder)
        #expect(throws: TesseraError.self) { try JPEGEntropyIndex.loadOrBuild(for: progressive, folder: self.cache) }
    }
}
