import Foundation
import Tessera

/// The options every command takes, and the threads option of those that work on several threads.
enum CommonOptions {
    static let memoryLimit = Option("memory-limit", .byteSize, default: MemoryBudget.default.limit,
                                    "most memory a decode may buffer beyond its rows, e.g. 512M or 4G")
    static let stats = Option(flag: "stats", "print wall time, CPU time and peak memory to stderr when done")
    static let help = Option(flag: "help", short: "h", "show this help")

    static let all: [any OptionDeclaration] = [memoryLimit, stats, help]

    /// `--threads N`: how many of `what` run at once, `perCore` per core unless given.
    static func threads(_ what: String, perCore: Int = 1, upTo limit: Int = 256) -> Option<Int> {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return Option("threads", .integer(in: 1...limit),
                      default: .described(perCore == 1 ? "one per core" : "\(perCore) per core", perCore * cores), what)
    }
}

extension Arguments {
    /// The memory budget from `--memory-limit`.
    var budget: MemoryBudget { MemoryBudget(limit: self[CommonOptions.memoryLimit]) }
}
