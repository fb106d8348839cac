import Foundation
import Testing
@testable import Tessera

/// The DC-scan decoder against libjpeg's own 1/8 decode of the same progressive files, its memory, and its
/// behaviour on damaged files.
@Suite final class ProgressiveDCDecoderTests {
    let folder: String
    let original = TestImages.gradient(width: 301, height: 203)

    init() throws { folder = try TestImages.folder() }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func progressive(_ image: ImageBuffer, subsampling: EncodeOptions.Subsampling, name: String) throws -> String {
        try TestImages.writeProgressive(image, to: folder + "/" + name, subsampling: subsampling)
    }

    /// libjpeg's decode of the whole file at 1/8, bypassing the DC path.
    private func libjpegEighth(_ path: String) throws -> ImageBuffer {
        let source = try ImageSource(path: path)
        let decoder = try JPEGDecoder(input: source.input, properties: source.properties,
                                      request: DecodeRequest(scale: 8, page: 0, budget: .default, allowPartial: false))
        return try RegionReader(decoder: decoder, region: Rect(decoder.size), budget: .default, name: path).readAll()
    }

    @Test func oneEighthOfAFullyColouredOrGrayImageEqualsLibjpegs() throws {
        for (image, name) in [(original, "color.jpg"), (TestImages.gradient(width: 97, height: 45, format: .gray8), "gray.jpg")] {
            let path = try progressive(image, subsampling: .s444, name: name)
            let reader = try ImageSource(path: path).makeReader(ReadOptions(scale: 8))
            let decoded = try reader.readAll()
            #expect(decoded.size == reducedSize(image.size, by: 8))
            #expect(TestImages.maxDifference(decoded, try libjpegEighth(path)) == 0, "\(name)")
        }
    }

    /// libjpeg scales 4:2:0 chroma by a 2x2 IDCT of each block, AC terms included, which DC alone cannot give:
    /// on chroma ramps the interpolated block means stay within a level or two of it.
    @Test func oneEighthOf420ChromaStaysCloseToLibjpegs2x2IDCT() throws {
        let ramps = TestImages.make(width: 301, height: 203, format: .rgb8, smooth: true)
        let path = try progressive(ramps, subsampling: .s420, name: "420.jpg")
        let decoded = try ImageSource(path: path).makeReader(ReadOptions(scale: 8)).readAll()
        let expected = try libjpegEighth(path)
        #expect(TestImages.meanDifference(decoded, expected) <= 1)
        #expect(TestImages.maxDifference(decoded, expected) <= 6)
    }

    @Test func dcPathNeedsNoCoefficientBufferAndStreamsStrips() throws {
        let path = try progressive(TestImages.gradient(width: 1203, height: 805), subsampling: .s420, name: "big.jpg")
        let source = try ImageSource(path: path, budget: MemoryBudget(limit: 64_000))
        #expect(throws: TesseraError.self) { _ = try source.makeReader() }
        let reader = try source.makeReader(ReadOptions(scale: 8))
        var strip = reader.makeStrip()
        var rows = 0
        while try reader.read(into: &strip, maxRows: 7) {
            #expect(strip.y == rows)
            rows += strip.height
        }
        #expect(rows == 101)
        let sixteenth = try ImageSource(path: path).makeReader(ReadOptions(scale: 16)).readAll()
        #expect(sixteenth.size == Size(width: 76, height: 51))
    }

    @Test func regionAtOneEighthIsTheSameRectangleOfTheWholeEighth() throws {
        let path = try progressive(original, subsampling: .s420, name: "region.jpg")
        let source = try ImageSource(path: path)
        let whole = try source.makeReader(ReadOptions(scale: 8)).readAll()
        let region = try source.makeReader(ReadOptions(region: Rect(x: 80, y: 48, width: 160, height: 120), scale: 8))
            .readAll()
        #expect(TestImages.maxDifference(region, TestImages.crop(whole, Rect(x: 10, y: 6, width: 20, height: 15))) == 0)
    }

    @Test func scanIndexFindsEveryScanAndTheDCOnes() throws {
        let path = try progressive(original, subsampling: .s420, name: "scans.jpg")
        let index = try JPEGScanIndex(input: .file(path: path))
        #expect(index.scans.count == 10 && index.isComplete)
        let dc = index.scans.filter(\.isDC)
        #expect(dc.map(\.approximationHigh) == [0, 1] && dc.map(\.approximationLow) == [1, 0])
        #expect(try ImageSource(path: path).scanCount() == 10)
        let baseline = folder + "/baseline.jpg"
        try TestImages.write(original, to: baseline)
        #expect(try JPEGScanIndex(input: .file(path: baseline)).scans.count == 1)
        #expect(try ImageSource(path: baseline).scanCount() == nil, "a baseline file's properties stay a header read")
    }

    @Test func damagedFilesGiveTypedErrorsNeverACrash() throws {
        let path = try progressive(original, subsampling: .s420, name: "damaged.jpg")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var failures = 0
        TestImages.damagedCopies(of: bytes) { damaged, label in
            do {
                let image = try ImageSource(bytes: damaged, name: "damaged.jpg").makeReader(ReadOptions(scale: 8)).readAll()
                #expect(image.size == Size(width: 38, height: 26), "\(label)")
            } catch let error as TesseraError {
                #expect(error.description.hasPrefix("damaged.jpg: "), "\(label): \(error)")
                failures += 1
            } catch {
                Issue.record("\(label): untyped error \(error)")
            }
        }
        #expect(failures > 0)
    }
}
