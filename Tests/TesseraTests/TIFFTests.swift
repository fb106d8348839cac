import Foundation
import Testing
@testable import Tessera

@Suite struct TIFFTests {
    static let formats: [PixelFormat] = [.gray8, .grayAlpha8, .rgb8, .rgba8, PixelFormat(.gray, bitDepth: 16),
                                         PixelFormat(.grayAlpha, bitDepth: 16), PixelFormat(.rgb, bitDepth: 16),
                                         PixelFormat(.rgba, bitDepth: 16)]

    static func options(_ compression: EncodeOptions.TIFFCompression, tiled: Bool) -> EncodeOptions {
        var options = EncodeOptions()
        options.tiffCompression = compression
        options.tiled = tiled
        options.tileSize = 32
        options.lossless = true
        return options
    }

    @Test(arguments: [EncodeOptions.TIFFCompression.none, .deflate, .lzw], [false, true])
    func losslessRoundTripIsExact(compression: EncodeOptions.TIFFCompression, tiled: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (index, format) in Self.formats.enumerated() {
            let image = TestImages.make(width: 83, height: 45, format: format, seed: UInt32(index + 1))
            let path = "\(folder)/\(index).tif"
            try TestImages.write(image, to: path, options: Self.options(compression, tiled: tiled))
            let source = try ImageSource(path: path)
            #expect(source.properties.size == image.size)
            #expect(source.properties.bitDepth == format.bitDepth)
            #expect(source.properties.hasAlpha == format.hasAlpha)
            let decoded = try source.makeReader().readAll()
            #expect(decoded.format == format, "\(format)")
            #expect(decoded.bytes == image.bytes, "\(compression) \(format) tiled: \(tiled)")
        }
    }
}

extension TIFFTests {
    @Test(arguments: [EncodeOptions.Subsampling.s420, .s444], [false, true])
    func jpegRoundTripIsClose(subsampling: EncodeOptions.Subsampling, tiled: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for format in [PixelFormat.gray8, .rgb8] {
            let image = TestImages.make(width: 100, height: 70, format: format, smooth: true)
            var options = Self.options(.jpeg, tiled: tiled)
            options.quality = 92
            options.subsampling = subsampling
            let path = "\(folder)/\(format.channelCount).tif"
            try TestImages.write(image, to: path, options: options)
            let decoded = try TestImages.read(path)
            #expect(decoded.format == format)
            #expect(TestImages.meanDifference(decoded, image) < 2.5, "\(format) \(subsampling) tiled: \(tiled)")
        }
    }

