import Foundation
import Testing
import Tessera
@testable import TesseraServer

/// The HTTP server's idle follow-ups: queued with their response, not when libmicrohttpd reports the request
/// complete (for a kept-alive connection, at its next event); its polling threads set up for JPEG.
@Suite struct HTTPServerTests {
    @Test func aResponsesIdleFollowUpRunsWhileTheResponseIsStillBeingSent() throws {
        let followedUp = DispatchSemaphore(value: 0)
        let (server, client) = try Self.serve(sent: "GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") { _ in
            // More than the sockets' buffers hold: with the client reading nothing, the response is never all sent.
            var response = HTTPResponse(status: 200, body: [UInt8](repeating: 7, count: 64 << 20))
            response.idleFollowUp = { followedUp.signal() }
            return .now(response)
        }
        defer {
            close(client)
            server.stop()
        }
        #expect(followedUp.wait(timeout: .now() + 10) == .success, "the follow-up ran before the response was sent")
    }

    /// A polling thread has libjpeg-turbo set up (`JPEGThreadSetup`) once a connection it serves opens, before the
    /// requests it renders: the handler, on that thread, finds it done.
    @Test func aPollingThreadIsSetUpForJPEGBeforeItsFirstRequest() throws {
        let request = "GET /setup HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        let (server, client) = try Self.serve(sent: request) { _ in
            .now(HTTPResponse(status: 200, body: Array("set up here: \(JPEGThreadSetup.prepareCallingThread())".utf8)))
        }
        defer {
            close(client)
            server.stop()
        }
        var response = [UInt8](), buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = recv(client, &buffer, buffer.count, 0), count > 0 { response += buffer[..<count] }
        #expect(String(decoding: response, as: UTF8.self).hasSuffix("\r\n\r\nset up here: false"))
    }

    /// `start` has each polling thread take a connection of the server's own, so that no client's first request
    /// on a thread waits for the thread's set-up.
    @Test func everyPollingThreadIsSetUpWhenTheServerStarts() throws {
        let server = HTTPServer(workers: HandlerPool(limits: HandlerPool.Limits(threads: 1, maxWait: 1))) { _ in
            .now(HTTPResponse(status: 204))
        }
        try server.start(port: 0, threads: 2, connectionTimeout: 30)
        defer { server.stop() }
        #expect(server.pollingThreadsPrepared == 2)
    }

    /// A server on a free loopback port answering with `handler`, and a client connected to it that has sent
    /// `request` (its request line and headers); the caller closes the client and stops the server.
    private static func serve(sent request: String, _ handler: @escaping HTTPServer.Handler) throws
        -> (server: HTTPServer, client: Int32) {
        let workers = HandlerPool(limits: HandlerPool.Limits(threads: 1, maxWait: 1))
        let server = HTTPServer(workers: workers, handler: handler)
        try server.start(port: 0, threads: 2, connectionTimeout: 30)
        let client: Int32
        do {
            let port = try #require(server.port)
            client = try #require(HTTPServer.connect(to: "127.0.0.1", port: port))
        } catch {
            server.stop()
            throw error
        }
        let bytes = Array(request.utf8)
        #expect(send(client, bytes, bytes.count, 0) == bytes.count)
        return (server, client)
    }
}
