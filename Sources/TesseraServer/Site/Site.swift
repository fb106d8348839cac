import Foundation

/// Everything `tessera serve` answers, one route per kind of path:
///
/// ```
/// {prefix}/...        -> IIIFService (info.json, images)
/// /stream/{id}/{size} -> ProgressiveStreamService (a progressive JPEG sent while it is encoded)
/// /web/{file}         -> ViewerAssets.file  (the viewer's scripts and styles)
/// /view/{identifier}  -> ViewerAssets.page  (the viewer opened on that image's info.json)
/// /view?src=URL       -> ViewerAssets.page  (the viewer opens any info.json or .dzi; the page reads the query)
/// /, /browse/{folder}/ -> FrontPage        (a folder's images as a grid of thumbnails, and its subfolders)
/// /health             -> a load balancer's check: 200 and `{"status":"ok"}`, or 503 while draining
/// /metrics            -> ServerMetrics     (Prometheus' text format)
/// ```
///
/// Behind a proxy the pages' links start with the path it puts before the server's (`PublicBase`).
///
/// Routes are tried in order (`/health` first, whatever the prefix); a new kind of path is one more `Route` in
/// `routes`. A route answers on the server's polling thread when it can do so without decoding (files, pages,
/// checks, a stored tile or a held render, `HTTPAnswer.now`) and hands slow work (renders, streams, folder
/// listings) to the server's workers (`HTTPAnswer.later`). Every response carries `Access-Control-Allow-Origin: *`.
/// Every answer is counted in `metrics` under its route's name.
public struct Site: Sendable {
    /// One kind of path: whether a path is of that kind, and how to answer it.
    public struct Route: Sendable {
        /// The route's label in the metrics.
        public let name: String
        /// Whether the route answers `path` (the request's path, still percent-encoded).
        public let matches: @Sendable (_ path: String) -> Bool
        /// The answer to a request the route matches.
        public let answer: @Sendable (_ site: Site, _ request: HTTPRequest) -> HTTPAnswer

        /// A route named `name` answering the paths `matches` accepts with `answer`.
        public init(_ name: String, matches: @escaping @Sendable (String) -> Bool,
                    answer: @escaping @Sendable (Site, HTTPRequest) -> HTTPAnswer) {
            self.name = name
            self.matches = matches
            self.answer = answer
        }

        /// A route named `name` answering the paths `matches` accepts with `respond`, on the polling thread: for
        /// answers that are quick to make.
        public init(_ name: String, matches: @escaping @Sendable (String) -> Bool,
                    respond: @escaping @Sendable (Site, HTTPRequest) -> HTTPResponse) {
            self.init(name, matches: matches) { site, request in .now(respond(site, request)) }
        }
    }

    /// The IIIF service, which also knows the images.
    public let service: IIIFService
    /// Progressive JPEGs of the same images, streamed as they are encoded.
    public let streams: ProgressiveStreamService
    /// The viewer's files, or nil when they were not found (the viewer routes then say so).
    public let viewer: ViewerAssets?
    /// The routes, tried in order.
    public let routes: [Route]
    /// Whether the server is draining (finishing what is in flight before it stops): `/health` then answers 503
    /// so that load balancers send new requests elsewhere.
    public let isDraining: @Sendable () -> Bool
    /// The front page and the folders' pages.
    let frontPage: FrontPage
    /// What `/metrics` reports.
    public let metrics: ServerMetrics

