// The command line parser: each command declares its options once, and help text and parsing both come
// from that declaration.

/// One option of a command: `--name VALUE` or a `--name` flag, maybe with a one-letter `-x` alias.
struct Option {
    let name: String
    let short: Character?
    /// The value's placeholder in help (`N`, `x,y,w,h`); nil for a flag.
    let value: String?
    let help: String

    init(_ name: String, short: Character? = nil, value: String? = nil, _ help: String) {
        self.name = name
        self.short = short
        self.value = value
        self.help = help
    }
}

/// A command's interface: its name, usage line, one-line summary, longer description and options.
struct CommandSpec {
    let name: String
    let usage: String
    let summary: String
    let details: String
    let options: [Option]

    /// Options every command takes.
    static let common = [
        Option("memory-limit", value: "SIZE", "most memory a decode may buffer beyond its rows (default 1G; e.g. 512M, 4G)"),
        Option("stats", "print wall time, CPU time and peak memory to stderr when done"),
        Option("help", short: "h", "show this help"),
    ]

    var help: String {
        var lines = ["usage: tessera \(usage)", "", summary]
        if !details.isEmpty { lines += ["", details] }
        lines += ["", "options:"]
        let all = options + Self.common
        let labels = all.map { option in
            (option.short.map { "-\($0), " } ?? "    ") + "--\(option.name)" + (option.value.map { " \($0)" } ?? "")
        }
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (label, option) in zip(labels, all) {
            lines.append("  " + label.padding(toLength: width) + option.help)
        }
        return lines.joined(separator: "\n")
    }
}

/// A mistake on the command line: reported with the command's usage and exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// A command line parsed against a `CommandSpec`.
struct Arguments {
    let spec: CommandSpec
    private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    init(_ arguments: [String], spec: CommandSpec) throws {
        self.spec = spec
        let options = spec.options + CommandSpec.common
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name: String, inline: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inline = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
            } else {
                guard argument.count == 2, let option = options.first(where: { $0.short == argument.last }) else {
                    // A negative number is a value, not an option.
                    if Double(argument) != nil { positionals.append(argument); continue }
                    throw UsageError("unknown option \(argument)")
                }
                name = option.name
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option --\(name)")
            }
            if option.value == nil {
                if inline != nil { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
            } else if let inline {
                values[name] = inline
            } else {
                guard index < arguments.count else { throw UsageError("--\(name) needs a value (\(option.value!))") }
                values[name] = arguments[index]
                index += 1
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { values[name] }

    /// An integer option within `range`, or nil when absent.
    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = values[name] else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// One of a fixed set of words, or nil when absent.
    func choice(_ name: String, from choices: [String]) throws -> String? {
        guard let text = values[name] else { return nil }
        guard choices.contains(text.lowercased()) else {
            throw UsageError("--\(name) must be one of \(choices.joined(separator: ", ")), not '\(text)'")
        }
        return text.lowercased()
    }

    /// A size in bytes: a number with an optional K, M, G or T suffix (powers of 1024).
    func byteSize(_ name: String) throws -> Int? {
        guard let text = values[name] else { return nil }
        var digits = text.uppercased()
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) { digits.removeLast(suffix.count) }
        var multiplier = 1
        if let unit = digits.last, let power = ["K": 1, "M": 2, "G": 3, "T": 4][String(unit)] {
            multiplier = 1 << (10 * power)
            digits.removeLast()
        }
        guard let number = Double(digits), number > 0, number * Double(multiplier) < 9e18 else {
            throw UsageError("--\(name) must be a size such as 512M or 2G, not '\(text)'")
        }
        return Int(number * Double(multiplier))
    }

    /// Exactly `count` positional arguments, named in `what` for the message.
    func positionals(exactly count: Int, _ what: String) throws -> [String] {
        guard positionals.count == count else {
            throw UsageError("expected \(what), got \(positionals.count) argument\(positionals.count == 1 ? "" : "s")")
        }
        return positionals
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
