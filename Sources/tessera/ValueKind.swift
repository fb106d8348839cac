/// How an option's value is written: its placeholder in help, what it accepts, how its text is read and how a
/// value is shown (for defaults in help).
struct ValueKind<Value: Sendable>: Sendable {
    /// The placeholder in help (`N`, `SIZE`, `jpg|png|webp`); nil for a flag.
    let placeholder: String?
    /// The accepted values as help lists them (`1-100`, `dz, zoomify or tiff`), when the placeholder does not.
    let accepted: String?
    /// What the text must be, completing "--name must ...": `be a whole number from 1 to 100`.
    let requirement: String
    /// The value of a text, or nil when it is not one.
    let read: @Sendable (String) -> Value?
    /// A value as help shows it, or nil for one that is not shown (an absent value).
    let show: @Sendable (Value) -> String?

    init(placeholder: String?, accepted: String? = nil, requirement: String,
         read: @escaping @Sendable (String) -> Value?, show: @escaping @Sendable (Value) -> String?) {
        self.placeholder = placeholder
        self.accepted = accepted
        self.requirement = requirement
        self.read = read
        self.show = show
    }

    /// The same kind for an option that may be absent: nil shows nothing.
    var optional: ValueKind<Value?> {
        let read = read, show = show
        return ValueKind<Value?>(placeholder: placeholder, accepted: accepted, requirement: requirement,
                                 read: { read($0).map(Optional.some) }, show: { $0.flatMap(show) })
    }
}

extension ValueKind where Value == Bool {
    /// A flag, which takes no value: true when given.
    static var flag: Self {
        ValueKind(placeholder: nil, requirement: "be given without a value", read: { _ in nil },
                  show: { $0 ? "on" : nil })
    }
}

extension ValueKind where Value == String {
    /// Any text, such as a path or an address.
    static func text(_ placeholder: String) -> Self {
        ValueKind(placeholder: placeholder, requirement: "not be empty", read: { $0.isEmpty ? nil : $0 }, show: { $0 })
    }
}

extension ValueKind where Value == Int {
    /// A whole number within `range`, and a multiple of `multiple` when given.
    static func integer(in range: ClosedRange<Int>, multipleOf multiple: Int = 1) -> Self {
        let bounds = "from \(range.lowerBound) to \(range.upperBound)"
        return ValueKind(
            placeholder: "N",
            accepted: "\(range.lowerBound)-\(range.upperBound)" + (multiple > 1 ? ", a multiple of \(multiple)" : ""),
            requirement: multiple > 1 ? "be a multiple of \(multiple) \(bounds)" : "be a whole number \(bounds)",
            read: { text in Int(text).flatMap { range.contains($0) && $0 % multiple == 0 ? $0 : nil } },
            show: { "\($0)" })
    }

    /// A size in bytes: a number with an optional K, M, G or T suffix (powers of 1024), and an optional B or iB.
    static var byteSize: Self { byteSize(orZero: false) }

    /// A size in bytes or 0, for a cache that 0 turns off (it keeps nothing).
    static var byteSizeOrZero: Self { byteSize(orZero: true) }

    private static func byteSize(orZero: Bool) -> Self {
        let requirement = "be a size such as 512M or 2G" + (orZero ? ", or 0" : "")
        return ValueKind(placeholder: "SIZE", requirement: requirement, read: { text in
            var digits = text.uppercased()
            for suffix in ["IB", "B"] where digits.hasSuffix(suffix) { digits.removeLast(suffix.count) }
            var multiplier = 1
            if let unit = digits.last, let power = byteUnits.firstIndex(of: unit) {
                multiplier = 1 << (10 * (power + 1))
                digits.removeLast()
            }
            guard let number = Double(digits), number > 0 || orZero && number == 0, number * Double(multiplier) < 9e18
            else { return nil }
            return Int(number * Double(multiplier))
        }, show: { bytes in
            let power = byteUnits.indices.last { bytes > 0 && bytes % (1 << (10 * ($0 + 1))) == 0 }
            return power.map { "\(bytes >> (10 * ($0 + 1)))\(byteUnits[$0])" } ?? "\(bytes)"
        })
    }

    /// The byte size suffixes, each 1024 times the one before, from K.
    private static let byteUnits: [Character] = ["K", "M", "G", "T"]
}

extension ValueKind where Value: Equatable {
    /// One of a fixed list of names, matched without regard to case, or one of `aliases`, which help leaves out
    /// (`jpeg` for `jpg`). Help lists the names in the placeholder when they are short, else after the help.
    static func choice(_ names: [(name: String, value: Value)], aliases: [(name: String, value: Value)] = [],
                       placeholder: String? = nil) -> Self {
        let list = names.map(\.name)
        let joined = list.joined(separator: "|")
        let listed = placeholder == nil && joined.count <= 16
        let all = names + aliases
        return ValueKind(
            placeholder: listed ? joined : placeholder ?? "NAME",
            accepted: listed ? nil : list.dropLast().joined(separator: ", ") + " or " + list.last!,
            requirement: "be one of \(all.map(\.name).joined(separator: ", "))",
            read: { text in all.first { $0.name == text.lowercased() }?.value },
            show: { value in names.first { $0.value == value }?.name })
    }
}

extension ValueKind where Value: CaseIterable & RawRepresentable<String> & Equatable {
    /// One of an enumeration's cases, by its raw value.
    static var choice: Self { choice(Value.allCases.map { (name: $0.rawValue, value: $0) }) }
}
