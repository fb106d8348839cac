/// What a handler answers a request with: a response made at once on libmicrohttpd's polling thread (a stored
/// tile, a cached render, info.json, a static file: nothing that decodes), or work that takes longer (a render, a
/// wait for an image's pyramid or index) for `HTTPServer` to run on a worker of its `HandlerPool` while the
/// connection is suspended, so that the polling thread goes on serving its other connections.
public enum HTTPAnswer: Sendable {
    /// The response, made already.
    case now(HTTPResponse)
    /// `work` makes the response on a worker; `finish` is applied to what it makes, or to the 503 the server
    /// answers when no worker can take it (so what counts and logs responses sees every answer).
    case later(work: @Sendable () -> HTTPResponse, finish: @Sendable (HTTPResponse) -> HTTPResponse)

    /// An answer made by `work` on a worker.
    public static func later(_ work: @escaping @Sendable () -> HTTPResponse) -> HTTPAnswer {
        .later(work: work, finish: { $0 })
    }

    /// `respond(.pollingThread)`, or when that throws `NeedsWorker`, `respond(.worker)` run later on a worker: one
    /// code path for both, which gives up on the polling thread where it would start slow work.
    public static func inlineOrLater(_ respond: @escaping @Sendable (HandlerPlace) throws(NeedsWorker) -> HTTPResponse)
        -> HTTPAnswer {
        do {
            return .now(try respond(.pollingThread))
        } catch {
            // On a worker `requireWorker` does not throw, so this 500 is never sent.
            return .later { (try? respond(.worker)) ?? .text(500, "a worker was refused its work") }
        }
    }

    /// The same answer with `transform` applied to its response, whenever that is made.
    public func map(_ transform: @escaping @Sendable (HTTPResponse) -> HTTPResponse) -> HTTPAnswer {
        switch self {
        case let .now(response): return .now(transform(response))
        case let .later(work, finish): return .later(work: work, finish: { transform(finish($0)) })
        }
    }

    /// The response, its work (if any) done on the calling thread: for callers that are not the server (tests,
    /// the fuzzer).
    public var response: HTTPResponse {
        switch self {
        case let .now(response): return response
        case let .later(work, finish): return finish(work())
        }
    }
}

/// Where a handler is running: on a polling thread, which must answer quickly or hand the request off, or on a
/// worker, which may take as long as the work does.
public enum HandlerPlace: Sendable {
    case pollingThread, worker

    /// Throws `NeedsWorker` on a polling thread: called where a handler is about to start slow work.
    public func requireWorker() throws(NeedsWorker) {
        if self == .pollingThread { throw NeedsWorker() }
    }
}

/// Thrown by a handler on a polling thread where its answer needs slow work (`HandlerPlace.requireWorker`).
public struct NeedsWorker: Error {}
