import Foundation

/// `--stats`: the wall time, CPU time and peak resident memory of this run, printed to stderr at exit, as the
/// seeds' time and memory tables report them.
struct RunStats {
    private let start = Date()

    func report() {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        let wall = Date().timeIntervalSince(start)
        let peak = Int(usage.ru_maxrss) * 1024
        let line = "stats: wall \(wall.fixed(3)) s, cpu \((user + system).fixed(3)) s (user \(user.fixed(3)) s, "
            + "sys \(system.fixed(3)) s), peak RSS \((Double(peak) / 1_048_576).fixed(1)) MiB\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// A progress line on stderr for work that takes seconds, shown only when stderr is a terminal and the work
/// has run for half a second, redrawn at most ten times a second.
final class Progress {
    private let label: String
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false
    private let enabled = isatty(STDERR_FILENO) != 0

    init(_ label: String) { self.label = label }

    /// Reports `done` of `total` units (rows, tiles).
    func update(_ done: Int, of total: Int) {
        guard enabled, total > 0 else { return }
        let now = Date()
        guard now.timeIntervalSince(start) > 0.5, now.timeIntervalSince(lastDraw) > 0.1 || done == total else { return }
        lastDraw = now
        let fraction = Double(done) / Double(total)
        let elapsed = now.timeIntervalSince(start)
        let remaining = fraction > 0 ? elapsed / fraction - elapsed : 0
        let bar = String(repeating: "#", count: Int(fraction * 30)).padding(toLength: 30)
        let line = "\r\(label) [\(bar)] \((fraction * 100).fixed(0))%  ETA \(remaining.fixed(0)) s "
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    /// Clears the line.
    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

/// The process's peak resident memory (Linux's VmHWM), which can be reset so that each input of a batch run
/// one at a time reports its own peak.
enum PeakMemory {
    /// The peak so far, in bytes (0 where /proc is not there).
    static func bytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kibibytes * 1024
    }

    /// Starts the peak again from the memory resident now (writing 5 to clear_refs, Linux 4.0 and later).
    static func reset() {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return }
        _ = write(descriptor, "5", 1)
        close(descriptor)
    }
}
