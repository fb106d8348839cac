import Foundation

/// The cores this process may run on: the CPU affinity mask Linux reports in /proc/self/status (so `taskset`
/// counts; Foundation's `activeProcessorCount` does not), else the active processors; at least 1.
public func availableCores() -> Int {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
       let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) {
        let mask = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
        let count = mask.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount }
        if count > 0 { return count }
    }
    return max(1, ProcessInfo.processInfo.activeProcessorCount)
}
