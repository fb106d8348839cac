import Foundation
import Testing
@testable import Tessera

@Suite struct WebPTests {
    static func options(lossless: Bool, quality: Int = 90) -> EncodeOptions {
        var options = EncodeOptions()
        options.lossless = lossless
        options.quality = quality
        return options
    }

    @Test(arguments: [PixelFormat.rgb8, .rgba8])
    func losslessRoundTripIsExact(format: PixelFormat) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 97, height: 61, format: format)
        let path = "\(folder)/image.webp"
        try TestImages.write(image, to: path, options: Self.options(lossless: true))
        let source = try ImageSource(path: path)
        #expect(source.properties.format == .webp)
        #expect(source.properties.size == image.size)
        #expect(source.properties.hasAlpha == format.hasAlpha)
        let decoded = try source.makeReader().readAll()
        #expect(decoded.format == format)
        #expect(decoded.bytes == image.bytes)
    }

    @Test(arguments: [PixelFormat.rgb8, .rgba8])
    func lossyRoundTripIsClose(format: PixelFormat) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 128, height: 96, format: format, smooth: true)
        let path = "\(folder)/image.webp"
        try TestImages.write(image, to: path, options: Self.options(lossless: false))
        let decoded = try TestImages.read(path)
        #expect(decoded.format == format)
        #expect(TestImages.meanDifference(decoded, image) < 3)
    }

    @Test func grayAndSixteenBitInputIsStoredAsRGB() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/gray.webp"
        try TestImages.write(TestImages.make(width: 40, height: 30, format: PixelFormat(.gray, bitDepth: 16)),
                             to: path, options: Self.options(lossless: true))
        let decoded = try TestImages.read(path)
        #expect(decoded.format == .rgb8)
        #expect(decoded.pixel(x: 5, y: 7)[0] == decoded.pixel(x: 5, y: 7)[1])
    }

    @Test(arguments: [false, true])
    func regionReadsEqualTheSameRectangleOfAFullRead(lossless: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.webp"
        try TestImages.write(TestImages.make(width: 150, height: 110, format: .rgba8), to: path,
                             options: Self.options(lossless: lossless))
        let full = try TestImages.read(path)
        for region in [Rect(x: 0, y: 0, width: 150, height: 110), Rect(x: 1, y: 1, width: 10, height: 10),
                       Rect(x: 33, y: 17, width: 64, height: 80), Rect(x: 149, y: 109, width: 1, height: 1),
                       Rect(x: 0, y: 55, width: 150, height: 3), Rect(x: 40, y: 8, width: 100, height: 24),
                       Rect(x: 7, y: 3, width: 5, height: 101)] {
            let part = try TestImages.read(path, ReadOptions(region: region))
            #expect(part.bytes == TestImages.crop(full, region).bytes, "\(region)")
        }
    }

    @Test(arguments: [2, 4, 8, 16])
    func scaledReadsRoundSizesUp(scale: Int) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.webp"
        let image = TestImages.make(width: 101, height: 67, format: .rgb8, smooth: true)
        try TestImages.write(image, to: path, options: Self.options(lossless: true))
        let scaled = try TestImages.read(path, ReadOptions(scale: scale))
        #expect(scaled.size == reducedSize(image.size, by: scale))
        // A smooth image scaled by libwebp stays close to the box-shrunk original.
        let shrunk = try BoxShrinkReader(source: BufferReader(image), factor: scale).readAll()
        #expect(TestImages.meanDifference(scaled, shrunk) < 6)
        let region = Rect(x: 10, y: 20, width: 50, height: 30)
        let part = try TestImages.read(path, ReadOptions(region: region, scale: scale))
        #expect(part.bytes == TestImages.crop(scaled, region.reduced(by: scale)).bytes)
    }

    @Test func imagesOverTheWebPLimitAreRefused() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(throws: TesseraError.self) {
            _ = try ImageWriter.makeEncoder(path: "\(folder)/wide.webp", size: Size(width: 16384, height: 2),
                                            pixelFormat: .rgb8)
        }
        do {
            _ = try ImageWriter.makeEncoder(path: "\(folder)/wide.webp", size: Size(width: 16384, height: 2),
                                            pixelFormat: .rgb8)
        } catch let error as TesseraError {
            #expect(error.description.contains("16383"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test(arguments: [false, true])
    func damagedFilesGiveErrorsNotCrashes(lossless: Bool) throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.webp"
        try TestImages.write(TestImages.make(width: 120, height: 90, format: .rgba8), to: path,
                             options: Self.options(lossless: lossless))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        TestImages.damagedCopies(of: bytes) { damaged, label in
            do {
                _ = try ImageSource(bytes: damaged, name: "damaged.webp").makeReader().readAll()
                #expect(!label.hasPrefix("truncated"), "\(label) decoded without an error")
            } catch is TesseraError {
            } catch {
                Issue.record("\(label): \(error) is not a TesseraError")
            }
        }
    }

    @Test func truncatedFileGivesItsDecodedRowsWhenPartialResultsAreAllowed() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.webp"
        let image = TestImages.make(width: 64, height: 64, format: .rgb8, smooth: true)
        try TestImages.write(image, to: path, options: Self.options(lossless: false))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let source = try ImageSource(bytes: Array(bytes.prefix(bytes.count * 3 / 4)), name: "cut.webp")
        #expect(throws: TesseraError.self) { _ = try source.makeReader().readAll() }
        let partial = try source.makeReader(ReadOptions(allowPartial: true)).readAll()
        let top = Rect(x: 0, y: 0, width: 64, height: 16)
        #expect(TestImages.meanDifference(TestImages.crop(partial, top), TestImages.crop(image, top)) < 3)
    }
}

