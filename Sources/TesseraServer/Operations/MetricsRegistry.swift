import Foundation
import Synchronization

/// Metrics for an operator, in Prometheus' text exposition format (version 0.0.4): counters and histograms kept
/// here, by label values, and gauges and counters kept by their owners (a cache's size, a budget's use) read when
/// the page is asked for. Families are listed in the order they were declared.
public final class MetricsRegistry: Sendable {
    /// The media type of `exposition`.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A counter by label values, only ever added to.
    public final class Counter: Sendable {
        fileprivate let labelNames: [String]
        /// Made with room for a few series, not empty: the first series added would otherwise make the runtime
        /// build the dictionary's storage type (its conformances looked up), which cost a server's first request
        /// about 0.2 ms.
        fileprivate let values = Mutex<[[String]: Double]>(Dictionary(minimumCapacity: 8))

        fileprivate init(labelNames: [String]) { self.labelNames = labelNames }

        /// Adds `amount` (not negative) to the series of `labels`, one value per label name in order.
        public func add(_ amount: Double = 1, labels: [String] = []) {
            values.withLock { $0[labels, default: 0] += max(0, amount) }
        }
    }

    /// A histogram by label values: counts of observations at or under each bucket's bound, their sum and count.
    public final class Histogram: Sendable {
        fileprivate struct Series {
            var buckets: [Int]
            var sum = 0.0
            var count = 0
        }

        fileprivate let labelNames: [String]
        /// The buckets' upper bounds, ascending; `+Inf` is implied.
        fileprivate let bounds: [Double]
        /// Made with room for a few series, as a counter's are.
        fileprivate let series = Mutex<[[String]: Series]>(Dictionary(minimumCapacity: 8))

        fileprivate init(labelNames: [String], bounds: [Double]) {
            self.labelNames = labelNames
            self.bounds = bounds.sorted()
        }

        /// Records one observation of `value` in the series of `labels`.
        public func observe(_ value: Double, labels: [String] = []) {
            series.withLock { all in
                var one = all[labels] ?? Series(buckets: Array(repeating: 0, count: bounds.count))
                for (index, bound) in bounds.enumerated() where value <= bound { one.buckets[index] += 1 }
                one.sum += value
                one.count += 1
                all[labels] = one
            }
        }
    }

    private enum Family {
        case counter(Counter)
        case histogram(Histogram)
        /// A value its owner keeps, read at each exposition: `type` is `gauge` or `counter`.
        case read(type: String, value: @Sendable () -> Double)
    }

    private let families = Mutex<[(name: String, help: String, family: Family)]>([])

    /// An empty registry.
    public init() {}

    /// Declares a counter named `name` with `labelNames`.
    public func counter(_ name: String, help: String, labelNames: [String] = []) -> Counter {
        let counter = Counter(labelNames: labelNames)
        declare(name, help: help, .counter(counter))
        return counter
    }

    /// Declares a histogram named `name` with `labelNames` and buckets bounded by `bounds`.
    public func histogram(_ name: String, help: String, labelNames: [String] = [], bounds: [Double]) -> Histogram {
        let histogram = Histogram(labelNames: labelNames, bounds: bounds)
        declare(name, help: help, .histogram(histogram))
        return histogram
    }

    /// Declares a gauge whose value `read` gives at each exposition.
    public func gauge(_ name: String, help: String, read: @escaping @Sendable () -> Double) {
        declare(name, help: help, .read(type: "gauge", value: read))
    }

    /// Declares a counter kept elsewhere, whose value `read` gives at each exposition.
    public func counter(_ name: String, help: String, read: @escaping @Sendable () -> Double) {
        declare(name, help: help, .read(type: "counter", value: read))
    }

    private func declare(_ name: String, help: String, _ family: Family) {
        families.withLock { $0.append((name, help, family)) }
    }

    /// Every family in the text exposition format: `# HELP`, `# TYPE`, then one line per series.
    public var exposition: String {
        var text = ""
        for (name, help, family) in families.withLock({ $0 }) {
            let type: String
            var lines: [String] = []
            switch family {
            case let .counter(counter):
                type = "counter"
                for (labels, value) in counter.values.withLock({ $0 }).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                    lines.append("\(name)\(Self.labelSet(counter.labelNames, labels)) \(Self.number(value))")
                }
            case let .histogram(histogram):
                type = "histogram"
                for (labels, series) in histogram.series.withLock({ $0 }).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                    for (bound, count) in zip(histogram.bounds, series.buckets) {
                        let set = Self.labelSet(histogram.labelNames + ["le"], labels + [Self.number(bound)])
                        lines.append("\(name)_bucket\(set) \(count)")
                    }
                    lines.append("\(name)_bucket\(Self.labelSet(histogram.labelNames + ["le"], labels + ["+Inf"])) \(series.count)")
                    lines.append("\(name)_sum\(Self.labelSet(histogram.labelNames, labels)) \(Self.number(series.sum))")
                    lines.append("\(name)_count\(Self.labelSet(histogram.labelNames, labels)) \(series.count)")
                }
            case let .read(readType, value):
                type = readType
                lines.append("\(name) \(Self.number(value()))")
            }
            text += "# HELP \(name) \(Self.escape(help, quote: false))\n# TYPE \(name) \(type)\n"
            text += lines.map { $0 + "\n" }.joined()
        }
        return text
    }

    /// `{a="x",b="y"}`, or nothing without labels.
    private static func labelSet(_ names: [String], _ values: [String]) -> String {
        guard !names.isEmpty else { return "" }
        let pairs = zip(names, values).map { "\($0)=\"\(escape($1, quote: true))\"" }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    /// Backslashes and newlines escaped, and double quotes too in label values, as the format asks.
    private static func escape(_ text: String, quote: Bool) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
        if quote { escaped = escaped.replacingOccurrences(of: "\"", with: "\\\"") }
        return escaped
    }

    /// A sample value: integers without a fraction, others as Swift prints a Double (which Go's parser reads).
    private static func number(_ value: Double) -> String {
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
