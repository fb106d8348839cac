import Foundation

/// What identifies one build of a pyramid: the source file (its path as given, its size in bytes and its
/// modification time; for a remote file its URL, size and ETag or Last-Modified) and each option that shapes the
/// output, written `name=value`. `--resume` continues only a
/// partial build with the same key, and a finished build's `CompletionRecord` holds it.
public struct BuildKey: Sendable, Equatable, CustomStringConvertible {
    /// The key as stored: one field per line.
    public let description: String

    /// The key of building `source` with `options`; a source that cannot be read has size and time 0, so its
    /// key never matches a finished build of the real file.
    public init(source: String, options: [String]) {
        let stamp = FileStamp(path: source)
        self.init(fields: [source, "\(stamp?.size ?? 0)", "\(stamp?.modified.timeIntervalSince1970 ?? 0)"] + options)
    }

    private init(fields: [String]) { description = fields.joined(separator: "\n") }

    /// The key of building `input` with `options`: a file's as `init(source:options:)`, a remote file's from the
    /// URL, size and version recorded when it was opened.
    public init(input: ImageInput, options: [String]) {
        switch input {
        case let .remote(file):
            self.init(fields: [file.url, "\(file.byteCount)", file.version.description] + options)
        default:
            self.init(source: input.name, options: options)
        }
    }
}