    @Test func jpegFlattensAlphaAndNarrowsSixteenBits() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.tif"
        try TestImages.write(TestImages.make(width: 40, height: 20, format: PixelFormat(.rgba, bitDepth: 16)),
                             to: path, options: Self.options(.jpeg, tiled: false))
        #expect(try TestImages.read(path).format == .rgb8)
    }

    @Test(arguments: [false, true])
    func webpCompressionRoundTrips(lossless: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 70, height: 50, format: .rgba8, smooth: !lossless)
        let path = "\(folder)/image.tif"
        var options = Self.options(.webp, tiled: true)
        options.lossless = lossless
        try TestImages.write(image, to: path, options: options)
        let decoded = try TestImages.read(path)
        if lossless {
            #expect(decoded.bytes == image.bytes)
        } else {
            #expect(TestImages.meanDifference(decoded, image) < 3)
        }
    }

    @Test(arguments: [EncodeOptions.TIFFCompression.deflate, .jpeg], [false, true])
    func regionReadsEqualTheSameRectangleOfAFullRead(compression: EncodeOptions.TIFFCompression, tiled: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.tif"
        try TestImages.write(TestImages.make(width: 200, height: 150, format: .rgb8), to: path,
                             options: Self.options(compression, tiled: tiled))
        let full = try TestImages.read(path)
        for region in [Rect(x: 0, y: 0, width: 200, height: 150), Rect(x: 31, y: 33, width: 2, height: 64),
                       Rect(x: 64, y: 64, width: 64, height: 64), Rect(x: 199, y: 149, width: 1, height: 1),
                       Rect(x: 5, y: 140, width: 190, height: 10)] {
            let part = try TestImages.read(path, ReadOptions(region: region))
            #expect(part.bytes == TestImages.crop(full, region).bytes, "\(region)")
        }
        // Without a pyramid, scaled reads shrink the full-size rows.
        let region = Rect(x: 10, y: 10, width: 100, height: 80)
        let scaled = try TestImages.read(path, ReadOptions(region: region, scale: 4))
        #expect(scaled.size == region.reduced(by: 4).size)
    }

    @Test func stripsHoldTensOfKilobytesToAMegabyte() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.tif"
        try TestImages.write(TestImages.make(width: 500, height: 400, format: .rgb8), to: path,
                             options: Self.options(.none, tiled: false))
        let file = try TIFFFile(reading: .file(path: path), budget: .default)
        let layout = try TIFFLayout(file)
        #expect(!layout.isTiled)
        #expect((64 * 1024...1024 * 1024).contains(layout.blockHeight * 1500))
    }

    @Test func unfinishedWritesLeaveNoFile() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            let (encoder, format) = try ImageWriter.makeEncoder(path: "\(folder)/a.tif", size: Size(width: 10, height: 10),
                                                                pixelFormat: .rgb8)
            var strip = Strip(width: 10, format: format)
            strip.prepare(y: 0, rows: 5, width: 10, format: format)
            try encoder.write(strip)
            #expect(throws: TesseraError.self) { try encoder.finish() }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test(arguments: [EncodeOptions.TIFFCompression.lzw, .jpeg], [false, true])
    func damagedFilesGiveErrorsNotCrashes(compression: EncodeOptions.TIFFCompression, tiled: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.tif"
        try TestImages.write(TestImages.make(width: 120, height: 100, format: .rgb8), to: path,
                             options: Self.options(compression, tiled: tiled))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        TestImages.damagedCopies(of: bytes) { damaged, label in
            do {
                _ = try ImageSource(bytes: damaged, name: "damaged.tif").makeReader().readAll()
                #expect(!label.hasPrefix("truncated"), "\(label) decoded without an error")
            } catch is TesseraError {
            } catch {
                Issue.record("\(label): \(error) is not a TesseraError")
            }
        }
    }

    /// A file cut before the directory its header points to says so in a sentence.
    @Test func aFileCutBeforeItsFirstDirectoryIsTruncated() throws {
        let header: [UInt8] = [0x49, 0x49, 42, 0, 0x00, 0x10, 0, 0] + [UInt8](repeating: 0, count: 100)
        let error = #expect(throws: TesseraError.self) { try ImageSource(bytes: header, name: "cut.tif") }
        #expect(error?.description
                == "cut.tif: truncated before its first directory (the header places it past the end)")
    }
}

// MARK: - Peers

