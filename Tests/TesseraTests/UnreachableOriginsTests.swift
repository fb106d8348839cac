import Testing
@testable import Tessera

/// The hosts `HTTPClient` takes as down after every try failed to connect: by scheme, host and port, until their
/// time runs out or they answer.
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
        origins.markDown(origin, detail: "couldn't connect", for: 0)
        #expect(origins.failure(of: origin) == nil, "a time already run out")
    }
}
