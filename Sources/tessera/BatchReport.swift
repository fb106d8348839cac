import Foundation
import Synchronization
import Tessera

/// What happened to one input of a batch: one JSON line of a `--report` file (and of `--json` on stdout).
struct BatchRecord: Codable, Sendable, Equatable {
    enum Status: String, Codable, Sendable {
        /// Built from nothing; built reusing the tiles of an interrupted build; already complete; failed.
        case built, resumed, skipped, failed
    }

    var input: String
    var output: String
    var status: Status
    /// Wall time spent on the input, in seconds.
    var seconds: Double
    /// The process's peak resident memory while the input was tiled, in bytes (shared with the other inputs
    /// in progress when `--jobs` is above 1).
    var peakMemory: Int
    /// Tiles in the pyramid, and its bytes on disk; nil for a failed input.
    var tiles: Int?
    var bytes: Int?
    /// The one-line message of a failed input.
    var error: String?

    enum CodingKeys: String, CodingKey {
        case input, output, status, seconds, peakMemory = "peak_memory", tiles, bytes, error
    }

    /// Every key, null where there is no value, so each line has the same fields.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(input, forKey: .input)
        try container.encode(output, forKey: .output)
        try container.encode(status, forKey: .status)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(peakMemory, forKey: .peakMemory)
        try container.encode(tiles as Int?, forKey: .tiles)
        try container.encode(bytes as Int?, forKey: .bytes)
        try container.encode(error as String?, forKey: .error)
    }

    /// The record as one line of JSON, keys in a fixed order.
    var jsonLine: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

/// Where a batch's records go as each input ends: the `--report` file (rewritten by each run, so it lists every
/// input of the shard once, skipped ones included) and, with `--json`, stdout. Written from every job.
final class BatchReportWriter: Sendable {
    private let file: Mutex<FileHandle?>
    private let toStdout: Bool

    init(path: String?, toStdout: Bool) throws {
        self.toStdout = toStdout
        guard let path else {
            file = Mutex(nil)
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path)
        else { throw TesseraError.io(path: path, detail: "cannot write the report") }
        file = Mutex(handle)
    }

    /// Appends one record, a whole line in one write so a killed run leaves only whole lines.
    func append(_ record: BatchRecord) {
        let line = Data((record.jsonLine + "\n").utf8)
        file.withLock { $0?.write(line) }
        if toStdout { FileHandle.standardOutput.write(line) }
    }
}

/// `tile --summarize REPORT...`: the records of every report merged (an input listed twice, as after a rerun,
/// counts by its last record), into totals and the failed inputs.
enum BatchSummary {
    /// The totals of a set of records.
    struct Totals: Codable, Equatable {
        var inputs = 0, built = 0, resumed = 0, skipped = 0, failed = 0
        var seconds = 0.0
        var tiles = 0, bytes = 0
        /// The highest peak memory of any input, in bytes.
        var peakMemory = 0
        /// The failed inputs with their messages, in the reports' order.
        var failures: [Failure] = []

        struct Failure: Codable, Equatable {
            var input: String
            var error: String
        }

        enum CodingKeys: String, CodingKey {
            case inputs, built, resumed, skipped, failed, seconds, tiles, bytes, peakMemory = "peak_memory", failures
        }

        /// The totals on one line, as the batch and `--summarize` print them.
        var line: String {
            "\(inputs) inputs: \(built) built, \(resumed) resumed, \(skipped) skipped, \(failed) failed; "
                + "\(tiles) tiles, \(bytes) bytes, \(seconds.fixed(1)) s, "
                + "peak \((Double(peakMemory) / 1_048_576).fixed(1)) MiB"
        }

        init(_ records: [BatchRecord]) {
            for record in records {
                inputs += 1
                switch record.status {
                case .built: built += 1
                case .resumed: resumed += 1
                case .skipped: skipped += 1
                case .failed:
                    failed += 1
                    failures.append(Failure(input: record.input, error: record.error ?? ""))
                }
                seconds += record.seconds
                tiles += record.tiles ?? 0
                bytes += record.bytes ?? 0
                peakMemory = max(peakMemory, record.peakMemory)
            }
        }
    }

    /// The records of `reports`, the last for each input, in the order inputs first appear.
    static func merge(_ reports: [String]) throws -> [BatchRecord] {
        var order: [String] = [], latest: [String: BatchRecord] = [:]
        let decoder = JSONDecoder()
        for report in reports {
            guard let data = FileManager.default.contents(atPath: report) else {
                throw TesseraError.io(path: report, detail: "cannot read the report")
            }
            for (number, line) in String(decoding: data, as: UTF8.self).split(separator: "\n").enumerated() {
                guard let record = try? decoder.decode(BatchRecord.self, from: Data(line.utf8)) else {
                    throw TesseraError.corrupt(path: report, detail: "line \(number + 1) is not a report record")
                }
                if latest.updateValue(record, forKey: record.input) == nil { order.append(record.input) }
            }
        }
        return order.map { latest[$0]! }
    }

    /// Prints the failed inputs on stdout, one a line (a list for `--from`), and the totals on stderr; or, with
    /// `json`, the totals and failures as one JSON object on stdout. Fails when any input failed.
    static func run(reports: [String], json: Bool) throws {
        guard !reports.isEmpty else { throw UsageError("--summarize needs the report files to merge") }
        let totals = Totals(try merge(reports))
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(totals) + Data("\n".utf8))
        } else {
            let list = totals.failures.map { $0.input + "\n" }.joined()
            FileHandle.standardOutput.write(Data(list.utf8))
            FileHandle.standardError.write(Data((totals.line + "\n").utf8))
        }
        if totals.failed > 0 { throw CommandFailure(status: .failure) }
    }
}
