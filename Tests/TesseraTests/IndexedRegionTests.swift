import Foundation
import Testing
@testable import Tessera

/// Regions of sequential JPEGs read through their entropy index (only the MCUs they meet entropy-decoded by
/// Tessera, the rest libjpeg's) against libjpeg's own decode of the whole image, at every scale.
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
                    #expect(TestImages.maxDifference(part, TestImages.crop(whole, region.reduced(by: scale))) == 0,
                            "\(test.name) \(region) at 1/\(scale)")
                }
            }
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
