import Foundation
import Testing
@testable import TesseraServer

/// The one conditional-GET rule every cacheable response goes through.
@Suite struct ConditionalGETTests {
    let modified = Date(timeIntervalSince1970: 1_700_000_000.6)
    var validators: ConditionalGET {
        ConditionalGET(identity: "v1", lastModified: HTTPLastModified(modified), cacheControl: "no-cache")
    }

    private func answer(_ headers: [String: String]) -> HTTPResponse {
        validators.respond(to: HTTPRequest(method: "GET", path: "/x", headers: headers)) { (Array("body".utf8), "text/plain") }
    }

    @Test func aMatchingTagAStarOrAWeakFormOfTheTagIsNotModified() {
        let tag = validators.entityTag
        for header in [tag, "*", "\"other\", \(tag)", "W/\(tag)"] {
            let response = answer(["if-none-match": header])
            #expect(response.status == 304 && response.body.isEmpty, "\(header)")
            #expect(response.headers.contains { $0 == ("ETag", tag) })
            #expect(response.headers.contains { $0 == ("Last-Modified", "Tue, 14 Nov 2023 22:13:20 GMT") })
        }
    }

    @Test func anotherTagIsModifiedWhateverIfModifiedSinceSays() {
        let response = answer(["if-none-match": "\"other\"", "if-modified-since": HTTPDate.format(modified.addingTimeInterval(60))])
        #expect(response.status == 200 && response.body == Array("body".utf8))
        #expect(response.headers.first { $0.0 == "Content-Type" }?.1 == "text/plain")
        #expect(response.headers.first { $0.0 == "Cache-Control" }?.1 == "no-cache")
    }

    @Test func withoutATagTheDateDecidesToTheSecond() {
        #expect(answer(["if-modified-since": HTTPDate.format(modified)]).status == 304)
        #expect(answer(["if-modified-since": HTTPDate.format(modified.addingTimeInterval(-1))]).status == 200)
        #expect(answer(["if-modified-since": "not a date"]).status == 200)
        #expect(answer([:]).status == 200)
    }

    @Test func theBodyIsNotMadeForA304() {
        var made = false
        let response = validators.respond(to: HTTPRequest(method: "GET", path: "/x", headers: ["if-none-match": "*"])) {
            made = true
            return ([], "text/plain")
        }
        #expect(response.status == 304 && !made)
    }
}
