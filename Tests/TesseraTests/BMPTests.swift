import Foundation
import Testing
@testable import Tessera

/// A BMP built byte by byte, for what Pillow cannot write: top-down rows, bitfields, 4-bit palettes, RLE,
/// OS/2 headers. Masks go after a 40-byte header and inside longer ones.
struct BMPBuilder {
    var width: Int
    /// Negative for top-down rows.
    var height: Int
    var bitsPerPixel: Int
    var compression = 0
    var headerSize = 40
    var masks: [Int] = []
    /// RGB colours.
    var palette: [[UInt8]] = []
    /// The pixel array as stored.
    var pixels: [UInt8] = []

    static func littleEndian(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    var bytes: [UInt8] {
        let fields: [(Int, Int)]
        if headerSize == 12 {
            fields = [(12, 4), (width, 2), (height, 2), (1, 2), (bitsPerPixel, 2)]
        } else {
            fields = [(headerSize, 4), (width, 4), (height, 4), (1, 2), (bitsPerPixel, 2), (compression, 4),
                      (pixels.count, 4), (2835, 4), (2835, 4), (palette.count, 4), (0, 4)]
        }
        var info: [UInt8] = fields.flatMap { Self.littleEndian($0.0, $0.1) }
        let maskBytes: [UInt8] = masks.flatMap { Self.littleEndian($0, 4) }
        if headerSize == 40 {
            info += maskBytes
        } else if headerSize > 40 {
            info += (maskBytes + [UInt8](repeating: 0, count: 84)).prefix(headerSize - 40)
        }
        var table: [UInt8] = []
        for colour in palette { table += [colour[2], colour[1], colour[0]] + (headerSize == 12 ? [] : [0]) }
        let offset = 14 + info.count + table.count
        var file: [UInt8] = [0x42, 0x4D] + Self.littleEndian(offset + pixels.count, 4)
        file += Self.littleEndian(0, 4) + Self.littleEndian(offset, 4)
        return file + info + table + pixels
    }

    /// `height` stored rows of random bytes, each padded to 4 bytes with zeros.
    static func randomRows(width: Int, height: Int, bitsPerPixel: Int, random: inout TestRandom) -> [UInt8] {
        let used = (width * bitsPerPixel + 7) / 8, stride = (used + 3) / 4 * 4
        return (0..<height).flatMap { _ in random.bytes(used) + [UInt8](repeating: 0, count: stride - used) }
    }

    /// RLE8 codes for rows of indices (in storage order): runs of 3 or more as runs, the rest as absolute
    /// stretches (single leftovers as runs of 1), each row closed by end-of-line, then end-of-bitmap.
    static func rle8(_ rows: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for row in rows {
            var x = 0
            func runLength(at start: Int) -> Int {
                var length = 1
                while start + length < row.count && length < 255 && row[start + length] == row[start] { length += 1 }
                return length
            }
            while x < row.count {
                let run = runLength(at: x)
                if run >= 3 || row.count - x < 3 {
                    out += [UInt8(run), row[x]]
                    x += run
                    continue
                }
                var end = x
                while end < row.count && end - x < 255 && runLength(at: end) < 3 { end += 1 }
                if end - x < 3 {
                    out += [1, row[x]]
                    x += 1
                    continue
                }
                out += [0, UInt8(end - x)] + row[x..<end] + ((end - x) % 2 == 1 ? [0] : [])
                x = end
            }
            out += [0, 0]
        }
        return out + [0, 1]
    }

    /// RLE4 codes for rows of 4-bit indices: the first 5 pixels of each row as an absolute stretch, the rest as
    /// runs alternating two indices, each row closed by end-of-line, then end-of-bitmap.
    static func rle4(_ rows: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for row in rows {
            var x = min(5, row.count)
            if x == 5 { out += [0, 5, row[0] << 4 | row[1], row[2] << 4 | row[3], row[4] << 4, 0] } else { x = 0 }
            while x < row.count {
                let first = row[x], second = x + 1 < row.count ? row[x + 1] : 0
                var length = 1
                while x + length < row.count && length < 255 && row[x + length] == (length % 2 == 0 ? first : second) {
                    length += 1
                }
                out += [UInt8(length), first << 4 | second]
                x += length
            }
            out += [0, 0]
        }
        return out + [0, 1]
    }
}

@Suite struct BMPTests {
    /// Files Pillow writes itself: it writes 1-bit, 8-bit gray and palette, 24-bit and 32-bit BI_RGB only.
    static let pillowScript = """
        rng = np.random.default_rng(1)
        def noise(*shape): return rng.integers(0, 256, size=shape, dtype=np.uint8)
        Image.fromarray(noise(23, 37) > 127).save(out + "/pillow-1bit.bmp")
        Image.fromarray(noise(23, 37)).save(out + "/pillow-gray8.bmp")
        palette = Image.frombytes("P", (300, 200), noise(200, 300).tobytes())
        palette.putpalette(noise(768).tobytes())
        palette.save(out + "/pillow-palette8.bmp")
        Image.fromarray(noise(200, 300, 3)).save(out + "/pillow-rgb24.bmp")
        Image.fromarray(noise(23, 37, 3)).save(out + "/pillow-rgb24-odd.bmp")
        Image.fromarray(noise(1, 1, 3)).save(out + "/pillow-1x1.bmp")
        Image.fromarray(noise(23, 37, 4)).save(out + "/pillow-rgba32.bmp")
        """

