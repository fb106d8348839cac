import Foundation
import Testing
@testable import Tessera

/// JPEG 2000 detection by content, properties read from the boxes and main header, and damaged files giving
/// `TesseraError`s. Pixels against opj_decompress are in Tests/peers/test_jpeg2000.py.
struct JPEG2000Tests {
    /// The conformance files the peer tests keep (see Tests/peers/data/README.md).
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("peers/data/jpeg2000").path

    @Test func detectsJP2AndCodestreamsByContent() {
        let jp2: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0, 0, 0x14]
        #expect(ImageFormat.detect(jp2) == .jpeg2000)
        #expect(ImageFormat.detect([0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x2F]) == .jpeg2000)
        #expect(ImageFormat.detect([0xFF, 0x4F, 0xFF, 0x52]) == nil)
        #expect(ImageFormat.detect(Array(jp2.prefix(8))) == nil)
    }

    @Test func readsATiledCodestreamsStructure() throws {
        let properties = try ImageSource(path: "\(Self.data)/p1_06.j2k").properties
        #expect(properties.format == .jpeg2000 && properties.size == Size(width: 12, height: 12))
        #expect(properties.colorModel == .rgb && properties.bitDepth == 8 && !properties.hasAlpha)
        let codestream = try #require(properties.jpeg2000)
        #expect(codestream.container == "codestream" && codestream.components == 3)
        #expect(codestream.tileSize == Size(width: 3, height: 3) && codestream.tileColumns == 4 && codestream.isTiled)
        #expect(codestream.resolutionLevels == 5 && properties.levels.count == 5)
        #expect(codestream.progressionOrder == "PCRL" && !codestream.isHighThroughput)
        #expect(JPEG2000Decoder.nativeScales(for: properties) == [1, 2, 4, 8, 16])
    }

    @Test func readsJP2BoxesPaletteSYCCAndICC() throws {
        let palette = try ImageSource(path: "\(Self.data)/file9.jp2").properties
        #expect(palette.colorModel == .palette && palette.channels == 1 && palette.jpeg2000?.container == "JP2")
        let sycc = try ImageSource(path: "\(Self.data)/file3.jp2").properties
        #expect(sycc.jpeg2000?.colorSpace == "sYCC" && sycc.colorModel == .rgb)
        let icc = try ImageSource(path: "\(Self.data)/file8.jp2").properties
        #expect(icc.hasICCProfile && icc.jpeg2000?.colorSpace == "ICC" && icc.colorModel == .gray)
        let deep = try ImageSource(path: "\(Self.data)/p0_06.j2k").properties
        #expect(deep.bitDepth == 12 && deep.hasAlpha && deep.jpeg2000?.precision == 12)
    }

    @Test func readsAtAReductionAndARegion() throws {
        let path = "\(Self.data)/a1_mono.j2c"
        let full = try TestImages.read(path)
        let half = try TestImages.read(path, ReadOptions(scale: 2))
        #expect(half.size == reducedSize(full.size, by: 2) && half.format == .gray8)
        let region = try TestImages.read(path, ReadOptions(region: Rect(x: 30, y: 20, width: 100, height: 60)))
        #expect(TestImages.maxDifference(region, TestImages.crop(full, Rect(x: 30, y: 20, width: 100, height: 60))) == 0)
    }

    @Test func failsOverTheBudgetWithAMessage() throws {
        let source = try ImageSource(path: "\(Self.data)/file4.jp2", budget: MemoryBudget(limit: 4096))
        #expect(throws: TesseraError.self) { _ = try source.makeReader().readAll(budget: .default) }
    }

    @Test func damagedFilesGiveTesseraErrors() throws {
        for name in ["p1_06.j2k", "file9.jp2"] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(Self.data)/\(name)")))
            TestImages.damagedCopies(of: bytes) { damaged, label in
                do {
                    let source = try ImageSource(bytes: damaged, name: name)
                    _ = try source.makeReader().readAll(budget: .default, name: name)
                } catch let error as TesseraError {
                    #expect("\(error)".hasPrefix(name) && !"\(error)".contains("\n"), "\(label): \(error)")
                } catch {
                    Issue.record("\(label): \(error) is not a TesseraError")
                }
            }
        }
    }

    @Test func writesLosslessTiledJP2sThatReadBackExactly() throws {
        let folder = try TestImages.folder()
        for format in [PixelFormat.gray8, .rgb8, PixelFormat(.rgba, bitDepth: 16)] {
            let image = TestImages.make(width: 333, height: 270, format: format, smooth: true)
            let path = "\(folder)/written.jp2"
            var options = EncodeOptions()
            options.lossless = true
            options.tileSize = 128
            try ImageWriter.write(BufferReader(image), to: path, options: options)
            let source = try ImageSource(path: path)
            #expect(source.properties.jpeg2000?.tileSize == Size(width: 128, height: 128))
            #expect(source.properties.jpeg2000?.isReversible == true)
            let back = try source.makeReader().readAll()
            #expect(back.format == format && TestImages.maxDifference(back, image) == 0, "\(format)")
        }
    }

    /// Reads through a `DecodedTileCache` (whole tiles decoded once, at each reduction) give the pixels of reads
    /// that decode only their area: a written tiled JP2, a subsampled tiled conformance file, every reduction,
    /// regions across tile edges, twice (the second from the cache); and p1_06 at full size and 1/2, whose tiles
    /// (PPT markers) OpenJPEG cannot decode twice through one decompressor, read as areas instead.
    @Test func readsFromCachedWholeTilesEqualAreaReads() throws {
        let folder = try TestImages.folder()
        let written = "\(folder)/tiled.jp2"
        var options = EncodeOptions()
        options.tileSize = 128
        try ImageWriter.write(BufferReader(TestImages.make(width: 333, height: 270, format: .rgb8, smooth: true)),
                              to: written, options: options)
        let cache = DecodedTileCache(byteLimit: 1 << 20)
        for path in [written, "\(Self.data)/p0_09.j2k", "\(Self.data)/p1_06.j2k"] {
            let source = try ImageSource(path: path)
            for scale in JPEG2000Decoder.nativeScales(for: source.properties) where !path.hasSuffix("p1_06.j2k") || scale <= 2 {
                let full = Rect(source.properties.size)
                let part = Rect(x: full.width / 3, y: full.height / 4, width: full.width / 2, height: full.height / 2)
                let regions = path.hasSuffix("p1_06.j2k") ? [full] : [full, part].filter { $0.width >= 4 * scale }
                for region in regions {
                    let expected = try source.makeReader(ReadOptions(region: region, scale: scale)).readAll()
                    for pass in 1...2 {
                        let cached = try source.makeReader(ReadOptions(region: region, scale: scale, tileCache: cache))
                            .readAll()
                        #expect(TestImages.maxDifference(cached, expected) == 0, "\(path) 1/\(scale) \(region) pass \(pass)")
                    }
                }
            }
        }
        #expect(cache.usage.count > 0 && cache.usage.bytes <= cache.byteLimit)
        #expect(cache.lookups.misses > 0 && cache.lookups.hits > 0)
    }

    @Test func resolutionLevelsReachATileAndStopWhereTilesDo() {
        #expect(JPEG2000Encoder.resolutionLevels(size: Size(width: 900, height: 700), tile: 256) == 3)
        #expect(JPEG2000Encoder.resolutionLevels(size: Size(width: 100, height: 80), tile: 256) == 1)
        #expect(JPEG2000Encoder.resolutionLevels(size: Size(width: 1 << 20, height: 10), tile: 16) == 5)
    }
}
