/// What reads a URL: sends one request and returns the server's answer whatever its status. `HTTPClient`
/// implements it over libcurl; tests implement it over bytes in memory.
public protocol HTTPFetching: Sendable {
    /// Sends `request`; throws `TesseraError.http` naming the URL when no answer came.
    func send(_ request: HTTPClient.Request) throws -> HTTPClient.Response
}
