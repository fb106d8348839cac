import Foundation
import Testing
@testable import TesseraServer

/// Identifiers and paths are percent-decoded as Foundation's `removingPercentEncoding` decodes them.
@Suite struct PercentDecodingTests {
    static let cases = [
        "plain.tif", "", "a%20b.tif", "caf%C3%A9", "%E2%82%AC%2f", "100%25", "a+b", "%7e%7E", "sub%2Ffolder%2Fimage.jp2",
        "%", "%4", "%zz", "a%2", "%G0", "%FF", "%C3", "%C3%28", "%00", "%ED%A0%80", "ok%F0%9F%98%80",
    ]

    @Test(arguments: cases)
    func decodesAsFoundationDoes(text: String) {
        #expect(text.percentDecoded == text.removingPercentEncoding)
        #expect(text.dropFirst(0).percentDecoded == text.removingPercentEncoding)
    }

    @Test func decodesBytesAsUTF8AndRefusesBadEscapes() {
        #expect("caf%C3%A9%20%E2%82%AC".percentDecoded == "café €")
        #expect("a%2Fb".percentDecoded == "a/b")
        #expect("a%2".percentDecoded == nil)
        #expect("%FFx".percentDecoded == nil)
        #expect("50%".percentDecoded == nil)
    }
}