    /// A site serving `service`, the viewer from `viewer`, and `extraRoutes` tried before the built-in ones;
    /// `/health` fails while `isDraining` says so; `/metrics` reports `workers` (the server's) when given.
    public init(service: IIIFService, viewer: ViewerAssets?, extraRoutes: [Route] = [], workers: HandlerPool? = nil,
                isDraining: @escaping @Sendable () -> Bool = { false }) {
        self.service = service
        self.viewer = viewer
        self.isDraining = isDraining
        streams = ProgressiveStreamService(catalog: service.catalog, budget: service.renderBudget)
        let prefix = service.configuration.prefix
        frontPage = FrontPage(catalog: service.catalog, prefix: prefix, limits: service.configuration.limits,
                              hasViewer: viewer != nil)
        metrics = ServerMetrics(service: service, workers: workers)
        routes = extraRoutes + [
            Route("health", matches: { $0 == "/health" }) { site, request in
                site.getOnly(request) {
                    let draining = site.isDraining()
                    return HTTPResponse(status: draining ? 503 : 200,
                                        headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                                        body: Array((draining ? "{\"status\":\"draining\"}\n" : "{\"status\":\"ok\"}\n").utf8))
                }
            },
            Route("iiif", matches: { $0.hasPrefix(prefix + "/") }, answer: { site, request in site.service.answer(request) }),
            Route("stream", matches: { $0.hasPrefix(ProgressiveStreamService.prefix) }, answer: { site, request in
                .later { site.streams.handle(request) }
            }),
            Route("web", matches: { $0.hasPrefix("/web/") }) { site, request in
                site.withViewer(request) { $0.file(request.path.dropFirst("/web/".count), request: request) }
            },
            Route("view", matches: { $0 == "/view" || $0.hasPrefix("/view/") }) { site, request in
                site.viewerPage(request)
            },
            Route("metrics", matches: { $0 == "/metrics" }) { site, request in site.getOnly(request) { site.metrics.response } },
            Route("front", matches: { FrontPage.folder(fromPath: $0) != nil }, answer: { site, request in
                .later {
                    site.getOnly(request) {
                        site.frontPage.response(folder: FrontPage.folder(fromPath: request.path) ?? "",
                                                root: site.root(of: request))
                    }
                }
            }),
        ]
    }

    /// Answers one request, now or on a worker, and counts the response in `metrics` once it is made (its
    /// seconds from the request's arrival, a worker's queue included).
    public func answer(_ request: HTTPRequest) -> HTTPAnswer {
        let start = DispatchTime.now()
        let route = routes.first { $0.matches(request.path) }
        let answer = route?.answer(self, request) ?? .now(.text(404, "not found"))
        return answer.map { [metrics] response in
            var response = response
            if !response.headers.contains(where: { $0.0 == "Access-Control-Allow-Origin" }) {
                response.headers.append(("Access-Control-Allow-Origin", "*"))
            }
            metrics.record(route: route?.name ?? "none", status: response.status,
                           bytes: request.method == "HEAD" ? 0 : response.body.count,
                           seconds: Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
            return response
        }
    }

    /// `answer`'s response, made on the calling thread (for tests and the fuzzer).
    public func handle(_ request: HTTPRequest) -> HTTPResponse { answer(request).response }

    /// `/view/{identifier}` for a known image, or `/view` and `/view/` (the page then reads `?src=`).
    private func viewerPage(_ request: HTTPRequest) -> HTTPResponse {
        withViewer(request) { viewer in
            let encoded = request.path.dropFirst("/view/".count)
            let root = root(of: request)
            guard !encoded.isEmpty else { return viewer.page(source: nil, root: root, request: request) }
            guard let identifier = encoded.percentDecoded,
                  service.catalog.file(for: identifier) != nil else {
                return .text(404, "no image '\(encoded)'")
            }
            return viewer.page(source: "\(root)\(service.configuration.prefix)/\(encoded)/info.json", root: root,
                               request: request)
        }
    }

    /// The path a proxy puts before the server's own, "" when there is none: the pages' links start with it.
    private func root(of request: HTTPRequest) -> String {
        PublicBase.of(request, configured: service.configuration.publicBase).path
    }

    /// `body(viewer)` for a GET or HEAD when the viewer's files were found; a 404 saying how to find them if not.
    private func withViewer(_ request: HTTPRequest, _ body: (ViewerAssets) -> HTTPResponse) -> HTTPResponse {
        getOnly(request) {
            guard let viewer else {
                return .text(404, "the viewer's files (Web/) were not found: start tessera serve with --web DIR")
            }
            return body(viewer)
        }
    }

    private func getOnly(_ request: HTTPRequest, _ body: () -> HTTPResponse) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.text(405, "method not allowed")
            response.headers.append(("Allow", "GET, HEAD"))
            return response
        }
        return body()
    }
}
