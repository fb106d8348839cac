import Foundation
import Testing
@testable import Tessera

@Suite final class JPEGTests {
    let folder: String
    let path: String
    let original = TestImages.gradient(width: 301, height: 203)

    init() throws {
        folder = try TestImages.folder()
        path = folder + "/photo.jpg"
        var options = EncodeOptions()
        options.quality = 95
        try TestImages.write(original, to: path, options: options)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    @Test func roundTripStaysCloseToTheSource() throws {
        let source = try ImageSource(path: path)
        #expect(source.properties.format == .jpeg)
        #expect(source.properties.size == Size(width: 301, height: 203))
        #expect(source.properties.colorModel == .rgb && !source.properties.isProgressive)
        let decoded = try source.makeReader().readAll()
        #expect(TestImages.maxDifference(decoded, original) <= 12)
    }

    @Test func regionReadEqualsTheSameRectangleOfAFullRead() throws {
        let source = try ImageSource(path: path)
        let full = try source.makeReader().readAll()
        for rect in [Rect(x: 0, y: 0, width: 1, height: 1), Rect(x: 77, y: 33, width: 100, height: 90),
                     Rect(x: 300, y: 202, width: 1, height: 1), Rect(x: 16, y: 100, width: 285, height: 103)] {
            let region = try source.makeReader(ReadOptions(region: rect)).readAll()
            #expect(TestImages.maxDifference(region, TestImages.crop(full, rect)) == 0, "\(rect)")
        }
    }

    @Test func reducedScaleReadsUseCeilingSizes() throws {
        let source = try ImageSource(path: path)
        for (scale, size) in [(2, Size(width: 151, height: 102)), (4, Size(width: 76, height: 51)),
                              (8, Size(width: 38, height: 26)), (16, Size(width: 19, height: 13))] {
            let reader = try source.makeReader(ReadOptions(scale: scale))
            #expect(reader.size == size)
            #expect(try reader.readAll().size == size)
        }
    }

    @Test func stripsComeTopToBottomInAReusedBuffer() throws {
        let reader = try ImageSource(path: path).makeReader()
        var strip = reader.makeStrip()
        var expectedY = 0
        while try reader.read(into: &strip, maxRows: 16) {
            #expect(strip.y == expectedY)
            #expect(strip.pixels.rowCapacity <= 16)
            expectedY += strip.height
        }
        #expect(expectedY == 203)
    }

    @Test func progressiveJPEGOverTheBudgetFailsWithTheNeed() throws {
        let progressive = folder + "/progressive.jpg"
        var options = EncodeOptions()
        options.progressive = true
        try TestImages.write(original, to: progressive, options: options)
        let source = try ImageSource(path: progressive, budget: MemoryBudget(limit: 10_000))
        #expect(source.properties.isProgressive)
        #expect(throws: TesseraError.self) { try source.makeReader() }
        let decoded = try ImageSource(path: progressive).makeReader().readAll()
        #expect(TestImages.maxDifference(decoded, original) <= 12)
    }

    @Test func truncatedFileIsAnErrorUnlessPartialIsAsked() throws {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let cut = Array(data.prefix(data.count / 2))
        let source = try ImageSource(bytes: cut, name: "cut.jpg")
        #expect {
            _ = try source.makeReader().readAll()
        } throws: { error in
            (error as? TesseraError)?.description.hasPrefix("cut.jpg: truncated before row") == true
        }
        let partial = try source.makeReader(ReadOptions(allowPartial: true)).readAll()
        #expect(partial.size == original.size)
    }

    @Test func unfinishedEncoderLeavesNoFileBehind() throws {
        let target = folder + "/unfinished.jpg"
        do {
            let (encoder, format) = try ImageWriter.makeEncoder(path: target, size: Size(width: 8, height: 8),
                                                                pixelFormat: .rgb8)
            var strip = Strip(width: 8, format: format)
            strip.prepare(y: 0, rows: 4, width: 8, format: format)
            try encoder.write(strip)
            #expect(throws: TesseraError.self) { try encoder.finish() }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["photo.jpg"])
    }

    /// An encode to memory abandoned part way, its output already past libjpeg's first buffer (which its memory
    /// destination swaps for a larger one, freeing the first), is the reader's error: the encoder frees the buffer
    /// it holds, not the one freed before (a double free, measured to abort the process).
    @Test func anEncodeToMemoryAbandonedPartWayIsTheReadersError() throws {
        var options = EncodeOptions()
        options.quality = 95
        let source = try ImageWriter.encode(TestImages.make(width: 512, height: 512, format: .rgb8), as: .jpeg,
                                            options: options)
        let cut = Array(source.prefix(source.count * 3 / 5))
        #expect(throws: TesseraError.self) {
            try ImageWriter.encode(try ImageSource(bytes: cut, name: "cut.jpg").makeReader(), as: .jpeg)
        }
    }
}