    /// Files built here, which Pillow then reads as the oracle.
    static let handBuilt: [String: [UInt8]] = {
        var random = TestRandom(seed: 42)
        let width = 37, height = 23
        func palette(_ count: Int) -> [[UInt8]] { (0..<count).map { _ in random.bytes(3) } }
        func rows(_ bits: Int, _ height: Int = height) -> [UInt8] {
            BMPBuilder.randomRows(width: width, height: height, bitsPerPixel: bits, random: &random)
        }
        // Indices with runs, so that RLE has runs and literal stretches to code.
        func runs(below bound: Int) -> [[UInt8]] {
            (0..<height).map { y in (0..<width).map { x in random.next() % 4 == 0 ? random.bytes(1, below: bound)[0] : UInt8((x / 6 + y) % bound) } }
        }
        let rle8Rows = runs(below: 256), rle4Rows = runs(below: 16)
        // Skips 3 right and 2 down in the middle of the second row; skipped pixels are index 0.
        let delta: [UInt8] = [4, 9, 0, 0, 2, 7, 0, 2, 3, 2, 2, 5, 0, 0, 0, 0, 0, 1]
        return [
            "topdown-24.bmp": BMPBuilder(width: width, height: -height, bitsPerPixel: 24, pixels: rows(24)).bytes,
            "topdown-8.bmp": BMPBuilder(width: width, height: -height, bitsPerPixel: 8, palette: palette(256),
                                        pixels: rows(8)).bytes,
            "bitfields-565.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 16, compression: 3,
                                            masks: [0xF800, 0x7E0, 0x1F], pixels: rows(16)).bytes,
            "bitfields-555.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 16, compression: 3,
                                            masks: [0x7C00, 0x3E0, 0x1F], pixels: rows(16)).bytes,
            "default-555.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 16, pixels: rows(16)).bytes,
            "bitfields-32-alpha-v5.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 32, compression: 3,
                                                    headerSize: 124, masks: [0xFF0000, 0xFF00, 0xFF, Int(0xFF00_0000)],
                                                    pixels: rows(32)).bytes,
            "bitfields-32-rgba-v4.bmp": BMPBuilder(width: width, height: -height, bitsPerPixel: 32, compression: 3,
                                                   headerSize: 108, masks: [0xFF, 0xFF00, 0xFF0000, Int(0xFF00_0000)],
                                                   pixels: rows(32)).bytes,
            "bitfields-32-zero-masks.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 32, compression: 3,
                                                      headerSize: 56, masks: [0, 0, 0, 0], pixels: rows(32)).bytes,
            "bgrx-32-v5.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 32, headerSize: 124,
                                         masks: [0xFF0000, 0xFF00, 0xFF, Int(0xFF00_0000)], pixels: rows(32)).bytes,
            "palette-4.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 4, palette: palette(16),
                                        pixels: rows(4)).bytes,
            "palette-1-colour.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 1, palette: palette(2),
                                               pixels: rows(1)).bytes,
            "os2-core-8.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 8, headerSize: 12,
                                         palette: palette(256), pixels: rows(8)).bytes,
            "os2-core-24.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 24, headerSize: 12,
                                          pixels: rows(24)).bytes,
            "rle8.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 8, compression: 1, palette: palette(256),
                                   pixels: BMPBuilder.rle8(rle8Rows)).bytes,
            "rle4.bmp": BMPBuilder(width: width, height: height, bitsPerPixel: 4, compression: 2, palette: palette(16),
                                   pixels: BMPBuilder.rle4(rle4Rows)).bytes,
            "rle8-delta.bmp": BMPBuilder(width: 9, height: 4, bitsPerPixel: 8, compression: 1, palette: palette(256),
                                         pixels: delta).bytes,
        ]
    }()

    static let folder = Result { try PillowOracle.fixtures(files: handBuilt, script: pillowScript) }

    static let pillowWritten = ["pillow-1bit.bmp", "pillow-gray8.bmp", "pillow-palette8.bmp", "pillow-rgb24.bmp",
                                "pillow-rgb24-odd.bmp", "pillow-1x1.bmp", "pillow-rgba32.bmp"]

    static func path(_ name: String) throws -> String { try folder.get().appendingPathComponent(name).path }

    @Test(arguments: pillowWritten)
    func pillowWrittenBMPsDecodeExactlyAsPillowDecodesThem(name: String) throws {
        try PillowOracle.expectSameAsPillow(Self.path(name))
    }

    @Test(arguments: handBuilt.keys.sorted())
    func handBuiltBMPsDecodeExactlyAsPillowDecodesThem(name: String) throws {
        try PillowOracle.expectSameAsPillow(Self.path(name))
    }

    @Test(arguments: ["pillow-rgb24-odd.bmp", "pillow-1bit.bmp", "palette-4.bmp", "topdown-24.bmp", "rle8.bmp",
                      "bitfields-565.bmp"])
    func regionReadsEqualTheSameRectangleOfAFullRead(name: String) throws {
        try expectRegionsMatchFullRead(Self.path(name))
    }

    @Test func propertiesDescribeTheStoredPixels() throws {
        let gray = try ImageSource(path: Self.path("pillow-gray8.bmp")).properties
        #expect(gray.format == .bmp && gray.size == Size(width: 37, height: 23))
        #expect(gray.channels == 1 && gray.bitDepth == 8 && gray.colorModel == .palette && !gray.hasAlpha)
        #expect(try ImageSource(path: Self.path("pillow-gray8.bmp")).makeReader().format == .gray8)
        let four = try ImageSource(path: Self.path("palette-4.bmp")).properties
        #expect(four.bitDepth == 4 && four.colorModel == .palette)
        let rgb565 = try ImageSource(path: Self.path("bitfields-565.bmp")).properties
        #expect(rgb565.channels == 3 && rgb565.bitDepth == 6 && rgb565.colorModel == .rgb && !rgb565.hasAlpha)
        let alpha = try ImageSource(path: Self.path("bitfields-32-alpha-v5.bmp")).properties
        #expect(alpha.channels == 4 && alpha.hasAlpha && alpha.bitDepth == 8)
        // The fourth byte of plain 32-bit pixels is padding, not alpha.
        #expect(try !ImageSource(path: Self.path("pillow-rgba32.bmp")).properties.hasAlpha)
        let file = try ImageSource(path: Self.path("pillow-rgb24.bmp")).properties
        #expect(file.fileSize == 54 + 300 * 200 * 3)
    }

    @Test func truncatedPixelsNameTheLastCompleteRow() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.path("topdown-24.bmp"))))
        // 37 pixels of 3 bytes pad to 112 bytes a row; keep 5 rows and half of the sixth.
        let cut = Array(bytes.prefix(54 + 5 * 112 + 56))
        let error = decodeError(cut, name: "cut.bmp") as? TesseraError
        #expect(error?.description == "cut.bmp: truncated after row 5 of 23")
        let rle = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.path("rle8.bmp"))))
        #expect(decodeError(Array(rle.dropLast(200)), name: "rle.bmp").map { "\($0)" }?
            .hasPrefix("rle.bmp: truncated after row ") == true)
    }

    @Test func allowPartialKeepsTheRowsPresentAndZeroesTheRest() throws {
        let path = try Self.path("pillow-rgb24-odd.bmp")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let full = try ImageSource(path: path).makeReader().readAll()
        // Bottom-up: the 10 rows kept are the bottom ones.
        let cut = try ImageSource(bytes: Array(bytes.prefix(54 + 10 * 112 + 7)))
        let partial = try cut.makeReader(ReadOptions(allowPartial: true)).readAll()
        let rowBytes = 37 * 3
        #expect(partial.bytes[..<(13 * rowBytes)].allSatisfy { $0 == 0 })
        #expect(partial.bytes[(13 * rowBytes)...] == full.bytes[(13 * rowBytes)...])
    }

    @Test func skippedRowsAreNeverRead() throws {
        // Bottom-up with the top 13 rows cut off: the bottom 10 read fine as long as the missing ones are skipped.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.path("pillow-rgb24-odd.bmp"))))
        let cut = try ImageSource(bytes: Array(bytes.prefix(54 + 10 * 112)))
        let bottom = try cut.makeReader(ReadOptions(region: Rect(x: 3, y: 13, width: 30, height: 10))).readAll()
        let full = try ImageSource(bytes: bytes).makeReader(ReadOptions(region: Rect(x: 3, y: 13, width: 30, height: 10)))
        #expect(try bottom.bytes == full.readAll().bytes)
    }

    @Test func rleIndicesAreCheckedAgainstTheBudget() throws {
        let small = MemoryBudget(limit: 37 * 23 - 1)
        let rle = try ImageSource(path: Self.path("rle8.bmp"), budget: small)
        #expect(throws: TesseraError.memoryLimit(path: rle.input.name, needed: 37 * 23, limit: small.limit,
                                                 purpose: "the RLE-compressed bitmap's indices")) {
            try rle.makeReader().readAll()
        }
        // Uncompressed rows stream, so the same budget is plenty.
        _ = try ImageSource(path: Self.path("topdown-8.bmp"), budget: small).makeReader().readAll()
    }

    @Test func absurdHeadersGiveErrorsNotTraps() {
        func header(width: Int, height: Int, bits: Int = 24, compression: Int = 0) -> [UInt8] {
            BMPBuilder(width: width, height: height, bitsPerPixel: bits, compression: compression,
                       palette: bits <= 8 ? [[0, 0, 0]] : [], pixels: [1, 2, 3, 4]).bytes
        }
        let cases: [[UInt8]] = [
            header(width: Int(Int32.max), height: Int(Int32.max)),
            header(width: Int(Int32.max), height: Int(Int32.min)),
            header(width: 1 << 20, height: 1 << 20, bits: 8, compression: 1),
            header(width: -5, height: 10), header(width: 0, height: 10), header(width: 10, height: 0),
            header(width: 10, height: 10, bits: 7), header(width: 10, height: 10, bits: 24, compression: 9),
            header(width: 10, height: 10, bits: 24, compression: 1),
            Array("BM".utf8),
        ]
        for bytes in cases {
            let error = decodeError(bytes)
            #expect(error is TesseraError, "\(String(describing: error))")
        }
        // Even a small region of a header this absurd is refused before anything is allocated.
        let huge = try? ImageSource(bytes: cases[0], name: "huge.bmp")
        #expect(throws: TesseraError.corrupt(path: "huge.bmp", detail: "the header claims 2147483647x2147483647 pixels "
                                             + "from only 58 bytes of data (a decompression bomb?)")) {
            try huge?.makeReader(ReadOptions(region: Rect(x: 5, y: 5, width: 4, height: 4))).readAll()
        }
    }

    @Test(arguments: ["pillow-rgb24-odd.bmp", "pillow-1bit.bmp", "rle8.bmp", "rle4.bmp", "bitfields-32-alpha-v5.bmp",
                      "os2-core-8.bmp"])
    func damagedBMPsGiveTesseraErrorsNeverTraps(name: String) throws {
        expectDamageGivesTesseraErrors(try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.path(name)))))
    }
}
