import Foundation
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
        case let .http(url, detail): return .http(url: identifier, detail: Self.withoutAddress(of: url, in: detail))
        // An invalid argument that reaches a client is the server's own mistake (a client's are IIIF errors, 400s),
        // in words that name the server's files or URLs: the client is told only that it failed.
        case .invalidArgument: return .invalidArgument("\(identifier): the server failed to make this answer")
        case .missingLibrary: return self
        }
    }

    /// What a client is told of `error` while the server worked on the image `identifier`: a Tessera error about
    /// that image (`about`), any other as it describes itself.
    static func message(for error: any Error, about identifier: String) -> String {
        (error as? TesseraError)?.about(identifier).description ?? "\(error)"
    }

    /// `detail` with `url`'s host, and the port libcurl names after it, said as "its source": libcurl's words for a
    /// failure name the host it tried ("failed to connect to 10.0.0.7 port 9000 after 3 ms", "could not resolve
    /// host: storage.internal"), the storage behind the server.
    static func withoutAddress(of url: String, in detail: String) -> String {
        guard let host = URLComponents(string: url)?.host, !host.isEmpty else { return detail }
        return detail.replacingOccurrences(of: NSRegularExpression.escapedPattern(for: host) + "( port [0-9]+)?",
                                           with: "its source", options: [.regularExpression, .caseInsensitive])
    }
}

extension HTTPResponse {
    /// A failure's answer about the image `identifier`: the status `error` calls for (404 for a file that is not an
    /// image, which is not an image the server has, and for a URL with nothing at it; 501, IIIF's "not implemented",
    /// for an image using a feature Tessera does not handle, such as a TIFF of floating-point samples: the server
    /// works, this image is beyond it; 502 for any other failure of a remote source; else 500), what a client is
    /// told of it (`TesseraError.message(for:about:)`) as the body, and the error in full, naming what the server
    /// read, as the `logNote`.
    static func failure(_ error: any Error, about identifier: String) -> HTTPResponse {
        let status: Int
        switch error as? TesseraError {
        case .unknownFormat?: status = 404
        case let remote? where RemoteFile.isMissing(remote): status = 404
        case .unsupported?: status = 501
        case .http?: status = 502
        default: status = 500
        }
        var response = HTTPResponse.text(status, TesseraError.message(for: error, about: identifier))
        response.logNote = "\(error)"
        return response
    }
}
