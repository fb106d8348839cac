import Foundation
import Testing
@testable import Tessera

/// The hosts `HTTPClient` takes as down after it could not connect: by scheme, host and port, until they answer,
/// one request a period trying them again.
@Suite struct UnreachableOriginsTests {
    @Test func originsAreSchemeHostAndPort() {
        #expect(UnreachableOrigins.origin(of: "http://Storage.Internal:9000/images/x.tif?v=1")
                == "http://storage.internal:9000")
        #expect(UnreachableOrigins.origin(of: "https://example.org/a.jpg") == "https://example.org:")
        #expect(UnreachableOrigins.origin(of: "https://example.org/a.jpg") != UnreachableOrigins.origin(of: "http://example.org/a.jpg"))
        #expect(UnreachableOrigins.origin(of: "not a url") == nil)
    }

    @Test func aHostIsDownUntilItsTimeRunsOutOrItAnswers() {
        let origins = UnreachableOrigins()
        let origin = "http://127.0.0.1:9"
        #expect(origins.failure(of: origin) == nil)
        origins.markDown(origin, detail: "couldn't connect", for: 3600)
        #expect(origins.failure(of: origin) == "couldn't connect")
        #expect(origins.failure(of: "http://127.0.0.1:10") == nil, "another port is another origin")
        origins.markUp(origin)
        #expect(origins.failure(of: origin) == nil)
    }

    @Test func whenItsTimeRunsOutOneRequestTriesTheHostWhileTheOthersStillFail() {
        let origins = UnreachableOrigins()
        let origin = "http://127.0.0.1:9"
        origins.markDown(origin, detail: "couldn't connect", for: 0.2)
        usleep(300_000)
        #expect(origins.failure(of: origin) == nil, "the one to try it again")
        #expect(origins.failure(of: origin) == "couldn't connect", "the others, while that one tries")
        origins.markDown(origin, detail: "timed out", for: 0.2)
        #expect(origins.failure(of: origin) == "timed out", "it failed again")
        origins.markUp(origin)
        #expect(origins.failure(of: origin) == nil, "it answered")
    }
}
