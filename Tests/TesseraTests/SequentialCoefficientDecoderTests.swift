import CCodecShims
import Foundation
import Testing
@testable import Tessera

/// Tessera's sequential entropy decoder against libjpeg's own coefficients (`jpeg_read_coefficients`), on files
/// cjpeg writes with every sampling, odd sizes, optimised Huffman tables and restart intervals; and resumed from
/// states saved on the way, into windows of a few rows and columns.
@Suite(.enabled(if: TestImages.run("cjpeg", ["-version"]) != nil, "needs libjpeg-turbo's cjpeg"))
final class SequentialCoefficientDecoderTests {
    let folder: String

    init() throws { folder = try TestImages.folder() }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// cjpeg's arguments for each case, with the image's size.
    static let cases: [(name: String, width: Int, height: Int, arguments: [String])] = [
        ("gray", 301, 203, ["-grayscale"]),
        ("444", 301, 203, ["-sample", "1x1"]),
        ("422", 301, 203, ["-sample", "2x1"]),
        ("420", 301, 203, ["-sample", "2x2"]),
        ("411", 301, 203, ["-sample", "4x1"]),
        ("440", 299, 205, ["-sample", "1x2"]),
        ("tiny420", 17, 9, ["-sample", "2x2"]),
        ("optimized", 301, 203, ["-sample", "2x2", "-optimize"]),
        ("restart-rows", 301, 203, ["-sample", "2x2", "-restart", "1"]),
        ("restart-blocks", 301, 203, ["-sample", "2x1", "-restart", "5B", "-optimize"]),
        ("gray-restart", 301, 203, ["-grayscale", "-restart", "7B"]),
    ]

    /// Writes a test photograph with cjpeg at quality 85 and `arguments`; returns its path.
    static func cjpeg(_ name: String, width: Int, height: Int, arguments: [String], in folder: String) throws -> String {
        let image = TestImages.make(width: width, height: height, format: .rgb8, seed: UInt32(width + height))
        let ppm = folder + "/\(name).ppm", path = folder + "/\(name).jpg"
        var bytes = Array("P6\n\(width) \(height)\n255\n".utf8)
        bytes += image.bytes
        try Data(bytes).write(to: URL(fileURLWithPath: ppm))
        #expect(TestImages.run("cjpeg", ["-quality", "85"] + arguments + ["-outfile", path, ppm]) == 0)
        return path
    }

    /// The number of coefficients of `window`'s rows and columns that differ from libjpeg's.
    static func mismatches(_ window: CoefficientWindow, path: String) throws -> Int {
        let session = try JPEGSession(input: .file(path: path))
        try session.check(tessera_jpeg_read_coefficients(session.decoder), during: "reading coefficients")
        let frame = window.frame
        var mismatches = 0
        for (component, info) in frame.components.enumerated() {
            let columnBlocks = window.columns.lowerBound * info.horizontal
                ..< min(window.columns.upperBound * info.horizontal, info.blocksAcross)
            for row in window.firstRow * info.vertical..<min(window.endRow * info.vertical, info.blocksDown) {
                let expected = try #require(tessera_jpeg_decoder_block_row(session.decoder, Int32(component), JDIMENSION(row)))
                let got = window.blockRow(component: component, row: row)
                UnsafeRawPointer(expected).withMemoryRebound(to: Int16.self, capacity: info.blocksAcross * 64) { libjpeg in
                    for block in columnBlocks {
                        for index in 0..<64 where got[(block - columnBlocks.lowerBound) * 64 + index]
                            != libjpeg[block * 64 + index] { mismatches += 1 }
                    }
                }
            }
        }
        return mismatches
    }

    @Test func everyCoefficientEqualsLibjpegs() throws {
        for test in Self.cases {
            let path = try Self.cjpeg(test.name, width: test.width, height: test.height, arguments: test.arguments,
                                      in: folder)
            let index = try JPEGScanIndex(input: .file(path: path))
            #expect(SequentialCoefficientDecoder.canDecode(index), "\(test.name)")
            let decoder = try SequentialCoefficientDecoder(index: index, input: .file(path: path))
            let window = CoefficientWindow(frame: index.frame, capacity: index.frame.mcusDown)
            window.slide(to: 0, end: index.frame.mcusDown)
            try decoder.decode(through: decoder.mcuCount, into: window)
            #expect(try Self.mismatches(window, path: path) == 0, "\(test.name)")
        }
    }

    @Test func resumedFromSavedStatesIntoAWindowEqualsLibjpegs() throws {
        for test in Self.cases {
            let path = try Self.cjpeg(test.name, width: test.width, height: test.height, arguments: test.arguments,
                                      in: folder)
            let index = try JPEGScanIndex(input: .file(path: path))
            let frame = index.frame, every = 3
            let decoder = try SequentialCoefficientDecoder(index: index, input: .file(path: path))
            var states: [JPEGScanState.Resumable] = []
            try decoder.record(through: decoder.mcuCount, every: every, into: &states)
            let perRow = (frame.mcusAcross + every - 1) / every
            #expect(states.count == perRow * frame.mcusDown, "\(test.name)")
            // Two MCU rows and a few columns from the middle, each row resumed from its nearest saved state.
            let rows = frame.mcusDown / 2..<min(frame.mcusDown / 2 + 2, frame.mcusDown)
            let columns = frame.mcusAcross / 3..<min(frame.mcusAcross / 3 + 4, frame.mcusAcross)
            let window = CoefficientWindow(frame: frame, capacity: rows.count, columns: columns)
            window.slide(to: rows.lowerBound, end: rows.upperBound)
            for row in rows {
                let saved = columns.lowerBound / every
                decoder.resume(at: states[row * perRow + saved], position: row * frame.mcusAcross + saved * every)
                try decoder.decode(through: row * frame.mcusAcross + columns.upperBound, into: window)
            }
            #expect(try Self.mismatches(window, path: path) == 0, "\(test.name)")
        }
    }

    /// A file cut inside an MCU row's data fails as truncated in that row, and the decode stops at the row's end
    /// rather than going on through the rest of the image as zeros.
    @Test func aFileCutShortFailsInTheRowItsDataEnds() throws {
        let path = try Self.cjpeg("cut", width: 301, height: 203, arguments: ["-sample", "2x2"], in: folder)
        let index = try JPEGScanIndex(input: .file(path: path))
        let across = index.frame.mcusAcross, down = index.frame.mcusDown
        var rowStarts: [JPEGScanState.Resumable] = []
        try SequentialCoefficientDecoder(index: index, input: .file(path: path))
            .record(through: across * down, every: across, into: &rowStarts)
        let row = down / 2, bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let cut = (rowStarts[row].reader.offset + rowStarts[row + 1].reader.offset) / 2
        let decoder = try SequentialCoefficientDecoder(index: index,
                                                       input: .bytes(Array(bytes[..<cut]), name: "cut.jpg"))
        let window = CoefficientWindow(frame: index.frame, capacity: down)
        window.slide(to: 0, end: down)
        #expect(throws: TesseraError.truncated(path: "cut.jpg", detail: "in MCU row \(row) of \(down)")) {
            try decoder.decode(through: across * down, into: window)
        }
        #expect(decoder.position == (row + 1) * across)
    }
}
