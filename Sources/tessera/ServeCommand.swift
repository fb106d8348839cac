import Foundation
import Tessera
import TesseraServer

/// `tessera serve`: a IIIF Image API 3.0 level 2 server over a folder of images or one image.
enum ServeCommand: Command {
    static let spec = CommandSpec(
        name: "serve", usage: "serve PATH [--port N] [--host ADDRESS] [--prefix /iiif] [options]",
        summary: "serve a folder of images (or one image) over the IIIF Image API 3.0, level 2",
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
            """,
        options: [port, host, prefix, threads] + PyramidCacheOptions.all + [responseCache, decodedTiles, web, quiet])

    static let port = Option("port", .integer(in: 0...65_535), default: defaultPort, "TCP port; 0 picks a free one")
    /// The port unless `--port` says otherwise; `tile --layout iiif` writes ids for it.
    static let defaultPort = 8000
    static let host = Option("host", .text("ADDRESS"), default: "127.0.0.1", "IPv4 address to listen on")
    static let prefix = Option("prefix", .urlPrefix, default: IIIFService.Configuration().prefix,
                               "URL path before identifiers")
    static let responseCache = Option("response-cache", .byteSize, default: IIIFService.Configuration().responseCacheBytes,
                                      "most memory rendered responses are kept in (stored tiles are sent as they are)")
    static let decodedTiles = Option("decoded-tiles", .byteSize, default: IIIFService.Configuration().decodedTileBytes,
                                     "most memory whole decoded JPEG 2000 tiles are kept in, for the requests inside them")
    static let threads = CommonOptions.threads("request threads", perCore: 2, upTo: 1024)
    static let web = Option("web", ValueKind.text("DIR").optional,
                            default: .described("the Web/ folder found from the executable up", nil), "the viewer's files")
    static let quiet = Option(flag: "quiet", "no log line per request")

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 1, "PATH")
        var configuration = IIIFService.Configuration()
        configuration.prefix = arguments[prefix] == "/" ? "" : arguments[prefix]
        configuration.cache = try PyramidCacheOptions.open(arguments)
        configuration.responseCacheBytes = arguments[responseCache]
        configuration.decodedTileBytes = arguments[decodedTiles]
        let catalog: ImageCatalog
        do {
            catalog = try ImageCatalog(path: paths[0])
        } catch {
            throw TesseraError.io(path: paths[0], detail: "no such file or folder")
        }
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
