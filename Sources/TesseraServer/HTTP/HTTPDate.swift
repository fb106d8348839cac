import Foundation

/// HTTP dates (RFC 9110's IMF-fixdate), `Sun, 06 Nov 1994 08:49:37 GMT`, for Last-Modified and If-Modified-Since.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    static func parse(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT", let day = Int32(fields[1]),
              let month = months.firstIndex(of: String(fields[2])), let year = Int32(fields[3]) else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3 else { return nil }
        var parts = tm()
        parts.tm_mday = day
        parts.tm_mon = Int32(month)
        parts.tm_year = year - 1900
        parts.tm_hour = clock[0]
        parts.tm_min = clock[1]
        parts.tm_sec = clock[2]
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

/// A response's Last-Modified time, to the second as HTTP dates are, formatted once for all the responses that state
/// it (an open image's, `OpenImages.Image`).
struct HTTPLastModified: Sendable {
    /// Seconds since 1970, rounded down.
    let seconds: Int
    /// The time as an HTTP date.
    let text: String

    init(_ date: Date) {
        seconds = Int(date.timeIntervalSince1970.rounded(.down))
        text = HTTPDate.format(date)
    }
}
