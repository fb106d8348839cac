import Foundation

/// The origins (scheme, host and port) that could not be connected to lately, each with why, until when it is taken
/// as down, and for how long at a time: what lets `HTTPClient` fail a request to a source that is down at once, with
/// the words of the request that found it down, rather than after its retries (1.4 s with the default back-off) or
/// its connect timeout (10 s) while a server's worker waits on each. When the time runs out, one request tries the
/// host again while the others go on failing at once, so a host that stays down costs one wait a period, not one a
/// request. Thread-safe.
final class UnreachableOrigins: @unchecked Sendable {
    private struct Entry {
        var until: UInt64
        var period: UInt64
        var detail: String
    }

    private let lock = NSLock()
    private var down: [String: Entry] = [:]

    /// `url`'s origin (its scheme, host and port, lower-cased), or nil when it has no host.
    static func origin(of url: String) -> String? {
        guard let parts = URLComponents(string: url), let host = parts.host, !host.isEmpty else { return nil }
        return "\(parts.scheme ?? "")://\(host):\(parts.port.map(String.init) ?? "")".lowercased()
    }

    /// Why `origin` is taken as down, or nil when the caller may try it: it is not down, or its time has run out
    /// and the caller is the one to try it again (the others fail for one more period, until that one's request
    /// answers, `markUp`, or fails, `markDown`).
    func failure(of origin: String) -> String? {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        defer { lock.unlock() }
        guard var entry = down[origin] else { return nil }
        if entry.until > now { return entry.detail }
        entry.until = now + entry.period
        down[origin] = entry
        return nil
    }

    /// Takes `origin` as down for `seconds` from now, and for `seconds` at a time after that, for `detail`
    /// (libcurl's words).
    func markDown(_ origin: String, detail: String, for seconds: Double) {
        let period = UInt64(max(0, seconds) * 1e9)
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        down[origin] = Entry(until: now + period, period: period, detail: detail)
        lock.unlock()
    }

    /// Takes `origin` as up: it answered.
    func markUp(_ origin: String) {
        lock.lock()
        if !down.isEmpty { down[origin] = nil }
        lock.unlock()
    }
}
