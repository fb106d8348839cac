import Testing
import Tessera
@testable import TesseraServer

private let image = Tessera.Size(width: 1000, height: 800)

private func resolve(_ region: String, _ size: String, _ rotation: String = "0", _ quality: String = "default.jpg",
                     limits: IIIFLimits = IIIFLimits()) throws -> IIIFResolvedRequest {
    try IIIFRequest(region: region, size: size, rotation: rotation, qualityAndFormat: quality)
        .resolve(for: image, limits: limits)
}

@Test func regionsResolveToPixelsClippedToTheImage() throws {
    #expect(try resolve("full", "max").region == Rect(x: 0, y: 0, width: 1000, height: 800))
    #expect(try resolve("square", "max").region == Rect(x: 100, y: 0, width: 800, height: 800))
    #expect(try resolve("900,700,500,500", "max").region == Rect(x: 900, y: 700, width: 100, height: 100))
    #expect(try resolve("pct:10,20,50,25", "max").region == Rect(x: 100, y: 160, width: 500, height: 200))
}

@Test func sizesFollowTheSpecIncludingUpscaling() throws {
    #expect(try resolve("full", "500,").size == Tessera.Size(width: 500, height: 400))
    #expect(try resolve("full", ",400").size == Tessera.Size(width: 500, height: 400))
    #expect(try resolve("full", "pct:50").size == Tessera.Size(width: 500, height: 400))
    #expect(try resolve("full", "300,300").size == Tessera.Size(width: 300, height: 300))
    #expect(try resolve("full", "!500,500").size == Tessera.Size(width: 500, height: 400))
    #expect(try resolve("full", "^!2000,500").size == Tessera.Size(width: 625, height: 500))
    #expect(try resolve("full", "^2000,").size == Tessera.Size(width: 2000, height: 1600))
    #expect(try resolve("full", "^pct:200").size == Tessera.Size(width: 2000, height: 1600))
    #expect(try resolve("full", "^max").size == image)
    #expect(try resolve("full", "max", limits: IIIFLimits(maxWidth: 500)).size == Tessera.Size(width: 500, height: 400))
}

@Test func upscalingWithoutTheCaretIsABadRequest() {
    for size in ["1100,", ",900", "pct:200", "1200,900", "!2000,3000"] {
        #expect(throws: IIIFError.self, "\(size)") { try resolve("full", size) }
    }
}

@Test func badSyntaxIsABadRequestAndOtherRotationsAreNotImplemented() {
    for (region, size, rotation, quality) in [("full", "max", "0", "default"), ("0,0,0,10", "max", "0", "default.jpg"),
                                              ("full", "0,", "0", "default.jpg"), ("full", "max", "-90", "default.jpg"),
                                              ("full", "max", "0", "fancy.jpg"), ("2000,2000,10,10", "max", "0", "default.jpg"),
                                              ("full", "max", "361", "default.jpg"), ("pct:-1,0,10,10", "max", "0", "default.jpg"),
                                              ("full", "!100,", "0", "default.jpg"),
                                              // Numerals other than ASCII digits, signs, exponents, a second point.
                                              ("\u{663},0,10,10", "max", "0", "default.jpg"), ("full", "\u{BD},", "0", "default.jpg"),
                                              ("full", "pct:\u{665}", "0", "default.jpg"), ("+1,0,10,10", "max", "0", "default.jpg"),
                                              ("pct:1e1,0,10,10", "max", "0", "default.jpg"), ("full", "max", "9.0.", "default.jpg"),
                                              ("full", "max", ".", "default.jpg"),
                                              // Formats of other than ASCII letters and digits, or none.
                                              ("full", "max", "0", "default.jp\u{E9}"), ("full", "max", "0", "default.j-g"),
                                              ("full", "max", "0", "default.")] {
        #expect(throws: IIIFError.self, "\(region)/\(size)/\(rotation)/\(quality)") {
            try resolve(region, size, rotation, quality)
        }
    }
    #expect(throws: IIIFError.notImplemented("rotation by 45.0 degrees (only multiples of 90)")) {
        try resolve("full", "max", "45")
    }
}

/// Numbers past what any image needs are bad requests, not arithmetic that overflows (found by the fuzzer: a
/// `^pct:` of 25 digits trapped the server).
@Test func hugeNumbersAreBadRequestsNotOverflows() {
    let huge = String(repeating: "1", count: 25), big = "2147483649"
    for (region, size) in [("full", "^pct:" + huge), ("full", "^pct:" + big), ("pct:" + huge + ",0,10,10", "max"),
                           ("\(big),0,10,10", "max"), ("9223372036854775807,0,9223372036854775807,1", "max"),
                           ("full", "^\(big),"), ("full", "^,\(big)"), ("full", "^!\(big),\(big)"),
                           // Numbers within the bound whose output has more pixels than an Int counts, or than any
                           // render has (the first trapped the server, found by the fuzzer, whatever its limits).
                           ("full", "^pct:1222222050"), ("full", "^pct:2147483647"), ("full", "^2147483647,2147483647"),
                           ("0,0,1000,1", "^,2147483647")] {
        #expect(throws: IIIFError.self, "\(region)/\(size)") { try resolve(region, size, "0", "default.jpg") }
        #expect(throws: IIIFError.self, "\(region)/\(size)") {
            try resolve(region, size, "0", "default.jpg", limits: IIIFService.Configuration().limits)
        }
    }
}

@Test func canonicalPathsUseFullMaxAndIntegerRotation() throws {
    let full = try resolve("0,0,1000,800", "1000,", "!360", "gray.png")
    #expect(full.canonicalPath(imageSize: image, maxSize: image) == "full/max/!0/gray.png")
    let part = try resolve("pct:10,20,50,25", "250,", "90")
    #expect(part.canonicalPath(imageSize: image, maxSize: image) == "100,160,500,200/250,100/90/default.jpg")
}