extension TIFFTests {
    /// Has Pillow write TIFF variants and, beside each, the pixels Pillow decodes from it as raw bytes in Tessera's
    /// output layout (bilevel as 8-bit gray, palette and CMYK as RGB).
    static let pillowScript = """
        import sys
        import numpy as np
        from PIL import Image, ImageCms
        folder = sys.argv[1]
        rng = np.random.default_rng(7)
        h, w = 70, 90
        y, x = np.mgrid[0:h, 0:w]
        rgb = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 255 // (w + h - 2)], -1)
        rgb = (rgb + rng.integers(0, 16, rgb.shape)).clip(0, 255).astype(np.uint8)
        base = Image.fromarray(rgb, "RGB")
        alpha = Image.fromarray(((x * 3 + y) % 256).astype(np.uint8), "L")
        rgba = base.copy()
        rgba.putalpha(alpha)
        gray = base.convert("L")
        icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
        variants = {
            "rgb_raw": (base, dict(compression="raw", tiffinfo={274: 6}, icc_profile=icc)),
            "rgb_lzw": (base, dict(compression="tiff_lzw")),
            "rgb_deflate": (base, dict(compression="tiff_adobe_deflate")),
            "rgb_packbits": (base, dict(compression="packbits")),
            "rgb_jpeg": (base, dict(compression="jpeg", quality=90)),
            "rgba_lzw": (rgba, dict(compression="tiff_lzw")),
            "la_deflate": (Image.merge("LA", (gray, alpha)), dict(compression="tiff_adobe_deflate")),
            "l_raw": (gray, dict(compression="raw")),
            "bilevel_raw": (gray.point(lambda v: 255 if v > 128 else 0).convert("1"), dict(compression="raw")),
            "bilevel_g4": (gray.point(lambda v: 255 if v > 128 else 0).convert("1"), dict(compression="group4")),
            "palette_lzw": (base.quantize(64), dict(compression="tiff_lzw")),
            "cmyk_raw": (base.convert("CMYK"), dict(compression="raw")),
            "i16_deflate": (Image.fromarray((x * 700 + y * 13).astype(np.uint16)), dict(compression="tiff_adobe_deflate")),
        }
        for name, (image, options) in variants.items():
            path = f"{folder}/{name}.tif"
            image.save(path, **options)
            back = Image.open(path)
            back.load()
            if "tiffinfo" in options:
                # Pillow applies the orientation tag when loading; Tessera leaves that to the caller.
                back = image
            if back.mode in ("1", "P", "CMYK"):
                back = back.convert("L" if back.mode == "1" else "RGB")
            with open(f"{folder}/{name}.raw", "wb") as out:
                out.write(back.tobytes())
        pages = [base, gray.resize((40, 30)), rgba]
        pages[0].save(f"{folder}/pages.tif", save_all=True, append_images=pages[1:], compression="tiff_lzw")
        with open(f"{folder}/pages.raw", "wb") as out:
            out.write(pages[1].tobytes())
        """

    /// The variants Pillow wrote and how close our decode must be: 0 is exact.
    static let pillowVariants: [(name: String, tolerance: Double)] = [
        ("rgb_raw", 0), ("rgb_lzw", 0), ("rgb_deflate", 0), ("rgb_packbits", 0), ("rgb_jpeg", 1), ("rgba_lzw", 0),
        ("la_deflate", 0), ("l_raw", 0), ("bilevel_raw", 0), ("bilevel_g4", 0), ("palette_lzw", 0), ("cmyk_raw", 0.6),
        ("i16_deflate", 0),
    ]

    /// A folder of Pillow-written TIFFs, for tests marked `TestImages.needsPillow`.
    static func pillowFolder() throws -> String {
        let folder = try TestImages.folder()
        try pillowScript.write(toFile: "\(folder)/generate.py", atomically: true, encoding: .utf8)
        #expect(TestImages.run(TestImages.python, ["\(folder)/generate.py", folder]) == 0)
        return folder
    }

