import Foundation
import Tessera
import TesseraServer

/// `tessera serve`: a IIIF Image API 3.0 level 2 server over a folder of images or one image.
enum ServeCommand: Command {
    static let name = "serve"
    static let spec = CommandSpec(
        name: name, usage: "serve PATH | --source-url URL | --source-catalog FILE [--port N] [--host ADDRESS] [--prefix /iiif] [options]",
        summary: "serve a folder of images (or one image, or images on a web server) over the IIIF Image API 3.0, level 2",
        details: """
            Every JPEG, PNG, TIFF, WebP, BMP or GIF under PATH is an image, and so is every pre-built pyramid (a
            Deep Zoom .dzi, a IIIF level-0 folder with its info.json, or either in a .zip or .szi); its identifier
            is its path relative to PATH, with slashes written %2F. GET / lists them; /view/{identifier} opens one
            in the web viewer, whose files (Web/) are found beside the executable or in one of its parent folders
            unless --web names them.
            Ctrl-C or SIGTERM drains the server: it stops accepting connections, answers the requests it has within
            --drain-grace seconds, then exits 0.
            The --threads polling threads read requests and send answers; what needs decoding (renders, streams,
            an image's first opening) is made by two workers per core meanwhile, and waits at most --render-wait
            seconds for one (then the answer is 503 with Retry-After). Renders share --render-memory: each
            reserves its estimated working set first; one that does not fit waits (at most --render-queue
            waiting, each at most --render-wait seconds), beyond that the answer is 503 with Retry-After; a
            render larger than the whole budget is a 400. GET /metrics reports requests,
            latencies, renders, caches and pyramid builds in Prometheus' text format.
            A large image that is not a pyramid is served by region reads at first while a pyramidal TIFF of it is
            built in the cache, coarse levels first (a preview at 1/8 scale); then its tiles come from the pyramid,
            most as stored bytes. A plain (sequential) JPEG file gets its entropy index first, in one pass, and its
            tiles are read through it meanwhile: only the blocks a tile covers are decoded. --cache-mode index
            keeps the index alone: no pyramid is built, every tile a region read through the index.
            GET /stream/{identifier}/{size} sends the image, its longer side at most size pixels (or max), as a
            progressive JPEG while it is encoded (chunked): its first scans arrive before the last is encoded.
            Before it listens, the server opens the pyramids among the catalog's first --open-at-start images and
            decodes each one's smallest level (for at most half a second); then, in idle time, it makes their
            edge tiles that only a render answers. A restarted server's first viewers find them open, their
            thumbnails a resampling away and their edge tiles made.
            Several servers may share one --cache folder (on one machine or a shared file system): each pyramid is
            built once, by whichever claims it first. Behind a proxy or load balancer, info.json ids and links
            follow X-Forwarded-Proto, -Host and -Prefix, or --public-url; GET /health answers its checks.
            Instead of PATH, --source-url serves images read by byte ranges from a web server, the identifier put
            for {id} (https://host/images/{id}), and --source-catalog serves those a file lists (IDENTIFIER URL per
            line); their pyramids are cached by URL and ETag.
            """,
        options: [port, host, prefix, publicURL, threads, connectionTimeout, sourceURL, sourceCatalog] + PyramidCacheOptions.all
            + [responseCache, decodedTiles, maxAge, renderMemory, renderQueue, renderWait, openAtStart, drainGrace, web,
               quiet])

