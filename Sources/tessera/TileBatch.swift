import Foundation
import Synchronization
import Tessera

/// `tile` over many inputs: the batch's inputs (this shard's), each tiled into the output its template names,
/// one after another on every thread or `--jobs` at a time sharing them. An input whose output is complete is
/// skipped and a partial one resumed (unless `--force`); a failed input is reported on one line and fails only
/// itself; each ends with a record in the report.
struct TileBatch {
    let items: [BatchInputs.Item]
    let pyramid: PyramidSettings
    let jobs: Int
    let threadsPerJob: Int
    let force: Bool
    let reportPath: String?
    let json: Bool

    init(_ arguments: Arguments, pyramid: PyramidSettings) throws {
        typealias Tile = TileCommand
        guard let pattern = arguments[Tile.output] else { throw UsageError("a batch needs -o PATTERN") }
        let all = try BatchInputs(arguments: arguments.positionals, list: arguments[Tile.from],
                                  template: OutputTemplate(pattern: pattern)).items
        items = arguments[Tile.shard]?.select(all) ?? all
        self.pyramid = pyramid
        jobs = min(arguments[Tile.jobs], max(1, items.count))
        threadsPerJob = max(1, arguments[Tile.threads] / jobs)
        force = arguments[Tile.force]
        reportPath = arguments[Tile.report]
        json = arguments[Tile.json]
    }

    func run() throws {
        let writer = try BatchReportWriter(path: reportPath, toStdout: json)
        let next = Atomic(0)
        let records = Mutex<[BatchRecord]>([])
        DispatchQueue.concurrentPerform(iterations: jobs) { _ in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < items.count else { return }
                let record = tile(items[index])
                if let error = record.error { printError(error) }
                writer.append(record)
                records.withLock { $0.append(record) }
            }
        }
        let totals = BatchSummary.Totals(records.withLock { $0 })
        if !json { FileHandle.standardError.write(Data("tile: \(totals.line)\n".utf8)) }
        if totals.failed > 0 { throw CommandFailure(status: .failure) }
    }

    /// Tiles one input, returning its record whatever happened.
    private func tile(_ item: BatchInputs.Item) -> BatchRecord {
        if jobs == 1 { PeakMemory.reset() }
        let start = Date()
        var record = BatchRecord(input: item.input, output: item.output, status: .failed, seconds: 0, peakMemory: 0)
        do {
            guard !BatchInputs.isURL(item.input) || RemoteURL.isRemote(item.input) else {
                throw TesseraError.unsupported(path: item.input, feature: "a URL other than http:// or https:// as input")
            }
            let progress = jobs == 1 ? Progress("tiling \(item.input)") : nil
            defer { progress?.finish() }
            let built = try pyramid.build(input: item.input, output: item.output,
                                          partial: force ? .discard : .resumeIfSameBuild, threads: threadsPerJob,
                                          skippingComplete: !force, progress: progress)
            record.status = built.skipped ? .skipped : built.tilesReused > 0 ? .resumed : .built
            record.tiles = built.tiles
            record.bytes = built.bytes
        } catch {
            record.error = "\(error)"
        }
        record.seconds = Date().timeIntervalSince(start)
        record.peakMemory = PeakMemory.bytes()
        return record
    }
}
