import Tessera

extension TesseraError {
    /// The error as a client is told it: about `identifier`, the image it asked for, not about the file or URL the
    /// server read (a path on its disks, its storage's address, a cached pyramid's file), which are the server's
    /// own business.
    func about(_ identifier: String) -> TesseraError {
        switch self {
        case let .io(_, detail): return .io(path: identifier, detail: detail)
        case .unknownFormat: return .unknownFormat(path: identifier)
        case let .truncated(_, detail): return .truncated(path: identifier, detail: detail)
        case let .corrupt(_, detail): return .corrupt(path: identifier, detail: detail)
        case let .unsupported(_, feature): return .unsupported(path: identifier, feature: feature)
        case let .memoryLimit(_, needed, limit, purpose):
            return .memoryLimit(path: identifier, needed: needed, limit: limit, purpose: purpose)
        case let .http(_, detail): return .http(url: identifier, detail: detail)
        case .missingLibrary, .invalidArgument: return self
        }
    }

    /// What a client is told of `error` while the server worked on the image `identifier`: a Tessera error about
    /// that image (`about`), any other as it describes itself.
    static func message(for error: any Error, about identifier: String) -> String {
        (error as? TesseraError)?.about(identifier).description ?? "\(error)"
    }
}