    static let port = Option("port", .integer(in: 0...65_535), default: defaultPort, "TCP port; 0 picks a free one")
    /// The port unless `--port` says otherwise; `tile --layout iiif` writes ids for it.
    static let defaultPort = 8000
    static let host = Option("host", .text("ADDRESS"), default: "127.0.0.1", "IPv4 address to listen on")
    static let prefix = Option("prefix", .urlPrefix, default: IIIFService.Configuration().prefix,
                               "URL path before identifiers")
    static let publicURL = Option("public-url", ValueKind.publicBase.optional,
                                  default: .described("from each request's X-Forwarded-* headers and Host", nil),
                                  "the address clients reach the server at, e.g. https://images.example.org/tiles")
    static let maxAge = Option("max-age", .integer(in: 0...31_536_000), default: IIIFService.Configuration().cacheLifetime,
                               "seconds clients, proxies and CDNs may keep info.json and images (Cache-Control)")
    static let responseCache = Option("response-cache", .byteSizeOrZero,
                                      default: IIIFService.Configuration().responseCacheBytes,
                                      "most memory rendered responses are kept in, 0 none (stored tiles are sent as they are)")
    static let renderMemory = Option("render-memory", .byteSize,
                                     default: .computed("the --memory-limit", { $0[CommonOptions.memoryLimit] }),
                                     "most memory all renders in flight hold together (their working sets, estimated)")
    static let renderQueue = Option("render-queue", .integer(in: 0...100_000),
                                    default: IIIFService.Configuration().renderBudget.queueLength,
                                    "most renders that wait for render memory; more are answered 503")
    static let renderWait = Option("render-wait", .integer(in: 0...3600),
                                   default: Int(IIIFService.Configuration().renderBudget.maxWait),
                                   "longest a render waits for a worker, or for render memory, in seconds, before a 503")
    static let openAtStart = Option("open-at-start", .integer(in: 0...100_000), default: IIIFService.preparedImages,
                                    "of the catalog's first N images, the pyramids opened before listening; 0: none")
    static let drainGrace = Option("drain-grace", .integer(in: 0...3600), default: 30,
                                   "seconds a SIGTERM or Ctrl-C gives the requests in flight before the server exits")
    static let decodedTiles = Option("decoded-tiles", .byteSizeOrZero,
                                     default: IIIFService.Configuration().decodedTileBytes,
                                     "most memory whole decoded JPEG 2000 tiles are kept in (for the requests inside them), 0 none")
    static let threads = CommonOptions.threads("polling threads, which read requests and send answers (renders run on workers)",
                                               perCore: 2, upTo: 1024)
    static let connectionTimeout = Option("connection-timeout", .integer(in: 1...3600), default: 60,
                                          "seconds a connection may stay silent before it is closed")
    static let web = Option("web", ValueKind.text("DIR").optional,
                            default: .described("the Web/ folder found from the executable up", nil), "the viewer's files")
    static let quiet = Option(flag: "quiet", "no log line per request, except for a failure of the server's (5xx) with its reason")
    static let sourceURL = Option("source-url", ValueKind.text("URL").optional,
                                  "serve images from this http(s) URL template, {id} the identifier, instead of PATH")
    static let sourceCatalog = Option("source-catalog", ValueKind.text("FILE").optional,
                                      "serve the images this file lists (IDENTIFIER URL per line) instead of PATH")

    /// glibc settles how many heaps its threads share when a second thread first allocates: later, `M_ARENA_MAX`
    /// no longer applies, and each polling thread and worker got a heap of its own that the warm-up had not grown
    /// (a new server's first renders faulted in 20-70 pages each).
    static func prepareProcess() {
        AllocatorRetention.keepRequestWorkingSets()
    }

