import Foundation
import Testing
@testable import Tessera

/// The thumbnail pipeline: vipsthumbnail's size forms, the shrink-on-load plan, EXIF orientations (JPEGs written
/// by Pillow), crops and the embedded EXIF thumbnail.
@Suite final class ThumbnailTests {
    let folder: String

    init() throws { folder = try TestImages.folder() }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    static func properties(_ format: ImageFormat, _ width: Int, _ height: Int, orientation: Int = 1) -> ImageProperties {
        ImageProperties(format: format, width: width, height: height, channels: 3, bitDepth: 8, colorModel: .rgb,
                        hasAlpha: false, orientation: orientation)
    }

    @Test(arguments: [("256", 256, 171), ("200x", 200, 133), ("x100", 150, 100), ("300x300!", 300, 300),
                      ("5000", 3000, 2000), ("5000>", 3000, 2000), ("5000<", 5000, 3333), ("100<", 3000, 2000),
                      ("4500x", 3000, 2000), ("1000x100", 150, 100), ("6000x", 3000, 2000)])
    func sizeFormsGiveVipsthumbnailsSizes(text: String, width: Int, height: Int) throws {
        let size = try ThumbnailSize(parsing: text)
        #expect(size.resampledSize(for: Size(width: 3000, height: 2000), covering: false) == Size(width: width, height: height))
    }

    @Test func malformedSizesAreRejected() {
        for text in ["", "x", "0", "-5", "12y", "10x10x10", "abc>"] {
            #expect(throws: TesseraError.self) { try ThumbnailSize(parsing: text) }
        }
    }

    @Test func planLeavesTheKernelAtLeastTwoX() {
        let thumbnailer = Thumbnailer(options: .init(size: .maxPixelSize(256)))
        let jpeg = thumbnailer.plan(for: Self.properties(.jpeg, 10_000, 10_000))
        #expect(jpeg.loadScale == 8 && jpeg.boxFactor == 2 && jpeg.shrunkSize == Size(width: 625, height: 625))
        #expect(jpeg.outputSize == Size(width: 256, height: 256))
        let png = thumbnailer.plan(for: Self.properties(.png, 3000, 2000))
        #expect(png.loadScale == 1 && png.boxFactor == 5 && png.resampledSize == Size(width: 256, height: 171))
        let small = thumbnailer.plan(for: Self.properties(.jpeg, 700, 300))
        #expect(small.loadScale == 1 && small.boxFactor == 1)
        for plan in [jpeg, png, small] {
            #expect(plan.shrunkSize.width >= 2 * plan.resampledSize.width)
        }
        let turned = thumbnailer.plan(for: Self.properties(.jpeg, 3000, 2000, orientation: 6))
        #expect(turned.resampledSize == Size(width: 256, height: 171) && turned.outputSize == Size(width: 171, height: 256))
    }

    @Test func planLoadsTheSmallestWaveletLevelCoveringTheSize() {
        let thumbnailer = Thumbnailer(options: .init(size: .maxPixelSize(256)))
        func jp2(_ width: Int, _ height: Int, levels: Int) -> ImageProperties {
            var properties = Self.properties(.jpeg2000, width, height)
            properties.jpeg2000 = JPEG2000Structure(
                container: "jp2", components: 3, precision: 8, isSigned: false, resolutionLevels: levels,
                tileSize: Size(width: 1024, height: 1024), tileColumns: 12, tileRows: 9,
                codeBlockSize: Size(width: 64, height: 64), precinctSizes: [], layers: 1, progressionOrder: "RPCL",
                isReversible: true, isHighThroughput: false, colorSpace: "sRGB")
            return properties
        }
        // 12000 / 256 = 46.9: the 1/32 level (375 pixels) covers it, and the kernel does the last 1.46x.
        let covered = thumbnailer.plan(for: jp2(12000, 8333, levels: 8))
        #expect(covered.loadScale == 32 && covered.boxFactor == 1 && covered.shrunkSize == Size(width: 375, height: 261))
        // Past the smallest level (1/16 here), the box shrink still leaves the kernel at least 2x.
        let boxed = thumbnailer.plan(for: jp2(40000, 30000, levels: 5))
        #expect(boxed.loadScale == 16 && boxed.boxFactor == 4 && boxed.shrunkSize.width >= 2 * boxed.resampledSize.width)
    }

