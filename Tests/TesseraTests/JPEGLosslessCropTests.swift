import Testing
@testable import Tessera

/// A JPEG's corner cut out of its coefficients decodes to the same pixels as the whole JPEG's corner.
@Suite struct JPEGLosslessCropTests {
    private func jpeg(_ format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws -> [UInt8] {
        var options = EncodeOptions()
        options.subsampling = subsampling
        return try ImageWriter.encode(TestImages.make(width: 256, height: 256, format: format, smooth: true),
                                      as: .jpeg, options: options)
    }

    @Test(arguments: [(PixelFormat.rgb8, EncodeOptions.Subsampling.s444), (.gray8, .s444), (.rgb8, .s420)])
    func theCornerDecodesAsTheWholeImagesCorner(format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws {
        let whole = try jpeg(format, subsampling: subsampling)
        let decoded = try ImageSource(bytes: whole).makeReader().readAll()
        for size in [Size(width: 100, height: 37), Size(width: 256, height: 9), Size(width: 1, height: 1)] {
            let cropped = try JPEGLosslessCrop.topLeft(of: whole, size: size, name: "tile")
            let corner = try ImageSource(bytes: cropped).makeReader().readAll()
            #expect(corner.size == size)
            let expected = TestImages.crop(decoded, Rect(size))
            if subsampling == .s444 {
                #expect(TestImages.maxDifference(corner, expected) == 0, "\(size)")
            } else {
                // Chroma is upsampled from its neighbours: only along the cut may it differ.
                #expect(TestImages.meanDifference(corner, expected) < 1, "\(size)")
            }
        }
    }

    @Test func aCornerLargerThanTheImageIsRefused() throws {
        let whole = try jpeg(.rgb8, subsampling: .s420)
        #expect(throws: TesseraError.self) {
            try JPEGLosslessCrop.topLeft(of: whole, size: Size(width: 257, height: 10), name: "tile")
        }
        #expect(throws: TesseraError.self) {
            try JPEGLosslessCrop.topLeft(of: Array(whole.prefix(100)), size: Size(width: 10, height: 10), name: "tile")
        }
    }
}