    static func run(_ arguments: Arguments) throws {
        var configuration = IIIFService.Configuration()
        configuration.prefix = arguments[prefix] == "/" ? "" : arguments[prefix]
        configuration.cache = try PyramidCacheOptions.open(arguments) { line in
            FileHandle.standardError.write(Data("tessera serve: \(line)\n".utf8))
        }
        configuration.responseCacheBytes = arguments[responseCache]
        configuration.cacheLifetime = arguments[maxAge]
        configuration.publicBase = arguments[publicURL]
        configuration.renderBudget = RenderBudget.Limits(bytes: arguments[renderMemory], queueLength: arguments[renderQueue],
                                                         maxWait: Double(arguments[renderWait]))
        configuration.decodedTileBytes = arguments[decodedTiles]
        let requests = RequestCount()
        configuration.isQuiet = { requests.inProgress <= 1 }
        let catalog = try catalog(arguments)
        let drainState = DrainState()
        // A render waits at most --render-wait for a worker, then at most that again for render memory.
        let workers = HandlerPool(limits: HandlerPool.Limits(threads: HandlerPool.Limits.defaultThreads,
                                                             maxWait: Double(arguments[renderWait])))
        let site = Site(service: IIIFService(catalog: catalog, configuration: configuration), viewer: try viewer(arguments),
                        workers: workers, isDraining: { drainState.isDraining })
        let quiet = arguments[Self.quiet]
        let server = HTTPServer(drainState: drainState, requests: requests, workers: workers) { request in
            let start = DispatchTime.now()
            return site.answer(request).map { response in
                if !quiet || (response.status >= 500 && response.logNote != nil) {
                    let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
                    let note = response.logNote.map { ": \($0)" } ?? ""
                    let line = "\(request.method) \(request.target) \(response.status) \(response.body.count)"
                        + " \(milliseconds.fixed(1)) ms\(note)\n"
                    FileHandle.standardError.write(Data(line.utf8))
                }
                return response
            }
        }
        let host = arguments[Self.host]
        CodecLibrary.openAll()
        site.service.warmUp()
        site.service.prepare(limit: arguments[openAtStart], seconds: IIIFService.preparingTime,
                             idleTime: { server.runInIdleTime($0) })
        let descriptors = FileDescriptorLimit.raiseToHardLimit()
        try server.start(address: host, port: UInt16(arguments[port]), threads: arguments[threads],
                         connectionTimeout: arguments[connectionTimeout],
                         connectionLimit: FileDescriptorLimit.connectionLimit(descriptors: descriptors))
        let stopped = DispatchSemaphore(value: 0)
        Interruption.shared.onInterrupt { _ in stopped.signal() }
        let count = catalog.identifiers().count
        let base = "http://\(host):\(server.port ?? 0)"
        let banner = "serving \(count) image\(count == 1 ? "" : "s") from \(catalog.root) at \(base)\(configuration.prefix)/"
            + (site.viewer == nil ? "" : " and the viewer at \(base)/") + "  (Ctrl-C stops)\n"
        FileHandle.standardOutput.write(Data(banner.utf8))
        stopped.wait()
        let grace = arguments[drainGrace]
        FileHandle.standardError.write(Data("tessera serve: draining, at most \(grace) s\n".utf8))
        let drained = server.drain(grace: Double(grace))
        if !drained {
            FileHandle.standardError.write(Data("tessera serve: the grace period ended with requests unanswered\n".utf8))
        }
        // A pyramid build still running is abandoned: its temporary file and its lock go, for another to take up.
        TemporaryFiles.shared.removeAll()
    }

    /// The images to serve: PATH's, or those of `--source-url` or `--source-catalog` (one of the three).
    private static func catalog(_ arguments: Arguments) throws -> ImageCatalog {
        let template = arguments[sourceURL], list = arguments[sourceCatalog]
        if template != nil || list != nil {
            guard arguments.positionals.isEmpty, template == nil || list == nil else {
                throw UsageError("give one of PATH, --source-url and --source-catalog")
            }
            return ImageCatalog(remote: try template.map(RemoteImages.init(template:)) ?? RemoteImages(catalog: list!))
        }
        let paths = try arguments.positionals(exactly: 1, "PATH")
        return try ImageCatalog(path: paths[0])
    }

    /// The viewer's files: `--web DIR` (which must hold them), else the `Web/` folder found from the executable up,
    /// else none, with a warning, and the server runs without its viewer.
    private static func viewer(_ arguments: Arguments) throws -> ViewerAssets? {
        if let folder = arguments[web] { return try ViewerAssets(folder: folder) }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        if let folder = ViewerAssets.locate(from: executable), let viewer = try? ViewerAssets(folder: folder) {
            return viewer
        }
        let warning = "tessera serve: no Web/ folder found from \(executable) up, so /view/ is off; pass --web DIR\n"
        FileHandle.standardError.write(Data(warning.utf8))
        return nil
    }
}

extension ValueKind where Value == PublicBase {
    /// An absolute http(s) URL without query or fragment: the address a server is reached at.
    static var publicBase: Self {
        ValueKind(placeholder: "URL", requirement: "be an http:// or https:// URL with a host and no query",
                  read: { PublicBase(url: $0) }, show: { $0.url })
    }
}

extension ValueKind where Value == String {
    /// A URL path that starts with / and does not end with one (or is just /).
    static var urlPrefix: Self {
        ValueKind(placeholder: "PATH", requirement: "start with / and not end with one", read: { text in
            text.hasPrefix("/") && (!text.hasSuffix("/") || text == "/") ? text : nil
        }, show: { $0 })
    }
}
