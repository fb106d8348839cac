import Foundation
import Testing
@testable import Tessera

/// Regions of sequential JPEGs read through their entropy index (only the MCUs they meet entropy-decoded by
/// Tessera, the rest libjpeg's) and through libjpeg's crop against libjpeg's own decode of the whole image, at
/// every scale.
@Suite(.enabled(if: TestImages.run("cjpeg", ["-version"]) != nil, "needs libjpeg-turbo's cjpeg"))
final class IndexedRegionTests {
    let folder: String
    let cache: String

    init() throws {
        folder = try TestImages.folder()
        cache = folder + "/cache"
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    static let cases: [(name: String, arguments: [String])] = [
        ("420", ["-sample", "2x2"]), ("422", ["-sample", "2x1"]), ("411", ["-sample", "4x1"]),
        ("444", ["-sample", "1x1", "-optimize"]), ("gray", ["-grayscale"]), ("restarts", ["-sample", "2x2", "-restart", "1"]),
        // Chroma scaled by a 2x2 IDCT at 1/8 and then repeated one way, and chroma halved down only.
        ("4x2", ["-sample", "4x2"]), ("2x4", ["-sample", "2x4"]), ("440", ["-sample", "1x2"]),
    ]

    /// Regions inside, at the corners and at the right and bottom edges of a 1203 x 901 image, and one of full rows.
    static let regions = [Rect(x: 517, y: 611, width: 131, height: 77), Rect(x: 0, y: 0, width: 40, height: 33),
                          Rect(x: 1100, y: 800, width: 103, height: 101), Rect(x: 3, y: 450, width: 600, height: 1),
                          Rect(x: 250, y: 17, width: 1, height: 400), Rect(x: 0, y: 300, width: 1203, height: 50)]

    @Test func regionsAtEveryScaleEqualLibjpegsDecode() throws {
        for test in Self.cases {
            let path = try SequentialCoefficientDecoderTests.cjpeg(test.name, width: 1203, height: 901,
                                                                   arguments: test.arguments, in: folder)
            _ = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache)
            let source = try ImageSource(path: path)
            for scale in [1, 2, 4, 8] {
                let whole = try TestImages.read(path, ReadOptions(scale: scale))
                for region in Self.regions {
                    let options = ReadOptions(region: region, scale: scale, entropyIndexFolder: cache)
                    let request = DecodeRequest(scale: scale, page: 0, budget: .default, allowPartial: false,
                                                region: region.reduced(by: scale), entropyIndexFolder: cache)
                    guard case .indexed = try JPEGDecodePlan(input: source.input, properties: source.properties,
                                                             request: request) else {
                        Issue.record("\(test.name) \(region) at 1/\(scale): the index is not used")
                        continue
                    }
                    let part = try source.makeReader(options).readAll()
                    let expected = TestImages.crop(whole, region.reduced(by: scale))
                    #expect(TestImages.maxDifference(part, expected) == 0, "\(test.name) \(region) at 1/\(scale)")
                    // libjpeg's own crop, without the index, gives the same rows.
                    let cropped = try source.makeReader(ReadOptions(region: region, scale: scale)).readAll()
                    #expect(TestImages.maxDifference(cropped, expected) == 0,
                            "\(test.name) \(region) at 1/\(scale), libjpeg's crop")
                }
            }
        }
    }

    /// Skips in pieces within one MCU row give the rows one skip does: libjpeg-turbo 2.1 gives a wrong row after
    /// two skips in a row there (4:2:0 at 1/4, 4x2 at 1/1), so `JPEGDecoder` passes them to it as one.
    @Test func skipsInPiecesEqualOneSkip() throws {
        for (name, arguments, scale) in [("420", ["-sample", "2x2"], 4), ("4x2", ["-sample", "4x2"], 1)] {
            let path = try SequentialCoefficientDecoderTests.cjpeg(name, width: 1203, height: 901, arguments: arguments,
                                                                   in: folder)
            let source = try ImageSource(path: path)
            let request = DecodeRequest(scale: scale, page: 0, budget: .default, allowPartial: false)
            var rows: [[UInt8]] = []
            for skips in [[35], [33, 2], [32, 1, 1, 1]] {
                let decoder = try JPEGDecoder(input: source.input, properties: source.properties, request: request)
                for count in skips { try decoder.skipRows(count) }
                var row = [UInt8](repeating: 0, count: decoder.size.width * 3)
                try row.withUnsafeMutableBytes { try decoder.decodeRows(into: $0.baseAddress!, bytesPerRow: $0.count, count: 1) }
                rows.append(row)
            }
            #expect(rows[1] == rows[0] && rows[2] == rows[0], "\(name) at 1/\(scale)")
        }
    }

    /// Whole reads decoded on several threads from the index (`ParallelBandDecoder`, 2 or 3 workers) equal
    /// libjpeg's decode at every scale; with a cache folder and enough cores, the plan chooses it for a whole read
    /// of a large image, building the index on first contact.
    @Test func wholeReadsOnSeveralThreadsEqualLibjpegsDecode() throws {
        for test in Self.cases {
            let path = try SequentialCoefficientDecoderTests.cjpeg(test.name, width: 1203, height: 901,
                                                                   arguments: test.arguments, in: folder)
            let scans = try JPEGScanIndex(input: .file(path: path))
            let index = try JPEGEntropyIndex.build(input: .file(path: path), key: try JPEGEntropyIndex.Key(path: path))
            let source = try ImageSource(path: path)
            for (scale, workers) in [(1, 2), (2, 3), (4, 2), (8, 3)] {
                let whole = try TestImages.read(path, ReadOptions(scale: scale))
                let request = DecodeRequest(scale: scale, page: 0, budget: .default, allowPartial: false)
                do {
                    let decoder = try ParallelBandDecoder(input: source.input, properties: source.properties,
                                                          request: request, scans: scans, index: index, workers: workers)
                    var image = ImageBuffer(width: decoder.size.width, height: decoder.size.height, format: decoder.format)
                    // In uneven runs, a few skipped, so runs cross the bands' edges.
                    try decoder.skipRows(3)
                    var row = 3
                    while row < image.height {
                        let count = min(image.height - row, 1 + row % 37)
                        try image.bytes.withUnsafeMutableBytes {
                            try decoder.decodeRows(into: $0.baseAddress! + row * image.bytesPerRow,
                                                   bytesPerRow: image.bytesPerRow, count: count)
                        }
                        row += count
                    }
                    let expected = TestImages.crop(whole, Rect(x: 0, y: 3, width: whole.width, height: whole.height - 3))
                    #expect(TestImages.maxDifference(TestImages.crop(image, Rect(x: 0, y: 3, width: image.width,
                                                                                 height: image.height - 3)), expected) == 0,
                            "\(test.name) at 1/\(scale) on \(workers) threads")
                }
            }
            // The plan leaves an image of under two bands per core to libjpeg (2x4's 32-row MCUs here).
            guard scans.frame.mcusDown
                    >= 2 * JPEGDecodePlan.speculativeMinimumCores(scale: 1) * ParallelBandDecoder.minimumBandRows
            else { continue }
            guard let read = try readThroughParallelPlan(path) else {
                Issue.record("\(test.name): a whole read with a cache folder is not decoded on every core")
                continue
            }
            #expect(JPEGEntropyIndex.load(for: path, scans: scans, folder: cache) != nil, "\(test.name): no index left")
            #expect(TestImages.maxDifference(read, try TestImages.read(path)) == 0, "\(test.name) through the plan")
        }
    }

    /// The whole image at `path` decoded as the plan does for a large plain JPEG with a cache folder on a machine
    /// of `cores` cores (the image's size not held against it): on every core, from the index in `cache`, built
    /// there on first contact; nil when the plan would not (a file the sequential decoder does not read).
    private func readThroughParallelPlan(_ path: String, cores: Int = JPEGDecodePlan.speculativeMinimumCores(scale: 1))
        throws -> ImageBuffer? {
        try readThroughWholeReadPlan(path, scale: 1, cores: cores) { plan in
            if case .parallel = plan { return true }
            return false
        }
    }

    /// The whole image at `path` at 1/`scale` decoded as the plan for a whole read with a cache folder on `cores`
    /// cores chooses, when `expected` accepts its choice; nil when the plan leaves the read to libjpeg.
    private func readThroughWholeReadPlan(_ path: String, scale: Int, cores: Int,
                                          expected: (JPEGDecodePlan) -> Bool) throws -> ImageBuffer? {
        let source = try ImageSource(path: path)
        let request = DecodeRequest(scale: scale, page: 0, budget: .default, allowPartial: false, entropyIndexFolder: cache)
        guard let plan = try JPEGDecodePlan.wholeRead(input: source.input, properties: source.properties,
                                                       request: request, minimumPixels: 0, cores: cores) else { return nil }
        guard expected(plan) else {
            Issue.record("\(path) at 1/\(scale) on \(cores) cores: the plan chose \(plan)")
            return nil
        }
        let decoder = try plan.makeDecoder(input: source.input, properties: source.properties, request: request)
        var image = ImageBuffer(width: decoder.size.width, height: decoder.size.height, format: decoder.format)
        try image.bytes.withUnsafeMutableBytes {
            try decoder.decodeRows(into: $0.baseAddress!, bytesPerRow: image.bytesPerRow, count: image.height)
        }
        return image
    }

    /// Rows discarded on several cores (what `tessera info --verify` does) are decoded all the same and handed out
    /// in turn: after discarding some, the next rows read are the image's next rows.
    @Test func rowsDiscardedOnSeveralCoresAreHandedOutInTurn() throws {
        let path = try SequentialCoefficientDecoderTests.cjpeg("discard", width: 1203, height: 901,
                                                               arguments: ["-sample", "2x2"], in: folder)
        _ = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache)
        let expected = try TestImages.read(path, ReadOptions())
        let source = try ImageSource(path: path)
        let request = DecodeRequest(scale: 1, page: 0, budget: .default, allowPartial: false, entropyIndexFolder: cache)
        let plan = try #require(try JPEGDecodePlan.wholeRead(input: source.input, properties: source.properties,
                                                              request: request, minimumPixels: 0, cores: 2))
        guard case .parallel = plan else {
            Issue.record("the plan chose \(plan)")
            return
        }
        let decoder = try plan.makeDecoder(input: source.input, properties: source.properties, request: request)
        try decoder.discardRows(517)
        var rest = ImageBuffer(width: decoder.size.width, height: decoder.size.height - 517, format: decoder.format)
        try rest.bytes.withUnsafeMutableBytes {
            try decoder.decodeRows(into: $0.baseAddress!, bytesPerRow: rest.bytesPerRow, count: rest.height)
        }
        #expect(Array(rest.bytes) == Array(expected.bytes[expected.offset(ofRow: 517)...]))
    }

    /// A reader whose rows are decoded on every core is read as it is, not ahead by one more thread (which would
    /// add only a copy); a reader that decodes on its consumer's thread is read ahead.
    @Test func onlyReadersNotDecodingAheadAreReadAhead() throws {
        let path = try SequentialCoefficientDecoderTests.cjpeg("ahead", width: 1203, height: 901,
                                                               arguments: ["-sample", "2x2"], in: folder)
        _ = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache)
        let source = try ImageSource(path: path)
        let request = DecodeRequest(scale: 1, page: 0, budget: .default, allowPartial: false, entropyIndexFolder: cache)
        let plan = try #require(try JPEGDecodePlan.wholeRead(input: source.input, properties: source.properties,
                                                              request: request, minimumPixels: 0, cores: 2))
        let decoder = try plan.makeDecoder(input: source.input, properties: source.properties, request: request)
        let reader = RegionReader(decoder: decoder, region: Rect(decoder.size), budget: .default, name: path)
        #expect(reader.decodesAhead)
        #expect(reader.readingAhead() === reader)
        let shrunk = BoxShrinkReader(source: reader, factor: 2)
        #expect(shrunk.readingAhead() === shrunk)
        let serial = try source.makeReader()
        #expect(!serial.decodesAhead)
        #expect(serial.readingAhead() is PrefetchingReader)
    }

    /// `ImageSource.verify` decodes every pixel: an intact file passes, and a copy cut short in its image data
    /// throws a `TesseraError` (both small enough for each codec's own rows, discarded one at a time).
    @Test func verifyPassesIntactFilesAndRefusesCutOnes() throws {
        let jpeg = try SequentialCoefficientDecoderTests.cjpeg("verify", width: 1203, height: 901,
                                                               arguments: ["-sample", "2x2"], in: folder)
        let png = folder + "/verify.png"
        try ImageWriter.write(BufferReader(try TestImages.read(jpeg, ReadOptions())), to: png)
        for path in [jpeg, png] {
            try ImageSource(path: path).verify(ReadOptions(entropyIndexFolder: cache))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let cut = path.replacingOccurrences(of: "verify.", with: "verify-cut.")
            try bytes.prefix(bytes.count * 3 / 5).write(to: URL(fileURLWithPath: cut))
            #expect(throws: TesseraError.self, "\(cut)") {
                try ImageSource(path: cut).verify(ReadOptions(entropyIndexFolder: cache))
            }
        }
    }

    /// A whole read decodes on every core only when the budget holds each worker's band of rows; below, the plan
    /// leaves it to libjpeg's serial decode, which buffers no band.
    @Test func aBudgetTooSmallForTheBandsKeepsTheSerialDecode() throws {
        let path = try SequentialCoefficientDecoderTests.cjpeg("budget", width: 1203, height: 901,
                                                               arguments: ["-sample", "2x2"], in: folder)
        _ = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache)
        let source = try ImageSource(path: path)
        let needed = ParallelBandDecoder.bufferBytes(try JPEGScanIndex(input: source.input).frame, scale: 1, workers: 2)
        for (limit, parallel) in [(needed, true), (needed - 1, false)] {
            let request = DecodeRequest(scale: 1, page: 0, budget: MemoryBudget(limit: limit), allowPartial: false,
                                        entropyIndexFolder: cache)
            let plan = try JPEGDecodePlan.wholeRead(input: source.input, properties: source.properties, request: request,
                                                    minimumPixels: 0, cores: 2)
            var chosen = false
            if case .parallel = plan { chosen = true }
            #expect(chosen == parallel, "a budget of \(limit) bytes")
        }
    }

    /// Damaged copies of a JPEG read whole as the plan does on several cores (from an index built on first
    /// contact): each gives an image or a `TesseraError`, never a crash.
    @Test func damagedCopiesReadWholeOnSeveralThreadsGiveRowsOrErrors() throws {
        let path = try SequentialCoefficientDecoderTests.cjpeg("damaged", width: 640, height: 600,
                                                               arguments: ["-sample", "2x2"], in: folder)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let copy = folder + "/copy.jpg"
        var number = 0
        TestImages.damagedCopies(of: bytes) { damaged, label in
            number += 1
            // A new name each time: the index is keyed by path, size and time.
            let file = copy.replacingOccurrences(of: ".jpg", with: "-\(number).jpg")
            try? Data(damaged).write(to: URL(fileURLWithPath: file))
            do {
                _ = try readThroughParallelPlan(file)
            } catch is TesseraError {
            } catch {
                Issue.record("\(label): \(error)")
            }
        }
    }

    /// A whole read at 1/8 with no index on 2 cores is one pass of Tessera's decoder recording the index: rows
    /// equal libjpeg's, and the index it leaves is the one a build makes, so the next read is on both cores.
    @Test func aWholeReadAtOneEighthRecordsTheIndex() throws {
        for test in Self.cases {
            let path = try SequentialCoefficientDecoderTests.cjpeg(test.name, width: 1203, height: 901,
                                                                   arguments: test.arguments, in: folder)
            let expected = try TestImages.read(path, ReadOptions(scale: 8))
            let read = try readThroughWholeReadPlan(path, scale: 8, cores: 2) { plan in
                if case .recording = plan { return true }
                return false
            }
            #expect(read.map { TestImages.maxDifference($0, expected) } == 0, "\(test.name) recorded")
            let scans = try JPEGScanIndex(input: .file(path: path))
            let built = try JPEGEntropyIndex.build(input: .file(path: path), key: try JPEGEntropyIndex.Key(path: path),
                                                   workers: 1)
            #expect(JPEGEntropyIndex.load(for: path, scans: scans, folder: cache) == built, "\(test.name): index")
            guard scans.frame.mcusDown >= 4 else { continue }
            let again = try readThroughWholeReadPlan(path, scale: 8, cores: 2) { plan in
                if case .parallel = plan { return true }
                return false
            }
            #expect(again.map { TestImages.maxDifference($0, expected) } == 0, "\(test.name) from the index")
            let source = try ImageSource(path: path)
            let request = DecodeRequest(scale: 8, page: 0, budget: .default, allowPartial: false, entropyIndexFolder: cache)
            #expect(try JPEGDecodePlan.wholeRead(input: source.input, properties: source.properties, request: request,
                                                 minimumPixels: 0, cores: 1) == nil,
                    "\(test.name): on one core, with the index kept, libjpeg reads it")
        }
    }

    @Test func aStaleIndexIsNotUsed() throws {
        let path = try SequentialCoefficientDecoderTests.cjpeg("stale", width: 1203, height: 901, arguments: [],
                                                               in: folder)
        let built = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache)
        // The image rewritten with restart markers, its old index moved to where the new one would be.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: built.file))
        _ = try SequentialCoefficientDecoderTests.cjpeg("stale", width: 1203, height: 901,
                                                        arguments: ["-restart", "2"], in: folder)
        try bytes.write(to: URL(fileURLWithPath: JPEGEntropyIndex.location(of: path, key: try JPEGEntropyIndex.Key(path: path),
                                                                          folder: cache)))
        let source = try ImageSource(path: path)
        let region = Rect(x: 100, y: 500, width: 64, height: 64)
        let request = DecodeRequest(scale: 1, page: 0, budget: .default, allowPartial: false, region: region,
                                    entropyIndexFolder: cache)
        guard case .libjpeg = try JPEGDecodePlan(input: source.input, properties: source.properties, request: request)
        else {
            Issue.record("a stale index is used")
            return
        }
    }
}