    @Test(TestImages.needsPillow) func decodesWhatPillowWritesAsPillowDoes() throws {
        let folder = try Self.pillowFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, tolerance) in Self.pillowVariants {
            let decoded = try TestImages.read("\(folder)/\(name).tif")
            let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name).raw")))
            #expect(decoded.bytes.count == expected.count, "\(name): \(decoded.format)")
            guard decoded.bytes.count == expected.count else { continue }
            if tolerance == 0 {
                let identical = decoded.bytes == expected
                #expect(identical, "\(name): \(decoded.format)")
            } else {
                let reference = ImageBuffer(width: decoded.width, height: decoded.height, format: decoded.format,
                                            bytes: expected)
                #expect(TestImages.meanDifference(decoded, reference) <= tolerance, "\(name)")
            }
        }
        let tagged = try ImageSource(path: "\(folder)/rgb_raw.tif").properties
        #expect(tagged.orientation == 6)
        #expect(tagged.hasICCProfile)
        #expect(try ImageSource(path: "\(folder)/palette_lzw.tif").properties.colorModel == .palette)
        #expect(try ImageSource(path: "\(folder)/cmyk_raw.tif").properties.colorModel == .cmyk)
    }

    /// A TIFF's properties are read from its first directory's bytes (`TIFFDirectoryReader`), its pixels through
    /// libtiff: both read the same layout of every variant Pillow writes (strips and compressions, alpha, gray,
    /// bilevel, palette, CMYK, 16-bit), and its ICC profile and orientation.
    @Test(TestImages.needsPillow) func theLayoutReadFromTheBytesIsLibtiffs() throws {
        let folder = try Self.pillowFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in Self.pillowVariants.map(\.name) + ["pages"] {
            let path = "\(folder)/\(name).tif"
            let file = try TIFFFile(reading: .file(path: path), budget: .default)
            let directories = try #require(file.directories)
            let first = try #require(directories.directory(at: directories.firstOffset))
            var fromBytes = try TIFFLayout(first, name: path)
            let fromLibtiff = try TIFFLayout(file)
            // libtiff reads one uncompressed strip as strips of about 8 KiB (its strip chopping), which only its
            // decode reads.
            if !fromBytes.isTiled, fromBytes.compression == 1, fromBytes.blockHeight == fromBytes.height {
                #expect(fromLibtiff.blockHeight <= fromBytes.blockHeight, "\(name)")
                fromBytes.blockHeight = fromLibtiff.blockHeight
            }
            #expect(fromBytes == fromLibtiff, "\(name)")
            #expect(first.hasICCProfile == file.hasICCProfile, "\(name)")
        }
    }

    @Test(TestImages.needsPillow) func pagesAreCountedAndReadByIndex() throws {
        let folder = try Self.pillowFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = try ImageSource(path: "\(folder)/pages.tif")
        #expect(source.properties.pageCount == 3)
        // The second page is not half the first, so it is a page, not a pyramid level.
        #expect(source.properties.levels == [source.properties.size])
        let page = try source.makeReader(ReadOptions(page: 1)).readAll()
        #expect(page.size == Size(width: 40, height: 30))
        #expect(page.bytes == (try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/pages.raw")))))
        #expect(try source.makeReader(ReadOptions(page: 2)).readAll().format == .rgba8)
        #expect(throws: TesseraError.self) { _ = try source.makeReader(ReadOptions(page: 3)) }
    }

    @Test(TestImages.needsPillow) func truncatedFileGivesItsDecodedRowsWhenPartialResultsAreAllowed() throws {
        let folder = try Self.pillowFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Pillow's own writer puts the directory before the pixels, so a cut file still opens.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/rgb_raw.tif")))
        let source = try ImageSource(bytes: Array(bytes.prefix(bytes.count / 2)), name: "cut.tif")
        do {
            _ = try source.makeReader().readAll()
            Issue.record("a truncated TIFF decoded without an error")
        } catch let error as TesseraError {
            guard case .truncated = error else { throw error }
            #expect(error.description.contains("row"))
        }
        let partial = try source.makeReader(ReadOptions(allowPartial: true)).readAll()
        let full = try TestImages.read("\(folder)/rgb_raw.tif")
        let top = Rect(x: 0, y: 0, width: full.width, height: 10)
        #expect(TestImages.crop(partial, top).bytes == TestImages.crop(full, top).bytes)
    }

    @Test(TestImages.needsVips, arguments: [false, true])
    func pyramidLevelsAreReadNatively(subIFDs: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 512, height: 384, format: .rgb8, smooth: true)
        try TestImages.write(image, to: "\(folder)/flat.tif", options: Self.options(.none, tiled: false))
        let arguments = ["tiffsave", "\(folder)/flat.tif", "\(folder)/pyramid.tif", "--tile", "--pyramid",
                         "--tile-width", "64", "--tile-height", "64", "--compression", "deflate"]
        #expect(TestImages.run("vips", arguments + (subIFDs ? ["--subifd"] : [])) == 0)
        let source = try ImageSource(path: "\(folder)/pyramid.tif")
        let levels = source.properties.levels
        #expect(Array(levels.prefix(4)) == [Size(width: 512, height: 384), Size(width: 256, height: 192),
                                            Size(width: 128, height: 96), Size(width: 64, height: 48)])
        #expect(TIFFDecoder.nativeScales(for: source.properties).starts(with: [1, 2, 4, 8]))
        #expect(source.properties.pageCount == (subIFDs ? 1 : levels.count))
        let half = try source.makeReader(ReadOptions(scale: 2)).readAll()
        #expect(half.size == Size(width: 256, height: 192))
        // libvips averages 2x2 blocks for each level, as the box shrink does.
        let shrunk = try BoxShrinkReader(source: BufferReader(image), factor: 2).readAll()
        #expect(TestImages.meanDifference(half, shrunk) < 1.5)
        let region = Rect(x: 100, y: 60, width: 300, height: 200)
        let part = try source.makeReader(ReadOptions(region: region, scale: 2)).readAll()
        #expect(part.bytes == TestImages.crop(half, region.reduced(by: 2)).bytes)
        // 1/16 comes from the 1/8 level, shrunk.
        #expect(try source.makeReader(ReadOptions(scale: 16)).readAll().size == Size(width: 32, height: 24))
    }
}

