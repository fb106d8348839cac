import Foundation

/// What identifies one build of a pyramid: the source file (its path as given, its size in bytes and its
/// modification time) and each option that shapes the output, written `name=value`. `--resume` continues only a
/// partial build with the same key, and a finished build's `CompletionRecord` holds it.
public struct BuildKey: Sendable, Equatable, CustomStringConvertible {
    /// The key as stored: one field per line.
    public let description: String

    /// The key of building `source` with `options`; a source that cannot be read has size and time 0, so its
    /// key never matches a finished build of the real file.
    public init(source: String, options: [String]) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: source)
        let size = attributes?[.size] as? Int ?? 0
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        description = ([source, "\(size)", "\(modified)"] + options).joined(separator: "\n")
    }
}
