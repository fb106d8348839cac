import Testing
@testable import Tessera

@Test func rectIntersectionClipsToTheOverlap() {
    let a = Rect(x: 0, y: 0, width: 10, height: 10)
    #expect(a.intersection(Rect(x: 5, y: 8, width: 10, height: 10)) == Rect(x: 5, y: 8, width: 5, height: 2))
    #expect(a.intersection(Rect(x: 20, y: 0, width: 5, height: 5)).isEmpty)
}

@Test func reducedRectCoversTheSourceRectangle() {
    #expect(Rect(x: 3, y: 5, width: 10, height: 3).reduced(by: 2) == Rect(x: 1, y: 2, width: 6, height: 2))
    #expect(Rect(x: 0, y: 0, width: 17, height: 8).reduced(by: 8) == Rect(x: 0, y: 0, width: 3, height: 1))
}

@Test func formatsAreDetectedFromContent() {
    #expect(ImageFormat.detect([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
    #expect(ImageFormat.detect([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) == .png)
    #expect(ImageFormat.detect(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBP".utf8)) == .webp)
    #expect(ImageFormat.detect(Array("GIF89a".utf8)) == .gif)
    #expect(ImageFormat.detect([0x49, 0x49, 0x2A, 0x00]) == .tiff)
    #expect(ImageFormat.detect(Array("BM".utf8)) == .bmp)
    #expect(ImageFormat.detect(Array("hello".utf8)) == nil)
}

@Test func errorMessagesReadAsOneSentence() {
    #expect(TesseraError.truncated(path: "china.jpg", detail: "after row \(4112.grouped) of \(8554.grouped)").description
        == "china.jpg: truncated after row 4,112 of 8,554")
    #expect(ByteCount(1536 * 1024 * 1024).description == "1.5 GiB")
    #expect(ByteCount(24 * 1024 * 1024).description == "24 MiB")
}

@Test func exifOrientationIsReadFromBothByteOrders() {
    // "Exif\0\0", little-endian TIFF header, IFD0 at 8 with one entry: tag 0x0112, SHORT, count 1, value 6.
    let little: [UInt8] = Array("Exif\u{0}\u{0}".utf8) + [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0,
                                                             0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
    #expect(EXIF.orientation(in: little) == 6)
    let big: [UInt8] = [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0]
    #expect(EXIF.orientation(in: big) == 8)
    #expect(EXIF.orientation(in: [1, 2, 3]) == nil)
}

@Test func fixedDecimalsRoundHalfAwayFromZero() {
    #expect(1.25.fixed(1) == "1.3")
    #expect(0.125.fixed(3) == "0.125")
    #expect(12.0.fixed(0) == "12")
    #expect((-0.04).fixed(1) == "0.0")
    #expect((-2.5).fixed(1) == "-2.5")
    #expect(3.14159.fixed(2) == "3.14")
    #expect(100.0.fixed(1) == "100.0")
}