extension TIFFTests {
    @Test(arguments: [false, true])
    func regionReadsDecodeOnlyIntersectingStripsAndTiles(tiled: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.tif"
        // 4 KiB rows make 128-row strips; tiles are 64x64, 8 across.
        let image = TestImages.make(width: 512, height: 256, format: PixelFormat(.rgba, bitDepth: 16))
        var options = Self.options(.deflate, tiled: tiled)
        options.tileSize = 64
        try TestImages.write(image, to: path, options: options)
        // Break the first strip or tile, and for tiles also the one right of the region: deflate fails on them.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let file = try TIFFFile(reading: .file(path: path), budget: .default)
        let layout = try TIFFLayout(file)
        #expect(layout.isTiled == tiled && layout.blockHeight < 130)
        for block: UInt32 in tiled ? [0, 19] : [0] {
            let range = file.byteRange(ofBlock: block)
            for index in Int(range.offset)..<Int(range.offset + range.count) { bytes[index] = 0xFF }
        }
        let source = try ImageSource(bytes: bytes, name: "broken.tif")
        #expect {
            _ = try source.makeReader().readAll()
        } throws: { error in
            // e.g. "broken.tif: corrupt data: ZIPDecode: Decoding error at scanline 0 (at row 0 of 256)"
            guard case .corrupt = error as? TesseraError else { return false }
            return "\(error)".hasSuffix("(at row 0 of 256)")
        }
        let region = Rect(x: 10, y: 130, width: 150, height: 120)
        let part = try source.makeReader(ReadOptions(region: region)).readAll()
        #expect(part.bytes == TestImages.crop(image, region).bytes)
    }
}

// MARK: - Hand-made files

