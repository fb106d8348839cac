import Foundation
import Testing
@testable import Tessera

/// A one-frame GIF built byte by byte from palette indices, for LZW streams no encoder writes: every index is
/// sent as its own code, clears only where asked, an end code or not, codes appended as given.
struct GIFBuilder {
    var width: Int
    var height: Int
    var palette: [[UInt8]]
    var indices: [UInt8]
    var minimumCodeSize = 8
    /// Codes between clear codes; nil sends one clear at the start and lets the table fill up (deferred clear).
    var clearEvery: Int? = 250
    var startWithClear = true
    var endCode = true
    /// Raw codes sent after the indices (before the end code), to test invalid streams.
    var extraCodes: [Int] = []

    var bytes: [UInt8] {
        let le = BMPBuilder.littleEndian
        let clear = 1 << minimumCodeSize
        var codes: [Int] = startWithClear ? [clear] : []
        var sinceClear = 0
        for index in indices {
            if let clearEvery, sinceClear == clearEvery {
                codes.append(clear)
                sinceClear = 0
            }
            codes.append(Int(index))
            sinceClear += 1
        }
        codes += extraCodes
        if endCode { codes.append(clear + 1) }
        // Code widths follow the decoder's table: one entry per code after the first since a clear.
        var bits: [Bool] = [], next = clear + 2, first = true
        for code in codes {
            let size = min(12, max(minimumCodeSize + 1, Int.bitWidth - next.leadingZeroBitCount))
            bits += (0..<size).map { code >> $0 & 1 == 1 }
            if code == clear {
                next = clear + 2
                first = true
            } else if first {
                first = false
            } else if next < 4096 {
                next += 1
            }
        }
        let data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            (0..<8).reduce(0) { byte, bit in start + bit < bits.count && bits[start + bit] ? byte | 1 << bit : byte }
        }
        let tableBits = max(1, Int.bitWidth - (palette.count - 1).leadingZeroBitCount)
        var file = Array("GIF89a".utf8) + le(width, 2) + le(height, 2) + [0x80 | UInt8(tableBits - 1), 0, 0]
        file += palette.flatMap { $0 } + [UInt8](repeating: 0, count: 3 * ((1 << tableBits) - palette.count))
        file += [0x2C] + le(0, 4) + le(width, 2) + le(height, 2) + [0, UInt8(minimumCodeSize)]
        for start in stride(from: 0, to: data.count, by: 255) {
            let block = data[start..<min(data.count, start + 255)]
            file += [UInt8(block.count)] + block
        }
        return file + [0, 0x3B]
    }

    /// The RGB pixels the indices stand for.
    var expectedPixels: [UInt8] { indices.flatMap { palette[Int($0)] } }
}

@Suite struct GIFTests {
    static let pillowScript = """
        import struct
        rng = np.random.default_rng(2)
        def paletted(h, w, n=256):
            im = Image.frombytes("P", (w, h), rng.integers(0, n, size=(h, w), dtype=np.uint8).tobytes())
            im.putpalette(rng.integers(0, 256, size=3 * n, dtype=np.uint8).tobytes())
            return im
        paletted(200, 300).save(out + "/plain.gif", interlace=False)
        paletted(200, 300).save(out + "/interlaced.gif", interlace=True)
        paletted(23, 37, 16).save(out + "/transparent.gif", transparency=3, interlace=False)
        paletted(23, 37, 128).save(out + "/small.gif", interlace=False)
        paletted(40, 37, 16).save(out + "/transparent-interlaced.gif", transparency=5, interlace=True)
        Image.fromarray(rng.integers(0, 256, size=(23, 37), dtype=np.uint8)).save(out + "/gray.gif")
        paletted(1, 1, 2).save(out + "/1x1.gif")
        frames = [paletted(23, 37, 64) for _ in range(3)]
        frames[0].save(out + "/animated.gif", save_all=True, append_images=frames[1:], interlace=False)

        # Rewrites a Pillow GIF: another logical screen, the first frame moved, its colours as a local table.
        def patch(source, target, screen=None, origin=None, local=False):
            d = bytearray(open(out + "/" + source, "rb").read())
            flags = d[10]
            size = 3 << ((flags & 7) + 1) if flags & 0x80 else 0
            table = d[13:13 + size]
            if screen: d[6:10] = struct.pack("<HH", *screen)
            pos = 13 + size
            while d[pos] == 0x21:
                pos += 2
                while d[pos]: pos += d[pos] + 1
                pos += 1
            if origin: d[pos + 1:pos + 5] = struct.pack("<HH", *origin)
            if local:
                d[pos + 9] |= 0x80 | (flags & 7)
                d[10] &= 0x7F
                d = d[:pos + 10] + table + d[pos + 10:]
                d = d[:13] + d[13 + size:]
            open(out + "/" + target, "wb").write(d)
        patch("transparent.gif", "local-table.gif", local=True)
        patch("small.gif", "local-table-offset.gif", screen=(45, 30), origin=(6, 4), local=True)
        patch("plain.gif", "frame-inside-screen.gif", screen=(307, 211), origin=(4, 3))
        patch("transparent.gif", "transparent-frame-inside-screen.gif", screen=(50, 30), origin=(5, 2))
        patch("interlaced.gif", "interlaced-offset.gif", screen=(305, 204), origin=(2, 4))
        patch("plain.gif", "frame-beyond-zero-screen.gif", screen=(0, 0), origin=(3, 2))
        """

