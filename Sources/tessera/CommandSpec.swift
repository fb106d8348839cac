/// A command's interface: its name, usage line, one-line summary, longer description and options, from which
/// its `--help` is rendered.
struct CommandSpec: Sendable {
    let name: String
    let usage: String
    let summary: String
    let details: String
    /// The command's own options, in the order help lists them; `RemoteOptions.all` and `CommonOptions.all` follow.
    let options: [any OptionDeclaration]
    /// Old option names the command refuses, each with the name that replaced it.
    let renamed: [String: String]

    init(name: String, usage: String, summary: String, details: String, options: [any OptionDeclaration],
         renamed: [String: String] = [:]) {
        self.name = name
        self.usage = usage
        self.summary = summary
        self.details = details
        self.options = options
        self.renamed = renamed
    }

    /// The command's options, the remote inputs' and the common ones.
    var allOptions: [any OptionDeclaration] { options + RemoteOptions.all + CommonOptions.all }

    /// The `--help` text: usage, summary, details, then one line per option with its accepted values and default.
    var help: String {
        var lines = ["usage: tessera \(usage)", "", summary]
        if !details.isEmpty { lines += ["", details] }
        lines += ["", "options:"]
        let all = allOptions
        let labels = all.map { option in
            (option.short.map { "-\($0), " } ?? "    ") + "--\(option.name)" + (option.placeholder.map { " \($0)" } ?? "")
        }
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (label, option) in zip(labels, all) {
            lines.append("  " + label.padding(toLength: width) + option.helpText)
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}