    /// Writes, with Pillow, an upright 96x64 image of four coloured quadrants stored for each EXIF orientation.
    func writeOrientedJPEGs() throws {
        let script = """
            import sys
            from PIL import Image
            T = Image.Transpose
            upright = Image.new("RGB", (96, 64))
            for box, colour in [((0, 0, 48, 32), (255, 0, 0)), ((48, 0, 96, 32), (0, 255, 0)),
                                ((0, 32, 48, 64), (0, 0, 255)), ((48, 32, 96, 64), (255, 255, 255))]:
                upright.paste(colour, box)
            # The inverse of what each orientation asks a viewer to do.
            undo = {2: T.FLIP_LEFT_RIGHT, 3: T.ROTATE_180, 4: T.FLIP_TOP_BOTTOM, 5: T.TRANSPOSE,
                    6: T.ROTATE_90, 7: T.TRANSVERSE, 8: T.ROTATE_270}
            for orientation in range(1, 9):
                stored = upright.transpose(undo[orientation]) if orientation > 1 else upright
                exif = Image.Exif()
                exif[0x0112] = orientation
                stored.save(f"{sys.argv[1]}/o{orientation}.jpg", quality=95, exif=exif)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [TestImages.python, "-c", script, folder]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "Pillow could not write the test JPEGs")
    }

    @Test func everyExifOrientationGivesAnUprightThumbnail() throws {
        try writeOrientedJPEGs()
        let thumbnailer = Thumbnailer(options: .init(size: .maxPixelSize(48)))
        for orientation in 1...8 {
            let source = try ImageSource(path: "\(folder)/o\(orientation).jpg")
            #expect(source.properties.orientation == orientation)
            let image = try thumbnailer.thumbnail(of: source)
            try #require(image.size == Size(width: 48, height: 32), "orientation \(orientation): \(image.size)")
            let expected = [(12, 8, [255, 0, 0]), (36, 8, [0, 255, 0]), (12, 24, [0, 0, 255]), (36, 24, [255, 255, 255])]
            for (x, y, colour) in expected {
                let pixel = image.pixel(x: x, y: y)
                #expect(zip(pixel, colour).allSatisfy { abs($0 - $1) <= 24 }, "orientation \(orientation) at \(x),\(y): \(pixel)")
            }
        }
        let stored = try Thumbnailer(options: .init(size: .maxPixelSize(48), appliesOrientation: false))
            .thumbnail(path: "\(folder)/o6.jpg")
        #expect(stored.size == Size(width: 32, height: 48))
    }

    @Test func cropFillsTheBoxAndAttentionFindsTheDetail() throws {
        // Flat gray on the left two thirds, fine checks on the right third.
        var image = ImageBuffer(width: 300, height: 100, format: .gray8)
        for y in 0..<100 {
            for x in 0..<300 { image.bytes[y * 300 + x] = x < 200 ? 128 : ((x / 2 + y / 2) % 2 == 0 ? 20 : 235) }
        }
        let path = folder + "/detail.png"
        try TestImages.write(image, to: path)
        for (crop, expectDetail) in [(ThumbnailCrop.centre, false), (.attention, true), (.entropy, true)] {
            let thumbnail = try Thumbnailer(options: .init(size: ThumbnailSize(width: 50, height: 50), crop: crop))
                .thumbnail(path: path)
            #expect(thumbnail.size == Size(width: 50, height: 50))
            let right = thumbnail.pixel(x: 45, y: 25)[0]
            #expect((right != 128) == expectDetail, "\(crop): \(right)")
        }
    }

    @Test func embeddedThumbnailIsUsedOnlyWhenAskedAndLargeEnough() throws {
        let main = TestImages.gradient(width: 640, height: 480)
        let path = folder + "/camera.jpg"
        try TestImages.write(main, to: path)
        var blue = ImageBuffer(width: 160, height: 120, format: .rgb8)
        for index in stride(from: 0, to: blue.bytes.count, by: 3) { blue.bytes[index + 2] = 255 }
        let small = try ImageWriter.encode(blue, as: .jpeg)
        try Self.insertEXIFThumbnail(small, into: path)

        func centre(_ size: Int, embedded: Bool) throws -> [Int] {
            let image = try Thumbnailer(options: .init(size: .maxPixelSize(size), usesEmbeddedThumbnail: embedded))
                .thumbnail(path: path)
            return image.pixel(x: image.width / 2, y: image.height / 2)
        }
        #expect(try centre(100, embedded: true)[2] > 240 && centre(100, embedded: true)[0] < 16)
        #expect(try centre(100, embedded: false)[0] > 16)
        #expect(try centre(400, embedded: true)[0] > 16)
    }

    /// Adds an APP1 EXIF segment after SOI whose IFD1 points at `thumbnail` (little-endian TIFF).
    static func insertEXIFThumbnail(_ thumbnail: [UInt8], into path: String) throws {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        func entry(_ tag: Int, _ type: Int, _ value: Int) -> [UInt8] { le16(tag) + le16(type) + le32(1) + le32(value) }
        let ifd1 = 8 + 2 + 12 + 4, data = ifd1 + 2 + 24 + 4
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8)
        tiff += le16(1) + entry(0x0112, 3, 1) + le32(ifd1)
        tiff += le16(2) + entry(0x0201, 4, data) + entry(0x0202, 4, thumbnail.count) + le32(0)
        tiff += thumbnail
        let payload = Array("Exif\u{0}\u{0}".utf8) + tiff
        var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        file.insert(contentsOf: [0xFF, 0xE1] + [UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload,
                    at: 2)
        try Data(file).write(to: URL(fileURLWithPath: path))
    }
}
