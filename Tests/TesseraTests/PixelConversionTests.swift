import Testing
@testable import Tessera

@Test func grayAlphaFlattensOntoTheBackgroundAsRGB() throws {
    let image = ImageBuffer(width: 2, height: 1, format: .grayAlpha8, bytes: [200, 255, 100, 0])
    let reader = FormatConvertingReader(source: BufferReader(image), format: .rgb8, background: [0, 0, 255])
    let out = try reader.readAll()
    #expect(out.pixel(x: 0, y: 0) == [200, 200, 200])
    #expect(out.pixel(x: 1, y: 0) == [0, 0, 255])
}

@Test func rgbToGrayUsesRec601Luma() throws {
    let image = ImageBuffer(width: 1, height: 1, format: .rgb8, bytes: [255, 0, 0])
    let out = try FormatConvertingReader(source: BufferReader(image), format: .gray8).readAll()
    #expect(out.pixel(x: 0, y: 0) == [76])
}

@Test func sixteenBitNarrowsWithRounding() throws {
    var image = ImageBuffer(width: 2, height: 1, format: PixelFormat(.gray, bitDepth: 16))
    image.bytes.withUnsafeMutableBytes {
        $0.storeBytes(of: UInt16(65535), toByteOffset: 0, as: UInt16.self)
        $0.storeBytes(of: UInt16(385), toByteOffset: 2, as: UInt16.self)  // 385 / 257 = 1.498
    }
    let out = try FormatConvertingReader(source: BufferReader(image), format: .gray8).readAll()
    #expect(out.bytes == [255, 1])
}

@Test func boxShrinkAveragesWholeAndEdgeBlocks() throws {
    let image = ImageBuffer(width: 3, height: 3, format: .gray8, bytes: [0, 10, 20, 30, 40, 50, 60, 70, 80])
    let out = try BoxShrinkReader(source: BufferReader(image), factor: 2).readAll()
    #expect(out.size == Size(width: 2, height: 2))
    #expect(out.bytes == [20, 35, 65, 80])
}

@Test func edgeExtendingRepeatsTheLastColumnAndRow() throws {
    let image = ImageBuffer(width: 2, height: 2, format: .gray8, bytes: [1, 2, 3, 4])
    let out = try EdgeExtendingReader(source: BufferReader(image), size: Size(width: 3, height: 3)).readAll()
    #expect(out.bytes == [1, 2, 2, 3, 4, 4, 3, 4, 4])
}