extension TIFFTests {
    /// A little-endian, uncompressed, stripped TIFF of 8-bit samples; `planes` holds one array per sample when
    /// planar-separate, else one array of interleaved samples.
    /// `extraSample` is the ExtraSamples type of the last sample, if any (1 associated alpha, 2 unassociated).
    /// `subsampling` is the YCbCrSubsampling of YCbCr images (photometric 6).
    static func handmadeTIFF(width: Int, height: Int, samples: Int, photometric: Int, rowsPerStrip: Int,
                             planes: [[UInt8]], extraSample: Int? = nil, subsampling: (Int, Int)? = nil) -> [UInt8] {
        var bytes: [UInt8] = Array("II".utf8) + [42, 0, 8, 0, 0, 0]
        func append(_ value: Int, size: Int) {
            for index in 0..<size { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        let stripsPerPlane = (height + rowsPerStrip - 1) / rowsPerStrip
        let planeRowBytes = planes[0].count / height
        var strips: [(offset: Int, count: Int)] = []
        // Entries: tag, type (3 SHORT, 4 LONG), count, value or offset of the values placed after the directory.
        let entryCount = 10 + (extraSample == nil ? 0 : 1) + (subsampling == nil ? 0 : 1), directoryEnd = 8 + 2 + entryCount * 12 + 4
        let bitsOffset = directoryEnd, offsetsOffset = bitsOffset + 2 * samples
        let countsOffset = offsetsOffset + 4 * stripsPerPlane * planes.count
        var dataOffset = countsOffset + 4 * stripsPerPlane * planes.count
        for _ in planes {
            for strip in 0..<stripsPerPlane {
                let rows = min(rowsPerStrip, height - strip * rowsPerStrip)
                strips.append((dataOffset, rows * planeRowBytes))
                dataOffset += rows * planeRowBytes
            }
        }
        var entries: [(Int, Int, Int, Int)] = [
            (256, 4, 1, width), (257, 4, 1, height), (258, 3, samples, samples == 1 ? 8 : bitsOffset),
            (259, 3, 1, 1), (262, 3, 1, photometric), (273, 4, strips.count, strips.count == 1 ? strips[0].offset : offsetsOffset),
            (277, 3, 1, samples), (278, 4, 1, rowsPerStrip),
            (279, 4, strips.count, strips.count == 1 ? strips[0].count : countsOffset), (284, 3, 1, planes.count > 1 ? 2 : 1),
        ]
        if let extraSample { entries.append((338, 3, 1, extraSample)) }
        // Two SHORTs fit in the entry's value field, first in the low half.
        if let subsampling { entries.append((530, 3, 2, subsampling.0 | subsampling.1 << 16)) }
        append(entryCount, size: 2)
        for (tag, type, count, value) in entries {
            append(tag, size: 2); append(type, size: 2); append(count, size: 4); append(value, size: 4)
        }
        append(0, size: 4)
        for _ in 0..<samples { append(8, size: 2) }
        for strip in strips { append(strip.offset, size: 4) }
        for strip in strips { append(strip.count, size: 4) }
        for plane in planes { bytes += plane }
        return bytes
    }

    @Test func planarSeparateSamplesAreInterleaved() throws {
        let width = 37, height = 23
        let image = TestImages.make(width: width, height: height, format: .rgb8)
        let planes = (0..<3).map { sample in stride(from: sample, to: image.bytes.count, by: 3).map { image.bytes[$0] } }
        let bytes = Self.handmadeTIFF(width: width, height: height, samples: 3, photometric: 2, rowsPerStrip: 10,
                                      planes: planes)
        let source = try ImageSource(bytes: bytes, name: "planar.tif")
        #expect(try source.makeReader().readAll().bytes == image.bytes)
        let region = Rect(x: 3, y: 12, width: 20, height: 9)
        #expect(try source.makeReader(ReadOptions(region: region)).readAll().bytes == TestImages.crop(image, region).bytes)
    }

    @Test func minIsWhiteGrayIsInverted() throws {
        let image = TestImages.make(width: 19, height: 7, format: .gray8)
        let bytes = Self.handmadeTIFF(width: 19, height: 7, samples: 1, photometric: 0, rowsPerStrip: 7,
                                      planes: [image.bytes.map { 255 - $0 }])
        #expect(try ImageSource(bytes: bytes, name: "white.tif").makeReader().readAll().bytes == image.bytes)
    }
}

extension TIFFTests {
    @Test(TestImages.needsPillow) func pillowReadsWhatWeWrite() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Pillow has no 16-bit RGB mode, so 16 bits are checked on gray.
        var written: [(name: String, image: ImageBuffer, exact: Bool)] = []
        for compression in EncodeOptions.TIFFCompression.allCases where compression != .webp {
            for tiled in [false, true] {
                for format in [PixelFormat.gray8, .rgb8, .rgba8, PixelFormat(.gray, bitDepth: 16)] {
                    let options = Self.options(compression, tiled: tiled)
                    let accepted = TIFFEncoder.acceptedFormat(for: format, options: options)
                    guard accepted == format else { continue }
                    let image = TestImages.make(width: 50, height: 40, format: format, smooth: compression == .jpeg)
                    let name = "\(compression)-\(tiled ? "tiled" : "strips")-\(format.channelCount)-\(format.bitDepth)"
                    try TestImages.write(image, to: "\(folder)/\(name).tif", options: options)
                    written.append((name, image, compression != .jpeg))
                }
            }
        }
        let script = """
            import sys, glob
            from PIL import Image
            for path in glob.glob(sys.argv[1] + "/*.tif"):
                image = Image.open(path)
                image.load()
                open(path[:-4] + ".raw", "wb").write(image.tobytes())
            """
        try script.write(toFile: "\(folder)/read.py", atomically: true, encoding: .utf8)
        #expect(TestImages.run(TestImages.python, ["\(folder)/read.py", folder]) == 0)
        for (name, image, exact) in written {
            let decoded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name).raw")))
            #expect(decoded.count == image.bytes.count, "\(name)")
            guard decoded.count == image.bytes.count else { continue }
            let difference = TestImages.meanDifference(
                ImageBuffer(width: image.width, height: image.height, format: image.format, bytes: decoded), image)
            #expect(exact ? difference == 0 : difference < 2.5, "\(name)")
        }
    }
}

