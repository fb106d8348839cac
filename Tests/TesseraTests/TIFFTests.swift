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
