import Foundation
import Testing
@testable import Tessera

@Suite final class PNGTests {
    let folder: String

    init() throws { folder = try TestImages.folder() }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    @Test(arguments: [PixelFormat.gray8, .grayAlpha8, .rgb8, .rgba8, PixelFormat(.gray, bitDepth: 16),
                      PixelFormat(.rgba, bitDepth: 16), PixelFormat(.rgb, bitDepth: 16)])
    func roundTripIsExact(format: PixelFormat) throws {
        let image = TestImages.gradient(width: 67, height: 45, format: format)
        let path = folder + "/\(format.channels)-\(format.bitDepth).png"
        try TestImages.write(image, to: path)
        let source = try ImageSource(path: path)
        #expect(source.properties.bitDepth == format.bitDepth)
        #expect(source.properties.hasAlpha == format.hasAlpha)
        let decoded = try source.makeReader().readAll()
        #expect(decoded.format == format)
        #expect(decoded.bytes == image.bytes)
    }

    @Test func bitDepthOptionWidensAndNarrows() throws {
        let image = TestImages.gradient(width: 20, height: 10)
        let path = folder + "/wide.png"
        var options = EncodeOptions()
        options.bitDepth = 16
        try TestImages.write(image, to: path, options: options)
        let wide = try ImageSource(path: path).makeReader().readAll()
        #expect(wide.format == PixelFormat(.rgb, bitDepth: 16))
        #expect(wide.pixel(x: 3, y: 4) == image.pixel(x: 3, y: 4).map { $0 * 257 })
    }

    @Test func regionAndScaleComeFromTheRowsTheyCover() throws {
        let image = TestImages.gradient(width: 90, height: 70)
        let path = folder + "/region.png"
        try TestImages.write(image, to: path)
        let source = try ImageSource(path: path)
        let rect = Rect(x: 10, y: 20, width: 33, height: 17)
        let region = try source.makeReader(ReadOptions(region: rect)).readAll()
        #expect(region.bytes == TestImages.crop(image, rect).bytes)
        let half = try source.makeReader(ReadOptions(scale: 2)).readAll()
        let block = [image.pixel(x: 0, y: 0), image.pixel(x: 1, y: 0), image.pixel(x: 0, y: 1), image.pixel(x: 1, y: 1)]
        let mean = (0..<3).map { channel in (block.map { $0[channel] }.reduce(0, +) + 2) / 4 }
        #expect(half.size == Size(width: 45, height: 35))
        #expect(half.pixel(x: 0, y: 0) == mean)
    }
}
