import Foundation
import Tessera

/// `--shard K/N`: the K-th of N parts of a list (K from 0), every N-th input starting at the K-th, so N tasks
/// given the same list cover it exactly once with no coordination, and each always gets the same inputs.
struct Shard: Sendable, Equatable {
    let index: Int
    let count: Int

    /// `K/N` with 0 <= K < N, or nil.
    init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]),
              count >= 1, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// This shard's items, in their order.
    func select<Item>(_ items: [Item]) -> [Item] {
        stride(from: index, to: items.count, by: count).map { items[$0] }
    }
}

extension ValueKind where Value == Shard {
    static var shard: Self {
        ValueKind(placeholder: "K/N", requirement: "be K/N with K from 0 to N-1, such as 0/4",
                  read: { Shard(parsing: $0) }, show: { "\($0.index)/\($0.count)" })
    }
}

/// The inputs of a batch: the positional arguments, then the lines of `--from LIST` (one path a line, empty
/// lines left out, `\n` or `\r\n` ending them, `-` for stdin), each with the output its template names.
struct BatchInputs {
    /// One input and where its pyramid goes.
    struct Item: Sendable, Equatable {
        let input: String
        let output: String
    }

    let items: [Item]

    /// Reads the list and names the outputs; throws a `UsageError` when two inputs would write one output.
    init(arguments positionals: [String], list: String?, template: OutputTemplate) throws {
        var inputs = positionals
        if let list { inputs += try Self.lines(of: list) }
        guard !inputs.isEmpty else { throw UsageError("a batch needs inputs: give them as arguments or --from LIST") }
        try StandardStreams.refuseInputForTiling(inputs)
        guard template.namesEachInput || inputs.count == 1 else {
            throw UsageError("--output needs %s when there are several inputs, or they would overwrite each other")
        }
        items = inputs.map { Item(input: $0, output: template.path(for: $0)) }
        var first: [String: String] = [:]
        for item in items {
            if let other = first[item.output] {
                throw UsageError("\(other) and \(item.input) would both be written to \(item.output)")
            }
            first[item.output] = item.input
        }
    }

    /// The paths in a list file (or stdin for `-`), one a line.
    static func lines(of list: String) throws -> [String] {
        let data: Data
        if list == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: list) else {
                throw TesseraError.io(path: list, detail: "cannot read the list of inputs")
            }
            data = contents
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// Whether `input` is a URL (`scheme://...`): a batch reads `http(s)://` ones, and refuses the others.
    static func isURL(_ input: String) -> Bool {
        guard let separator = input.range(of: "://") else { return false }
        let scheme = input[..<separator.lowerBound]
        return !scheme.isEmpty && scheme.first!.isLetter
            && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
    }
}