extension TIFFTests {
    @Test func budgetTooSmallForAStripIsAMemoryLimitError() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestImages.write(TestImages.make(width: 300, height: 200, format: .rgb8), to: "\(folder)/image.tif",
                             options: Self.options(.deflate, tiled: false))
        let source = try ImageSource(path: "\(folder)/image.tif", budget: MemoryBudget(limit: 10_000))
        #expect {
            _ = try source.makeReader()
        } throws: { error in
            guard case .memoryLimit = error as? TesseraError else { return false }
            return true
        }
    }
}

extension TIFFTests {
    @Test func premultipliedAlphaIsUnpremultiplied() throws {
        // Colour 200,100,50 at alpha 128 is stored as 100,50,25; opaque and transparent pixels stay as they are.
        let stored: [UInt8] = [100, 50, 25, 128, 10, 20, 30, 255, 0, 0, 0, 0]
        let bytes = Self.handmadeTIFF(width: 3, height: 1, samples: 4, photometric: 2, rowsPerStrip: 1,
                                      planes: [stored], extraSample: 1)
        let source = try ImageSource(bytes: bytes, name: "premultiplied.tif")
        #expect(source.properties.hasAlpha)
        #expect(try source.makeReader().readAll().bytes == [199, 100, 50, 128, 10, 20, 30, 255, 0, 0, 0, 0])
    }

    @Test(TestImages.needsVips) func jpegCompressedYCbCrFromLibvipsDecodesAsRGB() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 120, height: 90, format: .rgb8, smooth: true)
        try TestImages.write(image, to: "\(folder)/flat.tif", options: Self.options(.none, tiled: false))
        #expect(TestImages.run("vips", ["tiffsave", "\(folder)/flat.tif", "\(folder)/jpeg.tif", "--compression", "jpeg",
                                        "--Q", "92", "--tile", "--tile-width", "32", "--tile-height", "32"]) == 0)
        let source = try ImageSource(path: "\(folder)/jpeg.tif")
        #expect(source.properties.colorModel == .rgb)
        let decoded = try source.makeReader().readAll()
        #expect(TestImages.meanDifference(decoded, image) < 2.5)
    }
}

