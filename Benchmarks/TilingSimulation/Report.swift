import Foundation

/// The results as a table, aligned text or Markdown.
struct Report {
    var budgetBytes: Int
    var rows: [Simulation.Result] = []
    var baseline: (seconds: Double, peakRSSBytes: Int, imageBytes: Int)?

    private static let header = [
        "tile px", "frames", "frames with a gap", "fully covered", "warm-up frames",
        "worst gap after warm-up", "peak cache MiB", "peak in flight MiB",
        "peak cache+flight MiB", "peak RSS MiB", "tiles decoded", "cache hit rate", "sharp after zoom step: median",
        "max", "overrun frames",
    ]

    /// Whether every replay met the criteria: cache plus in-flight bytes within the budget, and at least
    /// 99% of frames fully covered.
    var criteriaMet: Bool {
        rows.allSatisfy { $0.peakTotalBytes <= budgetBytes && coveredShare($0) >= 0.99 }
    }

    func render(markdown: Bool) -> String {
        var table = rows.map(cells)
        if let baseline {
            table.append(["whole image", "-", "-", "-", "-", "-", "-", "-", mebibytes(baseline.imageBytes),
                          mebibytes(baseline.peakRSSBytes), "1 decode", "-",
                          "\(format(baseline.seconds * 1000, digits: 0)) ms to decode", "-", "-"])
        }
        let lines = [Self.header] + table
        if markdown {
            let rule = Self.header.map { _ in "---:" }
            return ([Self.header, rule] + table).map { "| " + $0.joined(separator: " | ") + " |" }
                .joined(separator: "\n")
        }
        let widths = Self.header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.map { row in
            zip(row, widths).map { String(repeating: " ", count: $1 - $0.count) + $0 }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    private func cells(_ result: Simulation.Result) -> [String] {
        let settled = result.framesToSharp.compactMap { $0 }.sorted()
        let never = result.framesToSharp.count - settled.count
        let median = settled.isEmpty ? 0 : settled[settled.count / 2]
        let lookups = result.cacheHits + result.cacheMisses
        return [
            "\(result.tileSize)", "\(result.frames)", "\(result.uncoveredFrames)",
            "\(format(coveredShare(result) * 100, digits: 2))%",
            "\(result.warmUpFrames)",
            result.worstUncoveredFraction == 0 ? "0" : "\(format(result.worstUncoveredFraction * 100, digits: 2))%",
            mebibytes(result.peakCacheBytes), mebibytes(result.peakInFlightBytes), mebibytes(result.peakTotalBytes),
            mebibytes(result.peakRSSBytes), "\(result.tilesDecoded)",
            lookups == 0 ? "-" : "\(format(Double(result.cacheHits) / Double(lookups) * 100, digits: 1))%",
            frames(median), frames(settled.last ?? 0) + (never > 0 ? ", \(never) never" : ""),
            "\(result.overrunFrames)",
        ]
    }

    private func coveredShare(_ result: Simulation.Result) -> Double {
        Double(result.frames - result.uncoveredFrames) / Double(max(1, result.frames))
    }

    private func frames(_ count: Int) -> String { "\(count) (\(format(Double(count) * 1000 / 60, digits: 0)) ms)" }

    private func mebibytes(_ bytes: Int) -> String { format(Double(bytes) / 1_048_576, digits: 1) }
}
