import Foundation

/// What a scripted session measured: frame times and memory, written as JSON for tests and benchmarks.
public struct FrameReport: Codable, Sendable {
    /// Frames drawn.
    public var frames = 0
    /// The median time to build and draw a frame, in milliseconds (pacing sleeps excluded).
    public var frameTimeP50Milliseconds = 0.0
    /// The 99th percentile of the frame times, in milliseconds.
    public var frameTimeP99Milliseconds = 0.0
    /// The slowest frame, in milliseconds.
    public var frameTimeMaxMilliseconds = 0.0
    /// The process's peak resident memory, in bytes (Linux's VmHWM).
    public var peakRSSBytes = 0
    /// The tile cache's budget, in bytes.
    public var cacheBudgetBytes = 0
    /// The most bytes the tile cache held, by its own statistics.
    public var peakCacheBytes = 0
    /// The most bytes the cache held plus those reserved for tiles being made, sampled every frame.
    public var peakCacheAndReservedBytes = 0
    /// The most bytes of tile textures alive at once.
    public var peakTextureBytes = 0
    /// The bytes of tile textures alive at the end.
    public var textureBytesAtEnd = 0
    /// The most bytes the visible and backstop tiles needed in one frame (they are kept whatever the budget).
    public var peakPinnedBytes = 0
    /// Tiles made, and tiles whose source failed.
    public var tilesMade = 0
    public var tilesFailed = 0
    /// SDL's video driver and renderer, and whether the renderer waited for vsync.
    public var videoDriver = ""
    public var renderer = ""
    public var vsync = false
    /// The contents scale (pixels per point at 1x) the tiles were cut for.
    public var contentsScale = 1.0
    /// Wall time of the whole script, in seconds.
    public var seconds = 0.0

    /// An empty report.
    public init() {}

    /// Sets the frame-time fields from `times` (seconds, one per frame).
    public mutating func setFrameTimes(_ times: [Double]) {
        frames = times.count
        let sorted = times.sorted()
        frameTimeP50Milliseconds = Self.percentile(sorted, 0.5) * 1000
        frameTimeP99Milliseconds = Self.percentile(sorted, 0.99) * 1000
        frameTimeMaxMilliseconds = (sorted.last ?? 0) * 1000
    }

    /// The `fraction` quantile of `sorted` by the nearest rank (0 for no values).
    public static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count, max(1, rank)) - 1]
    }

    /// The report as pretty-printed JSON with sorted keys.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}

/// The process's resident memory, from Linux's `/proc/self/status`.
enum ProcessMemory {
    /// The peak resident set so far, in bytes.
    static func peakResidentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return (line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
        }
        return 0
    }
}
