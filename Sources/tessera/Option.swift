/// What the parser and help need of an option whatever its value's type: its names, its placeholder, how its
/// text is read, and its help line.
protocol OptionDeclaration: Sendable {
    /// The long name, without the leading `--`.
    var name: String { get }
    /// The one-letter alias, written `-x`.
    var short: Character? { get }
    /// The value's placeholder in help (`N`, `x,y,w,h`); nil for a flag, which takes no value.
    var placeholder: String? { get }
    /// Whether the command line must give it.
    var isRequired: Bool { get }
    /// The help text with the accepted values and the default appended, as `--help` shows it.
    var helpText: String { get }
    /// Reads the value from its text, or throws a `UsageError` naming the option and what it accepts.
    func parse(_ text: String) throws(UsageError) -> any Sendable
}

/// One option of a command, declared once: its name, one-letter alias, value kind, default and help. Help is
/// rendered from it and commands read the value through it, as `arguments[TileCommand.quality]`.
struct Option<Value: Sendable>: OptionDeclaration {
    let name: String
    let short: Character?
    /// How the value is written, read and shown.
    let kind: ValueKind<Value>
    /// The value when the command line does not give one.
    let fallback: OptionDefault<Value>
    /// What the option does; `helpText` adds the accepted values and the default.
    let help: String

    init(_ name: String, short: Character? = nil, _ kind: ValueKind<Value>, default fallback: OptionDefault<Value>,
         _ help: String) {
        self.name = name
        self.short = short
        self.kind = kind
        self.fallback = fallback
        self.help = help
    }

    /// An option whose default is a plain value, shown in help as `kind` shows it.
    init(_ name: String, short: Character? = nil, _ kind: ValueKind<Value>, default value: Value, _ help: String) {
        self.init(name, short: short, kind, default: .value(value), help)
    }

    var placeholder: String? { kind.placeholder }
    var isRequired: Bool { if case .required = fallback { true } else { false } }

    func parse(_ text: String) throws(UsageError) -> any Sendable {
        guard let value = kind.read(text) else { throw UsageError("--\(name) must \(kind.requirement), not '\(text)'") }
        return value
    }

    var helpText: String {
        var notes: [String] = []
        if let accepted = kind.accepted { notes.append(accepted) }
        switch fallback {
        case .value(let value): if let shown = kind.show(value) { notes.append("default \(shown)") }
        case .described(let description, _), .computed(let description, _): notes.append("default: \(description)")
        case .depending(let cases, _): notes.append("default: \(Self.describe(cases, kind: kind))")
        case .required: notes.append("required")
        }
        return notes.isEmpty ? help : "\(help) (\(notes.joined(separator: "; ")))"
    }

    /// `dz 254, iiif 512, others 256`: each case whose value differs from the most common one, then the rest.
    private static func describe(_ cases: [(name: String, value: Value)], kind: ValueKind<Value>) -> String {
        let shown = cases.map { (name: $0.name, value: kind.show($0.value) ?? "none") }
        let counts = Dictionary(shown.map { ($0.value, 1) }, uniquingKeysWith: +)
        let most = counts.values.max() ?? 0
        let common = most > 1 ? shown.first { counts[$0.value] == most }?.value : nil
        let exceptions = shown.filter { $0.value != common }.map { "\($0.name) \($0.value)" }
        return (exceptions + (common.map { ["others \($0)"] } ?? [])).joined(separator: ", ")
    }
}

extension Option where Value == Bool {
    /// A flag: `--name` turns it on; it takes no value and is off unless given.
    init(flag name: String, short: Character? = nil, _ help: String) {
        self.init(name, short: short, .flag, default: .value(false), help)
    }
}

extension Option where Value: ExpressibleByNilLiteral {
    /// An option that is nil unless given, with no default to show.
    init(_ name: String, short: Character? = nil, _ kind: ValueKind<Value>, _ help: String) {
        self.init(name, short: short, kind, default: .value(nil), help)
    }
}

/// What an option is when the command line does not give it, in the one place help and behaviour both read.
enum OptionDefault<Value: Sendable>: Sendable {
    /// A value, shown in help as the option's kind shows it (a nil or a flag's false shows nothing).
    case value(Value)
    /// A value help describes in words (`one per core`) rather than shows.
    case described(String, Value)
    /// A value worked out from the rest of the command line, described in help.
    case computed(String, @Sendable (Arguments) -> Value)
    /// A value that depends on another option's choice, shown for each choice: `dz 254, iiif 512, others 256`.
    case depending([(name: String, value: Value)], @Sendable (Arguments) -> Value)
    /// No default: the command line must give the option.
    case required

    /// A default that follows `other`'s value, listed in help for every one of its choices.
    static func depending<Other: CaseIterable & Sendable>(
        on other: Option<Other>, _ value: @escaping @Sendable (Other) -> Value
    ) -> Self {
        .depending(Other.allCases.map { (name: other.kind.show($0) ?? "\($0)", value: value($0)) }) { value($0[other]) }
    }
}
