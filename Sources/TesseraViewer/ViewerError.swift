/// What can go wrong in `tessera view`: each case reads as a one-line sentence naming the file, URL or step.
public enum ViewerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// SDL could not do what was asked (no display, no renderer); `detail` is SDL's own message.
    case sdl(String)
    /// A IIIF server did not answer as it should.
    case http(url: String, detail: String)
    /// A `--script` file is not a valid trace.
    case script(path: String, detail: String)
    /// A scripted wait did not end in time.
    case timeout(String)

    public var description: String {
        switch self {
        case .sdl(let detail): return "SDL: \(detail)"
        case let .http(url, detail): return "\(url): \(detail)"
        case let .script(path, detail): return "\(path): \(detail)"
        case .timeout(let detail): return detail
        }
    }
}
