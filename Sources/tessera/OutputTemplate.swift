import Foundation
import Tessera

/// An output name for each of many inputs, as vipsthumbnail writes it: `%s` is the input's name without its
/// extension, and a relative pattern is relative to the input's folder (an absolute one is used as it is). For an
/// `http(s)://` input the name is the URL's last path component (without its query) and a relative pattern is
/// relative to the current folder, as it is for standard input (`-`, named `stdin`). `thumbnail` and `tile` both take
/// one as `-o PATTERN`.
struct OutputTemplate: Sendable {
    let pattern: String

    /// Whether each input gets its own name, so that several inputs never write the same output.
    var namesEachInput: Bool { pattern.contains("%s") }

    /// The output path for `input`; for standard input (`-`), `%s` is `stdin`, in the current folder.
    func path(for input: String) -> String {
        if input == StandardStreams.dash { return pattern.replacingOccurrences(of: "%s", with: "stdin") }
        let remote = RemoteURL.isRemote(input)
        let location = remote ? String(input.prefix { $0 != "?" && $0 != "#" }) : input
        let last = remote ? RemoteFile.split(location).name : (input as NSString).lastPathComponent
        let name = (last as NSString).deletingPathExtension
        let file = pattern.replacingOccurrences(of: "%s", with: name)
        if file.hasPrefix("/") || remote { return file }
        let folder = (input as NSString).deletingLastPathComponent
        return folder.isEmpty ? file : folder + "/" + file
    }
}
