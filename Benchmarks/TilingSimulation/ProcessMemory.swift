import Foundation

/// The process's resident memory, from Linux's `/proc/self`.
enum ProcessMemory {
    /// Resets the peak resident set (`VmHWM`) to the current one, so each phase reports its own peak.
    static func resetPeak() {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
    }

    /// The peak resident set since the last reset, in bytes.
    static func peakResidentBytes() -> Int { field("VmHWM") }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return kilobytes * 1024
        }
        return 0
    }
}
