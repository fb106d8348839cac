import Foundation

/// An output name for each of many inputs, as vipsthumbnail writes it: `%s` is the input's name without its
/// extension, and a relative pattern is relative to the input's folder (an absolute one is used as it is).
/// `thumbnail` and `tile` both take one as `-o PATTERN`.
struct OutputTemplate: Sendable {
    let pattern: String

    /// Whether each input gets its own name, so that several inputs never write the same output.
    var namesEachInput: Bool { pattern.contains("%s") }

    /// The output path for `input`.
    func path(for input: String) -> String {
        let name = ((input as NSString).lastPathComponent as NSString).deletingPathExtension
        let file = pattern.replacingOccurrences(of: "%s", with: name)
        if file.hasPrefix("/") { return file }
        let folder = (input as NSString).deletingLastPathComponent
        return folder.isEmpty ? file : folder + "/" + file
    }
}
