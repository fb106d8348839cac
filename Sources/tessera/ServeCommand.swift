import Foundation
import Tessera
import TesseraServer

/// `tessera serve`: a IIIF Image API 3.0 level 2 server over a folder of images or one image.
enum ServeCommand: Command {
    static let spec = CommandSpec(
        name: "serve", usage: "serve PATH [--port N] [--host ADDRESS] [--prefix /iiif] [options]",
        summary: "serve a folder of images (or one image) over the IIIF Image API 3.0, level 2",
        details: """
            Every JPEG, PNG, TIFF, WebP, BMP or GIF under PATH is an image; its identifier is its path relative to
            PATH, with slashes written %2F. GET / lists them. Ctrl-C stops the server after the requests in flight.
            A large image that is not a pyramid is served by region reads at first while a pyramidal TIFF of it is
            built in the cache; then its tiles come from the pyramid, most as stored bytes.
            GET /stream/{identifier}/{size} sends the image, its longer side at most size pixels (or max), as a
            progressive JPEG while it is encoded (chunked): its first scans arrive before the last is encoded.
            """,
        options: [
            Option("port", value: "N", "TCP port (default 8000; 0 picks a free one)"),
            Option("host", value: "ADDRESS", "IPv4 address to listen on (default 127.0.0.1)"),
            Option("prefix", value: "PATH", "URL path before identifiers (default /iiif)"),
            Option("threads", value: "N", "request threads (default: two per core)"),
            Option("cache", value: "DIR", "where pyramids of large plain images are built (default ~/.cache/tessera)"),
            Option("cache-size", value: "SIZE", "most space the cached pyramids take (default 8G)"),
            Option("no-cache", "serve every image as it is, building no pyramids"),
            Option("quiet", "no log line per request"),
        ])

    static func run(_ arguments: Arguments) throws {
        let paths = try arguments.positionals(exactly: 1, "PATH")
        var configuration = IIIFService.Configuration()
        if let prefix = arguments.value("prefix") {
            guard prefix.hasPrefix("/"), !prefix.hasSuffix("/") || prefix == "/" else {
                throw UsageError("--prefix must start with / and not end with one, not '\(prefix)'")
            }
            configuration.prefix = prefix == "/" ? "" : prefix
        }
        if !arguments.flag("no-cache") {
            let home = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"]
                ?? (NSHomeDirectory() + "/.cache")
            configuration.cache = try PyramidCache(folder: arguments.value("cache") ?? home + "/tessera",
                                                   limit: try arguments.byteSize("cache-size") ?? 8 << 30)
        }
        let catalog: ImageCatalog
        do {
            catalog = try ImageCatalog(path: paths[0])
        } catch {
            throw TesseraError.io(path: paths[0], detail: "no such file or folder")
        }
        let service = IIIFService(catalog: catalog, configuration: configuration)
        let streams = ProgressiveStreamService(catalog: catalog)
        let quiet = arguments.flag("quiet")
        let server = HTTPServer { request in
            let start = DispatchTime.now()
            let response = request.path.hasPrefix(ProgressiveStreamService.prefix)
                ? streams.handle(request) : route(request, service: service)
            if !quiet {
                let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6
                let line = "\(request.method) \(request.path) \(response.status) \(response.body.count) \(milliseconds.fixed(1)) ms\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
            return response
        }
        let host = arguments.value("host") ?? "127.0.0.1"
        let threads = try arguments.integer("threads", in: 1...1024) ?? 2 * ProcessInfo.processInfo.activeProcessorCount
        try server.start(address: host, port: UInt16(try arguments.integer("port", in: 0...65_535) ?? 8000),
                         threads: threads)
        let stopped = DispatchSemaphore(value: 0)
        Interruption.shared.onInterrupt { _ in stopped.signal() }
        let count = catalog.identifiers().count
        let banner = "serving \(count) image\(count == 1 ? "" : "s") from \(catalog.root) at "
            + "http://\(host):\(server.port ?? 0)\(configuration.prefix)/  (Ctrl-C stops)\n"
        FileHandle.standardOutput.write(Data(banner.utf8))
        stopped.wait()
        server.stop()
    }

    /// `/` lists the images; everything under the prefix is IIIF; anything else is 404.
    private static func route(_ request: HTTPRequest, service: IIIFService) -> HTTPResponse {
        let prefix = service.configuration.prefix
        if request.path == "/" || request.path == "/index.html" { return index(service: service) }
        if request.path.hasPrefix(prefix + "/") { return service.handle(request) }
        var response = HTTPResponse.text(404, "not found")
        response.headers.append(("Access-Control-Allow-Origin", "*"))
        return response
    }

    private static func index(service: IIIFService) -> HTTPResponse {
        let prefix = service.configuration.prefix
        let rows = service.catalog.identifiers().map { identifier -> String in
            let encoded = identifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~"))) ?? identifier
            let name = identifier.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            return "<li><a href=\"\(prefix)/\(encoded)/info.json\">\(name)</a></li>"
        }
        let html = "<!doctype html><meta charset=utf-8><title>Tessera</title><h1>Images</h1><ul>\n"
            + rows.joined(separator: "\n") + "\n</ul>\n"
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                   ("Access-Control-Allow-Origin", "*")], body: Array(html.utf8))
    }
}
