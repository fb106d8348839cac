import CCodecShims
import Foundation
import Testing
@testable import Tessera

/// The progressive entropy decoder against libjpeg's own coefficients (`jpeg_read_coefficients`), and the banded
/// decoder against libjpeg's one-shot decode, whole and in regions, over a budget that forces small bands.
@Suite final class BandedJPEGDecoderTests {
    let folder: String

    init() throws { folder = try TestImages.folder() }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func progressive(_ image: ImageBuffer, subsampling: EncodeOptions.Subsampling, name: String) throws -> String {
        try TestImages.writeProgressive(image, to: folder + "/" + name, subsampling: subsampling)
    }

    private var cases: [(ImageBuffer, EncodeOptions.Subsampling, String)] {
        [(TestImages.make(width: 301, height: 203, format: .rgb8), .s444, "444.jpg"),
         (TestImages.make(width: 301, height: 203, format: .rgb8, seed: 3), .s420, "420.jpg"),
         (TestImages.make(width: 301, height: 203, format: .gray8), .s444, "gray.jpg")]
    }

    @Test func everyCoefficientEqualsLibjpegsDecodedThreeRowsAtATime() throws {
        for (image, subsampling, name) in cases {
            let path = try progressive(image, subsampling: subsampling, name: name)
            let index = try JPEGScanIndex(input: .file(path: path))
            let frame = index.frame
            let decoder = try ProgressiveCoefficientDecoder(index: index, input: .file(path: path), allowPartial: false)
            let window = CoefficientWindow(frame: frame, capacity: 3)
            let session = try JPEGSession(input: .file(path: path))
            try session.check(tessera_jpeg_read_coefficients(session.decoder), during: "reading coefficients")
            var mismatches = 0
            for first in stride(from: 0, to: frame.mcusDown, by: 3) {
                let end = min(first + 3, frame.mcusDown)
                window.slide(to: first, end: end)
                try decoder.decode(through: end, into: window)
                for (component, info) in frame.components.enumerated() {
                    for row in first * info.vertical..<min(end * info.vertical, info.blocksDown) {
                        let expected = try #require(tessera_jpeg_decoder_block_row(session.decoder, Int32(component),
                                                                                   JDIMENSION(row)))
                        let got = window.blockRow(component: component, row: row)
                        UnsafeRawPointer(expected).withMemoryRebound(to: Int16.self, capacity: info.blocksAcross * 64) { libjpeg in
                            for index in 0..<info.blocksAcross * 64 where got[index] != libjpeg[index] { mismatches += 1 }
                        }
                    }
                }
            }
            #expect(mismatches == 0, "\(name)")
        }
    }

    @Test func bandedDecodeEqualsLibjpegsWholeAndInRegions() throws {
        for (image, subsampling, name) in cases {
            let path = try progressive(image, subsampling: subsampling, name: name)
            let whole = try TestImages.read(path)
            // Bands of one MCU row (a quarter of the budget holds three), under the whole image's coefficients.
            let frame = try JPEGScanIndex(input: .file(path: path)).frame
            let budget = MemoryBudget(limit: 12 * CoefficientWindow.bytesPerMCURow(frame))
            let source = try ImageSource(path: path, budget: budget)
            #expect(throws: TesseraError.self, "\(name): libjpeg's whole-image buffer fits") {
                _ = try JPEGDecoder(input: .file(path: path), properties: source.properties,
                                    request: DecodeRequest(scale: 1, page: 0, budget: budget, allowPartial: false))
            }
            let reader = try source.makeReader()
            let banded = try reader.readAll()
            #expect(TestImages.maxDifference(banded, whole) == 0, "\(name)")
            let region = Rect(x: 13, y: 17, width: 61, height: 23)
            let part = try source.makeReader(ReadOptions(region: region)).readAll()
            #expect(TestImages.maxDifference(part, TestImages.crop(whole, region)) == 0, "\(name)")
        }
    }
}
