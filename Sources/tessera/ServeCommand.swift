import Foundation
import Tessera
import TesseraServer

/// `tessera serve`: a IIIF Image API 3.0 level 2 server over a folder of images or one image.
enum ServeCommand: Command {
    static let spec = CommandSpec(
        name: "serve", usage: "serve PATH | --source-url URL | --source-catalog FILE [--port N] [--host ADDRESS] [--prefix /iiif] [options]",
        summary: "serve a folder of images (or one image, or images on a web server) over the IIIF Image API 3.0, level 2",
        details: """
            Every JPEG, PNG, TIFF, WebP, BMP or GIF under PATH is an image, and so is every pre-built pyramid (a
            Deep Zoom .dzi, a IIIF level-0 folder with its info.json); its identifier is its path relative to PATH,
            with slashes written %2F. GET / lists them; /view/{identifier} opens one in the web viewer, whose files
            (Web/) are found beside the executable or in one of its parent folders unless --web names them.
            Ctrl-C stops the server after the requests in flight.
            A large image that is not a pyramid is served by region reads at first while a pyramidal TIFF of it is
            built in the cache, coarse levels first (a preview at 1/8 scale); then its tiles come from the pyramid,
            most as stored bytes.
            GET /stream/{identifier}/{size} sends the image, its longer side at most size pixels (or max), as a
            progressive JPEG while it is encoded (chunked): its first scans arrive before the last is encoded.
            Instead of PATH, --source-url serves images read by byte ranges from a web server, the identifier put
            for {id} (https://host/images/{id}), and --source-catalog serves those a file lists (IDENTIFIER URL per
            line); their pyramids are cached by URL and ETag.
            """,
        options: [port, host, prefix, threads, sourceURL, sourceCatalog] + PyramidCacheOptions.all
            + [responseCache, web, quiet])

    static let port = Option("port", .integer(in: 0...65_535), default: defaultPort, "TCP port; 0 picks a free one")
    /// The port unless `--port` says otherwise; `tile --layout iiif` writes ids for it.
    static let defaultPort = 8000
    static let host = Option("host", .text("ADDRESS"), default: "127.0.0.1", "IPv4 address to listen on")
    static let prefix = Option("prefix", .urlPrefix, default: IIIFService.Configuration().prefix,
                               "URL path before identifiers")
    static let responseCache = Option("response-cache", .byteSize, default: IIIFService.Configuration().responseCacheBytes,
                                      "most memory rendered responses are kept in (stored tiles are sent as they are)")
    static let threads = CommonOptions.threads("request threads", perCore: 2, upTo: 1024)
    static let web = Option("web", ValueKind.text("DIR").optional,
                            default: .described("the Web/ folder found from the executable up", nil), "the viewer's files")
    static let quiet = Option(flag: "quiet", "no log line per request")
    static let sourceURL = Option("source-url", ValueKind.text("URL").optional,
                                  "serve images from this http(s) URL template, {id} the identifier, instead of PATH")
    static let sourceCatalog = Option("source-catalog", ValueKind.text("FILE").optional,
                                      "serve the images this file lists (IDENTIFIER URL per line) instead of PATH")

    static func run(_ arguments: Arguments) throws {
        var configuration = IIIFService.Configuration()
        configuration.prefix = arguments[prefix] == "/" ? "" : arguments[prefix]
        configuration.cache = try PyramidCacheOptions.open(arguments)
        configuration.responseCacheBytes = arguments[responseCache]
        let catalog = try catalog(arguments)
        let site = Site(service: IIIFService(catalog: catalog, configuration: configuration), viewer: try viewer(arguments))
        let quiet = arguments[Self.quiet]
        let server = HTTPServer { request in
            let start = DispatchTime.now()
            let response = site.handle(request)
            if !quiet {
                let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
                let line = "\(request.method) \(request.path) \(response.status) \(response.body.count) \(milliseconds.fixed(1)) ms\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
            return response
        }
        let host = arguments[Self.host]
        try server.start(address: host, port: UInt16(arguments[port]), threads: arguments[threads])
        let stopped = DispatchSemaphore(value: 0)
        Interruption.shared.onInterrupt { _ in stopped.signal() }
        let count = catalog.identifiers().count
        let base = "http://\(host):\(server.port ?? 0)"
        let banner = "serving \(count) image\(count == 1 ? "" : "s") from \(catalog.root) at \(base)\(configuration.prefix)/"
            + (site.viewer == nil ? "" : " and the viewer at \(base)/") + "  (Ctrl-C stops)\n"
        FileHandle.standardOutput.write(Data(banner.utf8))
        stopped.wait()
        server.stop()
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
        do {
            return try ImageCatalog(path: paths[0])
        } catch {
            throw TesseraError.io(path: paths[0], detail: "no such file or folder")
        }
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

extension ValueKind where Value == String {
    /// A URL path that starts with / and does not end with one (or is just /).
    static var urlPrefix: Self {
        ValueKind(placeholder: "PATH", requirement: "start with / and not end with one", read: { text in
            text.hasPrefix("/") && (!text.hasSuffix("/") || text == "/") ? text : nil
        }, show: { $0 })
    }
}