extension TIFFTests {
    @Test(TestImages.needsVips) func bigTIFFFromLibvipsDecodes() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 90, height: 60, format: .rgba8)
        try TestImages.write(image, to: "\(folder)/flat.tif", options: Self.options(.none, tiled: false))
        #expect(TestImages.run("vips", ["tiffsave", "\(folder)/flat.tif", "\(folder)/big.tif", "--bigtiff",
                                        "--compression", "lzw", "--tile", "--tile-width", "16", "--tile-height", "16"]) == 0)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/big.tif")))
        #expect(bytes.prefix(4) == [0x49, 0x49, 0x2B, 0x00])
        #expect(try TestImages.read("\(folder)/big.tif").bytes == image.bytes)
    }
}

extension TIFFTests {
    @Test func rawSubsampledYCbCrIsConvertedToRGB() throws {
        // 4x2 pixels with 2x2 chroma subsampling: two blocks of four luma samples then Cb and Cr each.
        // Neutral chroma (128) makes every pixel gray at its luma.
        let luma: [[UInt8]] = [[10, 60, 110, 160], [210, 250, 30, 80]]
        let data: [UInt8] = [luma[0][0], luma[0][1], luma[1][0], luma[1][1], 128, 128,
                             luma[0][2], luma[0][3], luma[1][2], luma[1][3], 128, 128]
        let bytes = Self.handmadeTIFF(width: 4, height: 2, samples: 3, photometric: 6, rowsPerStrip: 2,
                                      planes: [data], subsampling: (2, 2))
        let decoded = try ImageSource(bytes: bytes, name: "ycbcr.tif").makeReader().readAll()
        #expect(decoded.format == .rgb8)
        for y in 0..<2 {
            for x in 0..<4 {
                #expect(decoded.pixel(x: x, y: y).allSatisfy { abs($0 - Int(luma[y][x])) <= 1 }, "\(x),\(y)")
            }
        }
    }
}

extension TIFFTests {
    @Test func tileSizesThatAreNotMultiplesOfSixteenAreRefused() throws {
        var options = Self.options(.deflate, tiled: true)
        options.tileSize = 100
        #expect(throws: TesseraError.self) {
            _ = try ImageWriter.makeEncoder(path: "/tmp/never-written.tif", size: Size(width: 10, height: 10),
                                            pixelFormat: .rgb8, options: options)
        }
    }
}

/// libvips halves pyramid levels rounding down; those levels are still read natively, a pixel short made up.
@Test(TestImages.needsVips) func levelsHalvedRoundingDownAreReadNatively() throws {
    let folder = try TestImages.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let image = TestImages.make(width: 1001, height: 701, format: .rgb8, smooth: true)
    try TestImages.write(image, to: folder + "/source.png")
    #expect(TestImages.run("vips", ["tiffsave", folder + "/source.png", folder + "/pyramid.tif", "--tile", "--pyramid",
                                    "--compression", "deflate", "--tile-width", "128", "--tile-height", "128"]) == 0)
    let source = try ImageSource(path: folder + "/pyramid.tif")
    #expect(source.properties.levels.contains(Size(width: 250, height: 175)))
    #expect(TIFFDecoder.nativeScales(for: source.properties).contains(4))
    for rect in [Rect(x: 0, y: 0, width: 1001, height: 701), Rect(x: 1000, y: 700, width: 1, height: 1),
                 Rect(x: 996, y: 40, width: 5, height: 100)] {
        let reader = try source.makeReader(ReadOptions(region: rect, scale: 4))
        let expected = rect.reduced(by: 4).size
        #expect(reader.size == expected)
        let pixels = try reader.readAll()
        #expect(pixels.size == expected)
    }
}
