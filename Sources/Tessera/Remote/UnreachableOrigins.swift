import Foundation

/// The origins (scheme, host and port) that could not be connected to lately, each with why and until when it is
/// taken as down: what lets `HTTPClient` fail a request to a source that is down at once, with the words of the
/// request that found it down, rather than after its retries (1.4 s with the default back-off) while a server's
/// worker waits on each. Thread-safe.
final class UnreachableOrigins: @unchecked Sendable {
    private let lock = NSLock()
    private var down: [String: (until: UInt64, detail: String)] = [:]

    /// `url`'s origin (its scheme, host and port, lower-cased), or nil when it has no host.
    static func origin(of url: String) -> String? {
        guard let parts = URLComponents(string: url), let host = parts.host, !host.isEmpty else { return nil }
        return "\(parts.scheme ?? "")://\(host):\(parts.port.map(String.init) ?? "")".lowercased()
    }

    /// Why `origin` is taken as down, or nil when it is not, or no longer.
    func failure(of origin: String) -> String? {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        defer { lock.unlock() }
        guard let entry = down[origin] else { return nil }
        if entry.until > now { return entry.detail }
        down[origin] = nil
        return nil
    }

    /// Takes `origin` as down for `seconds` from now, for `detail` (libcurl's words).
    func markDown(_ origin: String, detail: String, for seconds: Double) {
        let until = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        lock.lock()
        down[origin] = (until, detail)
        lock.unlock()
    }

    /// Takes `origin` as up: it answered.
    func markUp(_ origin: String) {
        lock.lock()
        if !down.isEmpty { down[origin] = nil }
        lock.unlock()
    }
}
