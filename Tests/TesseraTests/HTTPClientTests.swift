import Foundation
import Testing
@testable import Tessera
#if canImport(Glibc)
import Glibc
#endif

/// How `HTTPClient` meets hosts that do not answer: a listener on 127.0.0.1 that never accepts. With room in its
/// queue of connections, the kernel completes each connection and the request gets no answer; with the queue full,
/// new connections are dropped unanswered, as a firewall that drops packets does.
@Suite struct HTTPClientTests {
    /// A listening socket that never accepts, its queue filled with `fillers` connections (a backlog of one holds
    /// one). `close` closes them all.
    private struct SilentListener {
        let port: Int
        private let sockets: [Int32]

        init(backlog: Int32, fillers: Int) throws {
            let listener = try LoopbackListener(backlog: backlog)
            var address = listener.address
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            var sockets = [listener.descriptor]
            for _ in 0..<fillers {
                let filler = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                _ = withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) }
                }
                sockets.append(filler)
            }
            usleep(100_000)
            self.sockets = sockets
            port = listener.port
        }

        func close() { sockets.forEach { _ = Glibc.close($0) } }
    }

    private static func failure(of body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch TesseraError.http(_, let detail) {
            return detail
        } catch {
            return "\(error)"
        }
    }

    /// Two requests one after the other to `host` with `configuration` (down hosts remembered for 60 s): why each
    /// failed, and how long the first took in seconds.
    private static func twoFailures(to host: SilentListener, _ configuration: HTTPClient.Configuration) throws
        -> (first: String, seconds: Double, second: String) {
        var configuration = configuration
        configuration.downFor = 60
        let client = HTTPClient(configuration: configuration)
        let url = "http://127.0.0.1:\(host.port)/x.tif"
        let start = Date()
        let first = try #require(failure { _ = try client.send(.init(url: url)) })
        let seconds = Date().timeIntervalSince(start)
        return (first, seconds, try #require(failure { _ = try client.send(.init(url: url)) }))
    }

    @Test func aConnectTimeoutIsNotTriedAgainAndTakesTheHostAsDown() throws {
        let host = try SilentListener(backlog: 0, fillers: 2)
        defer { host.close() }
        var configuration = HTTPClient.Configuration()
        configuration.connectTimeout = 0.5
        let (first, seconds, second) = try Self.twoFailures(to: host, configuration)
        // Four tries would take 4 x 0.5 s and 1.4 s of back-off.
        #expect(seconds < 2.5, "tried once: \(first)")
        #expect(first.contains("timeout") || first.contains("timed out"), "\(first)")
        #expect(second == first + " (not tried again within 60 s)")
    }

    @Test func aRequestConnectedButUnansweredIsTriedAgainAndLeavesTheHostUp() throws {
        let host = try SilentListener(backlog: 8, fillers: 0)
        defer { host.close() }
        var configuration = HTTPClient.Configuration()
        configuration.requestTimeout = 0.3
        configuration.attempts = 2
        configuration.firstBackoff = 0.05
        let (first, seconds, second) = try Self.twoFailures(to: host, configuration)
        #expect(seconds >= 0.6, "two tries of 0.3 s: \(first)")
        #expect(!second.contains("not tried again"), "\(second)")
    }
}