// MARK: - Peers

extension WebPTests {
    /// Has Pillow write WebP variants and, beside each, its decoded pixels as raw bytes.
    static let pillowScript = """
        import sys
        import numpy as np
        from PIL import Image, ImageCms
        folder = sys.argv[1]
        rng = np.random.default_rng(3)
        h, w = 60, 80
        y, x = np.mgrid[0:h, 0:w]
        rgb = np.stack([x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 255 // (w + h - 2)], -1)
        rgb = (rgb + rng.integers(0, 16, rgb.shape)).clip(0, 255).astype(np.uint8)
        base = Image.fromarray(rgb, "RGB")
        rgba = base.copy()
        rgba.putalpha(Image.fromarray(((x * 3 + y) % 256).astype(np.uint8), "L"))
        exif = Image.Exif()
        exif[274] = 6
        icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
        variants = {
            "lossless_rgb": (base, dict(lossless=True)),
            "lossless_rgba": (rgba, dict(lossless=True, exact=True)),
            "lossy_rgb": (base, dict(quality=80)),
            "tagged": (base, dict(lossless=True, exif=exif.tobytes(), icc_profile=icc)),
        }
        for name, (image, options) in variants.items():
            path = f"{folder}/{name}.webp"
            image.save(path, **options)
            back = Image.open(path)
            back.load()
            if "exif" in options:
                back = image
            with open(f"{folder}/{name}.raw", "wb") as out:
                out.write(back.tobytes())
        """

    @Test(TestImages.needsPillow) func decodesWhatPillowWritesAsPillowDoes() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.pillowScript.write(toFile: "\(folder)/generate.py", atomically: true, encoding: .utf8)
        #expect(TestImages.run(TestImages.python, ["\(folder)/generate.py", folder]) == 0)
        for (name, tolerance) in [("lossless_rgb", 0.0), ("lossless_rgba", 0), ("lossy_rgb", 1), ("tagged", 0)] {
            let decoded = try TestImages.read("\(folder)/\(name).webp")
            let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name).raw")))
            #expect(decoded.bytes.count == expected.count, "\(name): \(decoded.format)")
            guard decoded.bytes.count == expected.count else { continue }
            let reference = ImageBuffer(width: decoded.width, height: decoded.height, format: decoded.format,
                                        bytes: expected)
            #expect(TestImages.meanDifference(decoded, reference) <= tolerance, "\(name)")
        }
        let tagged = try ImageSource(path: "\(folder)/tagged.webp").properties
        #expect(tagged.orientation == 6)
        #expect(tagged.hasICCProfile)
        let plain = try ImageSource(path: "\(folder)/lossless_rgba.webp").properties
        #expect(plain.orientation == 1 && !plain.hasICCProfile && plain.hasAlpha)
    }
}

extension WebPTests {
    @Test(TestImages.needsPillow) func pillowReadsWhatWeWrite() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 50, height: 40, format: .rgba8)
        try TestImages.write(image, to: "\(folder)/image.webp", options: Self.options(lossless: true))
        let script = """
            import sys
            from PIL import Image
            image = Image.open(sys.argv[1] + "/image.webp")
            image.load()
            open(sys.argv[1] + "/image.raw", "wb").write(image.tobytes())
            """
        try script.write(toFile: "\(folder)/read.py", atomically: true, encoding: .utf8)
        #expect(TestImages.run(TestImages.python, ["\(folder)/read.py", folder]) == 0)
        let decoded = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/image.raw")))
        #expect(decoded == image.bytes)
    }

    @Test func budgetTooSmallForTheFileIsAMemoryLimitError() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestImages.write(TestImages.make(width: 64, height: 64, format: .rgb8), to: "\(folder)/image.webp",
                             options: Self.options(lossless: true))
        let source = try ImageSource(path: "\(folder)/image.webp", budget: MemoryBudget(limit: 2000))
        #expect {
            _ = try source.makeReader().readAll(budget: MemoryBudget(limit: 1 << 20))
        } throws: { error in
            guard case .memoryLimit = error as? TesseraError else { return false }
            return true
        }
    }
}

extension WebPTests {
    @Test func rowsAboveATruncationDecodeWithoutReachingIt() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.webp"
        try TestImages.write(TestImages.make(width: 256, height: 256, format: .rgb8), to: path,
                             options: Self.options(lossless: false))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let full = try TestImages.read(path)
        let source = try ImageSource(bytes: Array(bytes.prefix(bytes.count * 2 / 3)), name: "cut.webp")
        #expect(throws: TesseraError.self) { _ = try source.makeReader().readAll() }
        // Decoding stops once the rows asked for are done, so the missing end is never needed.
        let region = Rect(x: 40, y: 8, width: 100, height: 24)
        let part = try source.makeReader(ReadOptions(region: region)).readAll()
        #expect(part.bytes == TestImages.crop(full, region).bytes)
    }
}
