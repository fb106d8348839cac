import Foundation
import Tessera

/// `tessera index`: builds the entropy index of plain sequential JPEGs beside the pyramid cache, so regions and
/// reduced reads of them decode only the MCUs they cover instead of everything above.
enum IndexCommand: Command {
    static let name = "index"
    static let spec = CommandSpec(
        name: name, usage: "index FILE... [--cache DIR]",
        summary: "record where a plain JPEG's MCUs start, for random access into it",
        details: "One pass over each file; an index kept from before is reused while the file is unchanged and"
            + " rebuilt when it is stale or damaged. Progressive JPEGs need none.",
        options: [PyramidCacheOptions.folder])

    static func run(_ arguments: Arguments) throws {
        let paths = arguments.positionals
        guard !paths.isEmpty else { throw UsageError("expected at least one FILE") }
        let folder = arguments[PyramidCacheOptions.folder]
        var failed = false
        for path in paths {
            do {
                let start = Date()
                let (index, file, outcome) = try JPEGEntropyIndex.loadOrBuild(for: path, folder: folder)
                let seconds = Date().timeIntervalSince(start)
                let bytes = FileStamp(path: file)?.size ?? 0
                let share = 100 * Double(bytes) / Double(max(1, index.key.size))
                print("\(path): \(outcome.rawValue) in \(String(format: "%.2f", seconds)) s, \(bytes) bytes"
                      + " (\(String(format: "%.3f", share))% of the file), a state every \(index.stride) MCUs: \(file)")
            } catch {
                printError("\(error)")
                failed = true
            }
        }
        if failed { throw CommandFailure(status: .failure) }
    }
}
