import Foundation
import Synchronization
import Tessera

/// The IIIF Image API 3.0 level 2 service: routes `{prefix}/{identifier}/...` requests to info.json, a redirect,
/// or a rendered image, with the headers the spec asks for (CORS on everything, JSON-LD, the canonical and
/// profile Link headers) and HTTP caching (ETag, Last-Modified, Cache-Control, 304s).
public final class IIIFService: Sendable {
    /// How the service presents itself.
    public struct Configuration: Sendable {
        /// The path before identifiers, without a trailing slash, e.g. `/iiif`.
        public var prefix = "/iiif"
        /// Tile size advertised in info.json, in pixels.
        public var tileSize = 256
        public var limits = IIIFLimits(maxArea: 25_000_000)
        public var jpegQuality = 85
        /// Where pyramids of large plain images are built and kept; nil serves every image as it is.
        public var cache: PyramidCache?

        /// The defaults: `/iiif`, 256-pixel tiles, responses of at most 25 MP, JPEG quality 85, no pyramid cache.
        public init() {}
    }

    public let catalog: ImageCatalog
    public let configuration: Configuration
    private let sources = Mutex<[String: OpenImage]>([:])

    /// An opened image and the file state it was opened at, so a changed file is reopened: what to read it from
    /// (the cache's answer), and for a pyramid of JPEG tiles (a pyramidal TIFF, a Deep Zoom or IIIF level-0
    /// folder, a cached pyramid or its preview), its stored tiles.
    private struct OpenImage: Sendable {
        let current: PyramidCache.CachedSource
        let tiles: (any StoredJPEGTiles)?
        let previewTiles: (any StoredJPEGTiles)?
        let modified: Date
        let size: Int

        var source: ImageSource { current.source }

        /// The tile size clients are told to ask for: the stored tiles' when there are any.
        func tileSize(_ configuration: Configuration) -> Int { tiles?.tileSize ?? configuration.tileSize }
    }

    /// A service answering for the images of `catalog`.
    public init(catalog: ImageCatalog, configuration: Configuration = Configuration()) {
        self.catalog = catalog
        self.configuration = configuration
    }

