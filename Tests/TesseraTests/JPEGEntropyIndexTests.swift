import CZlib
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

    /// A file made to pass its checksum whose first offset delta is Int.max: the sums wrap and the rows are refused
    /// where a read meets them, never a trap; the region read through it fails with the row named.
    @Test func anOffsetPastTheLargestIntegerIsRefused() throws {
        let path = try photo()
        let good = try JPEGEntropyIndex.build(input: .file(path: path), key: try JPEGEntropyIndex.Key(path: path)).encoded()
        // The header is 51 bytes (MCUs down at 34), then a varint per MCU row (its records' bytes); the first
        // record is a flags byte, then its offset's zigzag varint.
        let down = (0..<4).reduce(0) { $0 | Int(good[34 + $1]) << (8 * $1) }
        var table = 51
        for _ in 0..<down {
            while good[table] >= 0x80 { table += 1 }
            table += 1
        }
        let first = table + 1
        var end = first
        while good[end] >= 0x80 { end += 1 }
        var huge: UInt64 = 0xFFFF_FFFF_FFFF_FFFE, varint: [UInt8] = []
        while huge >= 0x80 {
            varint.append(UInt8(huge & 0x7F) | 0x80)
            huge >>= 7
        }
        varint.append(UInt8(huge))
        // The first row's length grows by as many bytes as the varint is longer (the test photo's rows are under
        // 128 bytes, one byte each).
        var hostile = Array(good[..<first]) + varint + Array(good[(end + 1)..<(good.count - 4)])
        hostile[51] += UInt8(varint.count - (end + 1 - first))
        let crc = hostile.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        hostile += (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
        let index = try JPEGEntropyIndex(decoding: hostile, name: path)
        // Every row's first record is coded from the one above's, so the wrapped offset reaches them all.
        #expect((0..<down).allSatisfy { index.state(row: $0, column: 0) == nil })
        let scans = try JPEGScanIndex(input: .file(path: path))
        let coefficients = try IndexedCoefficients(scans: scans, index: index, input: .file(path: path), scale: 1)
        #expect(throws: TesseraError.corrupt(path: path, detail: "its entropy index is malformed at MCU row 0 (remove"
                                             + " it from the cache folder to have it built again)")) {
            try coefficients.decode(rows: 0..<1, into: CoefficientWindow(frame: scans.frame, capacity: 1))
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

    /// Sampling, tables and sizes the speculative build is checked on, each against the serial build.
    static let kinds: [(name: String, arguments: [String])] = [
        ("420", ["-sample", "2x2"]), ("422", ["-sample", "2x1"]), ("411", ["-sample", "4x1"]),
        ("444-optimized", ["-sample", "1x1", "-optimize"]), ("gray", ["-grayscale"]),
    ]

    /// The speculative build's state before every MCU equals the serial decode's (the same predictions and, where
    /// both are bit positions, the same bit), on 2 and 7 threads with segments small enough to split these
    /// images; the MCUs it decodes, wrong guesses and goings on included, are bounded by twice the image's.
    private func expectSpeculationMatchesSerial(_ path: String, _ label: String, meets: Bool = false) throws {
        let scans = try JPEGScanIndex(input: .file(path: path))
        let decoder = try SequentialCoefficientDecoder(index: scans, input: .file(path: path))
        var serial: [JPEGScanState.Resumable] = []
        try decoder.record(through: decoder.mcuCount, every: 1, into: &serial)
        let mcuCount = decoder.mcuCount
        for workers in [2, 7] {
            guard let found = try SpeculativeIndexBuild.states(scans: scans, input: .file(path: path), workers: workers,
                                                               stride: 1, minimumMCUs: 64) else {
                Issue.record("\(label) on \(workers) threads: no states")
                continue
            }
            #expect(found.states.count == serial.count, "\(label) on \(workers) threads")
            let differing = zip(found.states, serial).filter { found, serial in
                found.predictions != serial.predictions || (found.reader.isBitPosition && serial.reader.isBitPosition
                    && (found.reader.offset, found.reader.skip) != (serial.reader.offset, serial.reader.skip))
            }
            #expect(differing.isEmpty, "\(label) on \(workers) threads: \(differing.count) states differ")
            #expect(found.decodedMCUs <= 2 * (mcuCount + 1), "\(label) on \(workers) threads: \(found.decodedMCUs) MCUs")
            // On a photograph split in two the guess meets the true decode within a few MCUs: almost no work is
            // wasted. (Split in seven, the segments are so short that one may be passed before it is met.)
            #expect(!meets || workers > 2 || found.decodedMCUs <= mcuCount + 1 + 16,
                    "\(label) on \(workers) threads: \(found.decodedMCUs) MCUs of \(mcuCount)")
        }
    }

    @Test func speculativeBuildsEqualTheSerialOne() throws {
        for kind in Self.kinds {
            try expectSpeculationMatchesSerial(try SequentialCoefficientDecoderTests.cjpeg(
                kind.name, width: 600, height: 450, arguments: kind.arguments, in: folder), kind.name, meets: true)
        }
        let odd = try SequentialCoefficientDecoderTests.cjpeg("odd", width: 501, height: 377, arguments: ["-sample", "2x2"],
                                                              in: folder)
        try expectSpeculationMatchesSerial(odd, "odd size", meets: true)
    }

    /// Adversarial streams: one flat colour (every block a DC of 0 and an EOB: long runs of the same few bits,
    /// repeating every MCU, where a wrong guess may stay a block off) and a flat half over a noisy half (a guess
    /// in the flat part meets few distinct codes). Each equals the serial decode.
    @Test func speculationOnFlatAndPeriodicStreamsEqualsTheSerialBuild() throws {
        for (name, arguments) in [("flat-420", ["-sample", "2x2"]), ("flat-444", ["-sample", "1x1"]),
                                  ("flat-gray", ["-grayscale"])] {
            let path = try Self.cjpeg(name, width: 800, height: 600, arguments: arguments, in: folder) { _, _ in 128 }
            try expectSpeculationMatchesSerial(path, name)
        }
        let half = try Self.cjpeg("half", width: 800, height: 600, arguments: ["-sample", "2x2"], in: folder) { x, y in
            y < 300 ? 90 : UInt8(truncatingIfNeeded: (x &* 7919 ^ y &* 104_729) >> 3)
        }
        try expectSpeculationMatchesSerial(half, "flat over noise")
    }

    /// A damaged scan: the speculative build gives up (a thread meets an invalid code, or the data ends early)
    /// and the serial build says which MCU row is damaged, naming the file; a tiny image is not split at all.
    @Test func aDamagedOrTinyScanFallsBackToTheSerialBuild() throws {
        let path = try photo("damaged")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let scans = try JPEGScanIndex(input: .file(path: path))
        let dataOffset = scans.scans[0].dataOffset
        // A run of 0xFF 0xFF... is no valid data: every decode reaching it fails.
        let damage = dataOffset + (bytes.count - dataOffset) * 2 / 3
        for index in damage..<damage + 64 { bytes[index] = 0xFE }
        let damaged = folder + "/damaged-scan.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        do {
            _ = try JPEGEntropyIndex.build(input: .file(path: damaged), key: try JPEGEntropyIndex.Key(path: damaged),
                                           workers: 2)
            Issue.record("a damaged scan gave an index")
        } catch let error as TesseraError {
            #expect(error.description.contains(damaged) && error.description.contains("MCU row"), "\(error)")
        }
        let truncated = folder + "/truncated-scan.jpg"
        try Data(bytes.prefix(bytes.count * 3 / 4)).write(to: URL(fileURLWithPath: truncated))
        let cut = try JPEGScanIndex(input: .file(path: truncated))
        #expect(try SpeculativeIndexBuild.states(scans: cut, input: .file(path: truncated), workers: 2, stride: 1,
                                                 minimumMCUs: 64) == nil)
        let tiny = try SequentialCoefficientDecoderTests.cjpeg("tiny-scan", width: 64, height: 48, arguments: [], in: folder)
        #expect(try SpeculativeIndexBuild.states(scans: JPEGScanIndex(input: .file(path: tiny)), input: .file(path: tiny),
                                                 workers: 2, stride: 1) == nil)
    }

    /// `cjpeg` over a gray-level picture given by `value(x, y)` (the same in every channel).
    static func cjpeg(_ name: String, width: Int, height: Int, arguments: [String], in folder: String,
                      value: (Int, Int) -> UInt8) throws -> String {
        var bytes = Array("P6\n\(width) \(height)\n255\n".utf8)
        for y in 0..<height { for x in 0..<width { bytes += [UInt8](repeating: value(x, y), count: 3) } }
        let ppm = folder + "/\(name).ppm", path = folder + "/\(name).jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: ppm))
        #expect(TestImages.run("cjpeg", ["-quality", "85"] + arguments + ["-outfile", path, ppm]) == 0)
        return path
    }

    @Test func aProgressiveOrTinyJPEGGetsNoIndex() throws {
        let tiny = try SequentialCoefficientDecoderTests.cjpeg("tiny", width: 40, height: 30, arguments: [], in: folder)
        #expect(throws: TesseraError.self) { try JPEGEntropyIndex.loadOrBuild(for: tiny, folder: self.cache) }
        let progressive = try SequentialCoefficientDecoderTests.cjpeg("progressive", width: 1000, height: 700,
                                                                       arguments: ["-progressive"], in: folder)
        #expect(throws: TesseraError.self) { try JPEGEntropyIndex.loadOrBuild(for: progressive, folder: self.cache) }
    }
}
