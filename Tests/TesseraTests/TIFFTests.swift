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
        let folder = try TestImages.temporaryFolder()
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
        let folder = try TestImages.temporaryFolder()
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
        let folder = try TestImages.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/image.tif"
        try TestImages.write(TestImages.make(width: 40, height: 20, format: PixelFormat(.rgba, bitDepth: 16)),
                             to: path, options: Self.options(.jpeg, tiled: false))
        #expect(try TestImages.read(path).format == .rgb8)
    }

    @Test(arguments: [false, true])
    func webpCompressionRoundTrips(lossless: Bool) throws {
        let folder = try TestImages.temporaryFolder()
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
        let folder = try TestImages.temporaryFolder()
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
        let folder = try TestImages.temporaryFolder()
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
        let folder = try TestImages.temporaryFolder()
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
        let folder = try TestImages.temporaryFolder()
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
}