    /// Answers one request whose path starts with the prefix.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response = route(request)
        response.headers.append(("Access-Control-Allow-Origin", "*"))
        return response
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        if request.method == "OPTIONS" {
            return HTTPResponse(status: 204, headers: [("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"),
                                                       ("Access-Control-Allow-Headers", "*"),
                                                       ("Access-Control-Max-Age", "86400")])
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD, OPTIONS")], body: Array("method not allowed\n".utf8))
        }
        let rest = request.path.dropFirst(configuration.prefix.count + 1)
        let segments = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let encodedIdentifier = segments.first, !encodedIdentifier.isEmpty,
              let identifier = encodedIdentifier.removingPercentEncoding else {
            return .text(404, "not found")
        }
        do {
            guard let path = catalog.file(for: identifier) else { throw IIIFError.notFound("no image '\(identifier)'") }
            let base = baseURI(for: request) + "/" + encodedIdentifier
            switch segments.count {
            case 1:
                return HTTPResponse(status: 303, headers: [("Location", base + "/info.json")])
            case 2 where segments[1] == "info.json":
                return try info(path: path, id: base, request: request)
            case 5:
                return try image(path: path, base: base, segments: Array(segments[1...]), request: request)
            default:
                throw IIIFError.badRequest("expected {identifier}/{region}/{size}/{rotation}/{quality}.{format}")
            }
        } catch let error as IIIFError {
            return .text(error.status, error.description)
        } catch let error as TesseraError {
            // A file in the folder that is not an image is not an image the server has.
            if case .unknownFormat = error { return .text(404, error.description) }
            return .text(500, error.description)
        } catch {
            return .text(500, "\(error)")
        }
    }

    /// `scheme://host/prefix`, from the request's Host header so `id` matches the URL the client used.
    private func baseURI(for request: HTTPRequest) -> String {
        let scheme = request.headers["x-forwarded-proto"] ?? "http"
        return "\(scheme)://\(request.headers["host"] ?? "localhost")\(configuration.prefix)"
    }

    private func info(path: String, id: String, request: HTTPRequest) throws -> HTTPResponse {
        let image = try open(path)
        let document = IIIFInfo(id: id, size: image.source.properties.size, tileSize: image.tileSize(configuration),
                                limits: configuration.limits)
        return cached(document.json, contentType: IIIFInfo.contentType, image: image, tag: "info " + id,
                      request: request)
    }

    private func image(path: String, base: String, segments: [String], request: HTTPRequest) throws -> HTTPResponse {
        let parsed = try IIIFRequest(region: segments[0], size: segments[1], rotation: segments[2],
                                     qualityAndFormat: segments[3])
        guard IIIFRenderer.knownFormats.contains(parsed.format) else {
            throw IIIFError.badRequest("unknown format '\(parsed.format)'")
        }
        var image = try open(path)
        let size = image.source.properties.size
        let resolved = try parsed.resolve(for: size, limits: configuration.limits)
        let reduction = IIIFRenderer.reduction(for: resolved)
        if let cache = configuration.cache, !image.current.isCachedPyramid, image.tiles == nil,
           image.current.preview == nil, reduction >= PyramidCache.previewFactor,
           cache.waitForPreview(path: path, modified: image.modified, size: image.size) {
            image = try open(path)
        }
        let maxSize = IIIFRequest.maxSize(of: resolved.region.size, limits: configuration.limits, upscale: false)
        let canonical = base + "/" + resolved.canonicalPath(imageSize: size, maxSize: maxSize)
        var response: HTTPResponse
        if let notModified = notModified(image: image, tag: canonical, request: request) {
            response = notModified
        } else if let stored = try storedTile(for: resolved, in: image) {
            response = cached(stored, contentType: "image/jpeg", image: image, tag: canonical, request: request)
        } else {
            let preview = image.current.preview.flatMap { reduction >= PyramidCache.previewFactor ? $0 : nil }
            let (bytes, mediaType) = try IIIFRenderer.render(resolved, from: preview ?? image.source,
                                                             reducedBy: preview == nil ? 1 : PyramidCache.previewFactor,
                                                             quality: configuration.jpegQuality)
            response = cached(bytes, contentType: mediaType, image: image, tag: canonical, request: request)
        }
        response.headers.append(("Link", "<\(canonical)>;rel=\"canonical\", <\(IIIFInfo.profileURI)>;rel=\"profile\""))
        return response
    }

    /// The stored JPEG that answers the request exactly, if there is one: a tile of a pyramid level (cut by the
    /// image's edge or not), asked for at that level's size, as it is, in JPEG. This is the path that needs no
    /// decoding and no encoding.
    private func storedTile(for request: IIIFResolvedRequest, in image: OpenImage) throws -> [UInt8]? {
        guard request.rotation == 0, !request.mirror, request.format == "jpg",
              request.quality == .default || (request.quality == .color && image.source.properties.colorModel != .gray),
              let (scale, column, row) = IIIFTileGeometry(imageSize: image.source.properties.size,
                                                          tileWidth: image.tileSize(configuration),
                                                          tileHeight: image.tileSize(configuration))
                  .tile(region: request.region, size: request.size)
        else { return nil }
        if let tiles = image.tiles { return try tiles.jpeg(scale: scale, column: column, row: row) }
        let factor = PyramidCache.previewFactor
        guard let tiles = image.previewTiles, tiles.tileSize == image.tileSize(configuration), scale % factor == 0
        else { return nil }
        return try tiles.jpeg(scale: scale / factor, column: column, row: row)
    }

    /// The opened image for `path`, reopened when the file changed or its cached pyramids did.
    private func open(_ path: String) throws -> OpenImage {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let modified = attributes?[.modificationDate] as? Date ?? .distantPast
        let size = attributes?[.size] as? Int ?? 0
        let cached = sources.withLock { $0[path] }
        let unchanged = cached.flatMap { $0.modified == modified && $0.size == size ? $0 : nil }
        if let unchanged, unchanged.current.isCachedPyramid || unchanged.tiles != nil { return unchanged }
        let file = try unchanged?.current.file ?? ImageSource(path: path)
        // A large plain image is read directly until its pyramid is built, then from the pyramid; its coarse
        // requests come from the preview pyramid as soon as that is built.
        let current = configuration.cache?.source(for: file, path: path, modified: modified, size: size,
                                                  current: unchanged?.current) ?? PyramidCache.CachedSource(file: file)
        if let unchanged, current.source === unchanged.current.source, current.preview === unchanged.current.preview {
            return unchanged
        }
        let opened = OpenImage(current: current, tiles: try? current.source.storedJPEGTiles(),
                               previewTiles: try? current.preview?.storedJPEGTiles(), modified: modified, size: size)
        sources.withLock { sources in
            if sources.count >= 256 { sources.removeAll() }
            sources[path] = opened
        }
        return opened
    }

    /// A 200 with caching headers, or a 304 when the client's copy is current.
    private func cached(_ body: [UInt8], contentType: String, image: OpenImage, tag: String,
                        request: HTTPRequest) -> HTTPResponse {
        if let notModified = notModified(image: image, tag: tag, request: request) { return notModified }
        return HTTPResponse(status: 200, headers: [("Content-Type", contentType)] + cacheHeaders(image: image, tag: tag),
                            body: body)
    }

    private func notModified(image: OpenImage, tag: String, request: HTTPRequest) -> HTTPResponse? {
        let etag = entityTag(image: image, tag: tag)
        let matches = request.headers["if-none-match"].map { $0.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag || $0 == "*" } }
        let unmodified = request.headers["if-modified-since"].flatMap(HTTPDate.parse).map { image.modified.timeIntervalSince1970.rounded(.down) <= $0.timeIntervalSince1970 }
        guard matches ?? unmodified ?? false else { return nil }
        return HTTPResponse(status: 304, headers: cacheHeaders(image: image, tag: tag))
    }

    private func cacheHeaders(image: OpenImage, tag: String) -> [(String, String)] {
        [("ETag", entityTag(image: image, tag: tag)), ("Last-Modified", HTTPDate.format(image.modified)),
         ("Cache-Control", "public, max-age=86400")]
    }

    /// A strong validator from the file's size and time and what was asked of it.
    private func entityTag(image: OpenImage, tag: String) -> String {
        "\"" + stableHash("\(image.size) \(image.modified.timeIntervalSince1970) \(tag)") + "\""
    }
}
