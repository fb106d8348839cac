import CServerShims
import Foundation
import Glibc
import Testing
@testable import TesseraServer

/// `Sources/CServerShims/epoll_drain.c`: a call of `epoll_wait` right after one that filled the whole event array
/// does not wait (libmicrohttpd 0.9.75's drain loop relies on it), and any other call waits as asked.
@Suite struct EpollDrainTests {
    /// An epoll set watching `count` pipes, each with a byte to read (level-triggered); closed after `body`.
    static func withReadySet<T>(count: Int, _ body: (Int32) throws -> T) rethrows -> T {
        let set = epoll_create1(0)
        var descriptors: [Int32] = []
        for _ in 0..<count {
            var ends: [Int32] = [0, 0]
            pipe(&ends)
            _ = write(ends[1], "x", 1)
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.fd = ends[0]
            epoll_ctl(set, EPOLL_CTL_ADD, ends[0], &event)
            descriptors += ends
        }
        defer {
            descriptors.forEach { close($0) }
            close(set)
        }
        return try body(set)
    }

    @Test func aCallAfterAFullBatchDoesNotWaitAndOthersDo() {
        var events = [epoll_event](repeating: epoll_event(), count: 4)
        Self.withReadySet(count: 4) { full in
            Self.withReadySet(count: 0) { empty in
                #expect(epoll_wait(full, &events, 4, 2_000) == 4)
                let drained = Date()
                #expect(epoll_wait(empty, &events, 4, 2_000) == 0)
                #expect(Date().timeIntervalSince(drained) < 1)

                // The empty call returned no full batch: the next one waits its whole timeout.
                let waited = Date()
                #expect(epoll_wait(empty, &events, 4, 300) == 0)
                #expect(Date().timeIntervalSince(waited) >= 0.25)
            }
        }
    }
}
