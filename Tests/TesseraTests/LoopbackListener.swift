import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket listening on 127.0.0.1 at a free port, with room for `backlog` connections not yet accepted: what
/// the tests of the HTTP client stand their hosts on. Whoever makes it closes `descriptor`.
struct LoopbackListener {
    let descriptor: Int32
    /// Where it listens, the port filled in.
    let address: sockaddr_in
    var port: Int { Int(UInt16(bigEndian: address.sin_port)) }

    init(backlog: Int32) throws {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, backlog) == 0
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard descriptor >= 0, listening else {
            if descriptor >= 0 { close(descriptor) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.descriptor = descriptor
        self.address = address
    }
}