    static let folder = Result { try PillowOracle.fixtures(files: [:], script: pillowScript) }

    static let pillowFiles = ["plain.gif", "small.gif", "interlaced.gif", "transparent.gif", "transparent-interlaced.gif",
                              "gray.gif", "1x1.gif", "animated.gif", "local-table.gif", "local-table-offset.gif",
                              "frame-inside-screen.gif", "transparent-frame-inside-screen.gif",
                              "interlaced-offset.gif"]

    static func path(_ name: String) throws -> String { try folder.get().appendingPathComponent(name).path }
    static func contents(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: path(name))))
    }

    @Test(arguments: pillowFiles)
    func firstFramesDecodeExactlyAsPillowDecodesThem(name: String) throws {
        try PillowOracle.expectSameAsPillow(Self.path(name))
    }

    @Test func aFrameBeyondTheScreenGrowsTheImageAsInPillow() throws {
        let path = try Self.path("frame-beyond-zero-screen.gif")
        #expect(try ImageSource(path: path).properties.size == Size(width: 303, height: 202))
        try PillowOracle.expectSameAsPillow(path)
    }

    @Test(arguments: ["plain.gif", "interlaced.gif", "transparent-frame-inside-screen.gif", "interlaced-offset.gif"])
    func regionReadsEqualTheSameRectangleOfAFullRead(name: String) throws {
        try expectRegionsMatchFullRead(Self.path(name))
    }

    @Test func propertiesDescribeTheFirstFrame() throws {
        let plain = try ImageSource(path: Self.path("plain.gif")).properties
        #expect(plain.format == .gif && plain.size == Size(width: 300, height: 200) && plain.channels == 1)
        #expect(plain.colorModel == .palette && plain.bitDepth == 8 && !plain.hasAlpha && !plain.isProgressive)
        #expect(plain.pageCount == 1)
        #expect(try ImageSource(path: Self.path("interlaced.gif")).properties.isProgressive)
        let transparent = try ImageSource(path: Self.path("transparent.gif"))
        #expect(transparent.properties.hasAlpha && transparent.properties.bitDepth == 4)
        #expect(try transparent.makeReader().format == .rgba8)
        #expect(try ImageSource(path: Self.path("animated.gif")).properties.pageCount == 3)
        let later = Result { try ImageSource(path: Self.path("animated.gif")).makeReader(ReadOptions(page: 1)) }
        #expect(throws: TesseraError.self) { try later.get() }
    }

    @Test func streamsWithoutLeadingClearOrWithAFullTableDecode() throws {
        var random = TestRandom(seed: 9)
        let palette = (0..<256).map { _ in random.bytes(3) }
        // 6,000 codes with one clear: the table fills at 4,096 entries and 12-bit codes continue.
        for builder in [GIFBuilder(width: 100, height: 60, palette: palette, indices: random.bytes(6000), clearEvery: nil),
                        GIFBuilder(width: 30, height: 20, palette: palette, indices: random.bytes(600),
                                   startWithClear: false),
                        GIFBuilder(width: 30, height: 20, palette: Array(palette.prefix(4)),
                                   indices: random.bytes(600, below: 4), minimumCodeSize: 2, endCode: false)] {
            let image = try ImageSource(bytes: builder.bytes).makeReader().readAll()
            #expect(image.bytes == builder.expectedPixels)
        }
    }

    @Test func invalidLZWStreamsGiveErrors() throws {
        var random = TestRandom(seed: 10)
        let palette = (0..<4).map { _ in random.bytes(3) }
        let indices = random.bytes(200, below: 4)
        func build(_ change: (inout GIFBuilder) -> Void) -> [UInt8] {
            var builder = GIFBuilder(width: 20, height: 10, palette: palette, indices: indices, minimumCodeSize: 2)
            change(&builder)
            return builder.bytes
        }
        // The table holds 4 roots, clear, end and one entry per code since: code 60 cannot be defined yet.
        let beyond = build { $0.indices = Array(indices.prefix(45)); $0.extraCodes = [60] }
        #expect(decodeError(beyond, name: "beyond.gif").map { "\($0)" }?
            .hasPrefix("beyond.gif: corrupt data: LZW code 60 beyond the table after row 2 of 10") == true)
        let early = build { $0.indices = Array(indices.prefix(95)) }
        #expect(decodeError(early, name: "early.gif").map { "\($0)" }
            == "early.gif: truncated after row 4 of 10 (the image data ends early)")
        var oversize = build { _ in }
        oversize[13 + 12 + 10] = 12
        #expect(decodeError(oversize, name: "size.gif").map { "\($0)" } == "size.gif: corrupt data: LZW minimum code size 12")
        // With allowPartial the rows decoded are kept and the rest is zero.
        let partial = try ImageSource(bytes: early).makeReader(ReadOptions(allowPartial: true)).readAll()
        #expect(Array(partial.bytes.prefix(80 * 3)) == Array(indices.prefix(80).flatMap { palette[Int($0)] }))
        #expect(partial.bytes[(80 * 3)...].allSatisfy { $0 == 0 })
    }

    @Test func onlyInterlacedFramesAreBufferedAndThenWithinTheBudget() throws {
        let small = MemoryBudget(limit: 300 * 200 - 1)
        let interlaced = try ImageSource(path: Self.path("interlaced.gif"), budget: small)
        #expect(throws: TesseraError.memoryLimit(path: interlaced.input.name, needed: 300 * 200, limit: small.limit,
                                                 purpose: "the interlaced GIF frame's indices")) {
            try interlaced.makeReader().readAll()
        }
        // Non-interlaced rows stream as LZW decodes them, so the same budget is plenty.
        _ = try ImageSource(path: Self.path("plain.gif"), budget: small).makeReader().readAll()
    }

    @Test func truncatedFilesNameTheLastCompleteRow() throws {
        let plain = try Self.contents("plain.gif")
        let error = decodeError(Array(plain.prefix(plain.count / 2)), name: "half.gif")
        #expect(error.map { "\($0)" }?.hasPrefix("half.gif: truncated after row ") == true)
        #expect(error.map { "\($0)" }?.hasSuffix(" of 200") == true)
        let interlaced = try Self.contents("interlaced.gif")
        #expect(decodeError(Array(interlaced.prefix(interlaced.count / 2)), name: "i.gif").map { "\($0)" }?
            .hasPrefix("i.gif: truncated after ") == true)
        // Half the data holds the first two passes (every 4th row) and part of the third: those rows are kept.
        let partial = try ImageSource(bytes: Array(interlaced.prefix(interlaced.count / 2)))
            .makeReader(ReadOptions(allowPartial: true)).readAll()
        let full = try ImageSource(bytes: interlaced).makeReader().readAll()
        for y in [0, 4, 8, 196] {
            #expect(partial.bytes[partial.offset(ofRow: y)..<partial.offset(ofRow: y + 1)]
                == full.bytes[full.offset(ofRow: y)..<full.offset(ofRow: y + 1)])
        }
        #expect(partial.bytes[partial.offset(ofRow: 199)..<partial.offset(ofRow: 200)].allSatisfy { $0 == 0 })
    }

    @Test func absurdHeadersGiveErrorsNotTraps() {
        let palette: [[UInt8]] = [[0, 0, 0], [255, 255, 255]]
        var huge = GIFBuilder(width: 65535, height: 65535, palette: palette, indices: [0, 1, 1, 0]).bytes
        huge.replaceSubrange(19..<29, with: [0x2C] + BMPBuilder.littleEndian(0, 4) + [0xFF, 0xFF, 0xFF, 0xFF, 0x40])
        for bytes in [huge, GIFBuilder(width: 0, height: 0, palette: palette, indices: []).bytes,
                      Array("GIF89a".utf8), Array("GIF89a".utf8) + [1, 0, 1, 0, 0x87, 0, 0]] {
            let error = decodeError(bytes)
            #expect(error is TesseraError, "\(String(describing: error))")
        }
    }

    @Test(arguments: ["transparent.gif", "transparent-interlaced.gif", "local-table-offset.gif", "animated.gif"])
    func damagedGIFsGiveTesseraErrorsNeverTraps(name: String) throws {
        expectDamageGivesTesseraErrors(try Self.contents(name))
    }
}
