// The command line parser: each command declares its options once (`Option`), and parsing, help and the values
// the command reads all come from those declarations.

/// A mistake on the command line: reported with the command's usage and exit status 2.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// A command line parsed against a `CommandSpec`: every value read and checked by its declaration as it is
/// parsed, then read by the command through the declaration, `arguments[TileCommand.layout]`.
struct Arguments {
    let spec: CommandSpec
    private(set) var positionals: [String] = []
    /// The values given, by option name, as their declarations read them.
    private var values: [String: any Sendable] = [:]
    /// The text given for each option, by name; a flag's is empty.
    private var texts: [String: String] = [:]

    /// Parses `arguments` (without the command's name): `--name VALUE`, `--name=VALUE`, `-x VALUE`, flags, and
    /// positionals (after `--`, everything; `-` and negative numbers are positionals too).
    init(_ arguments: [String], spec: CommandSpec) throws(UsageError) {
        self.spec = spec
        let options = spec.allOptions
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
            if let renamed = spec.renamed[name] { throw UsageError("--\(name) is now --\(renamed)") }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option --\(name)")
            }
            if option.placeholder == nil {
                if inline != nil { throw UsageError("--\(name) takes no value") }
                values[name] = true
                texts[name] = ""
                continue
            }
            guard let text = inline ?? (index < arguments.count ? arguments[index] : nil) else {
                throw UsageError("--\(name) needs a value (\(option.placeholder!))")
            }
            if inline == nil { index += 1 }
            values[name] = try option.parse(text)
            texts[name] = text
        }
        if texts[CommonOptions.help.name] == nil,
           let missing = options.first(where: { $0.isRequired && texts[$0.name] == nil }) {
            throw UsageError("--\(missing.name) \(missing.placeholder ?? "") is required")
        }
    }

    /// The value of `option`: the one given, else its default. An option the command does not declare (another
    /// with the same name may be) reads as its default.
    subscript<Value>(option: Option<Value>) -> Value {
        if let given = values[option.name] as? Value, declares(option) { return given }
        switch option.fallback {
        case .value(let value), .described(_, let value): return value
        case .computed(_, let value), .depending(_, let value): return value(self)
        case .required: preconditionFailure("--\(option.name) is required, which parsing checked")
        }
    }

    /// Whether `option` is this command's: one of its options has that name, value type and help.
    func declares<Value>(_ option: Option<Value>) -> Bool {
        (spec.allOptions.first { $0.name == option.name } as? Option<Value>)?.help == option.help
    }

    /// Whether the command line gave `option`.
    func isGiven(_ option: some OptionDeclaration) -> Bool { texts[option.name] != nil }

    /// The text the command line gave for `option` (empty for a flag), or nil when it did not give it.
    func text(of option: any OptionDeclaration) -> String? { texts[option.name] }

    /// Exactly `count` positional arguments, named in `what` for the message.
    func positionals(exactly count: Int, _ what: String) throws(UsageError) -> [String] {
        guard positionals.count == count else {
            throw UsageError("expected \(what), got \(positionals.count) argument\(positionals.count == 1 ? "" : "s")")
        }
        return positionals
    }
}
