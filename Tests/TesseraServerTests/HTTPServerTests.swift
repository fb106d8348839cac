import Foundation
import Testing
@testable import TesseraServer

/// The HTTP server's idle follow-ups: queued with their response, not when libmicrohttpd reports the request
/// complete (for a kept-alive connection, at its next event).
@Suite struct HTTPServerTests {
    @Test func aResponsesIdleFollowUpRunsWhileTheResponseIsStillBeingSent() throws {
        let followedUp = DispatchSemaphore(value: 0)
        let workers = HandlerPool(limits: HandlerPool.Limits(threads: 1, maxWait: 1))
        let server = HTTPServer(workers: workers) { _ in
            // More than the sockets' buffers hold: with the client reading nothing, the response is never all sent.
            var response = HTTPResponse(status: 200, body: [UInt8](repeating: 7, count: 64 << 20))
            response.idleFollowUp = { followedUp.signal() }
            return .now(response)
        }
        try server.start(port: 0, threads: 2, connectionTimeout: 30)
        defer { server.stop() }
        let port = try #require(server.port)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(client >= 0)
        defer { close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        #expect(connected)
        let request = Array("GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        #expect(send(client, request, request.count, 0) == request.count)
        #expect(followedUp.wait(timeout: .now() + 10) == .success, "the follow-up ran before the response was sent")
    }
}
