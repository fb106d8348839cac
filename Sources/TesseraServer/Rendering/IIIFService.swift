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
        /// The most memory rendered responses are kept in (`ResponseCache`), in bytes.
        public var responseCacheBytes = 128 << 20
        /// How long clients, proxies and CDNs may keep info.json and images without asking again, in seconds
        /// (`Cache-Control: public, max-age=...`).
        public var cacheLifetime = 86_400
        /// The address clients reach the server at, when configured (`--public-url`); else each request's
        /// forwarded headers and Host say it.
        public var publicBase: PublicBase?
        /// The memory all renders in flight may hold together, and the queue of those waiting for it.
        public var renderBudget = RenderBudget.Limits(bytes: MemoryBudget.default.limit, queueLength: 64, maxWait: 10)
        /// The most memory whole decoded codestream tiles are kept in (`DecodedTileCache`), in bytes: the requests
        /// that fall in one JPEG 2000 tile then decode it once. By default enough for every tile of a 100 MP image
        /// at full and half resolution (375 MB), the levels whose tiles serve several 256-pixel requests: with
        /// 256 MiB, a pass over such an image's tiles in random order decoded each of them about four times.
        public var decodedTileBytes = 512 << 20
        /// Whether the server has at most one request in progress (a lone viewer's): the renders an image's
        /// info.json foresees (`edgeRendersFollowUp`) are made only then, and a local image not open yet is opened
        /// on a polling thread only then (`OpenImages.open`). Always, unless set: `tessera serve` asks its server
        /// (`RequestCount`).
        public var isQuiet: @Sendable () -> Bool = { true }

        /// The defaults: `/iiif`, 256-pixel tiles, responses of at most 25 MP, JPEG quality 85, no pyramid cache,
        /// 128 MiB of rendered responses kept a day, the address from each request, renders within the default
        /// memory limit with 64 waiting at most 10 s, decoded JPEG 2000 tiles kept as `decodedTileBytes` says,
        /// always quiet (renders foreseen whenever an info.json is sent, images opened where they are asked for).
        public init() {}
    }

    public let catalog: ImageCatalog
    public let configuration: Configuration
    /// The Cache-Control of the image responses: `cacheLifetime` said once.
    private let cacheControl: String
    /// The rendered responses, shared by every client.
    public let responses: ResponseCache
    /// The memory renders hold, shared by every render of the site (the progressive streams' too).
    public let renderBudget: RenderBudget
    /// The decoded codestream tiles, shared by every request.
    public let decodedTiles: DecodedTileCache
    /// Images' stored levels that are one stored tile, with their planes decoded whole at their own size: what
    /// every thumbnail of such an image is resampled from (viewers ask two sizes, `full/90,` and `full/125,`, and a
    /// gallery another), its tile read and decoded once. Keyed like the responses, by the image as it is now, and
    /// the level.
    public let thumbnailPlanes = SharedCache<String, HeldLevel>(byteLimit: thumbnailPlaneBytes) { key, level in
        key.utf8.count + level.byteCount + 64
    }

    /// A stored level that is one tile, as `thumbnailPlanes` holds it: the tile as read (`OneStoredTile.source`,
    /// its JPEG, and `content`, its real pixels), so that a thumbnail from the held planes reads nothing, and its
    /// planes (nil when the JPEG is not YCbCr or gray).
    public struct HeldLevel: Sendable {
        let tile: ImageSource
        let content: Tessera.Size
        let planes: JPEGPlanes?

        /// The memory held, in bytes: the planes' samples and the tile's JPEG.
        var byteCount: Int { tile.properties.fileSize + (planes?.samples.count ?? 0) }
    }
    /// The most memory `thumbnailPlanes` holds, in bytes: 32 MiB, the 4:2:0 planes of some 330 images' 256-pixel
    /// smallest levels.
    public static let thumbnailPlaneBytes = 32 << 20
    private let images: OpenImages
    /// The size form of the last tile asked for (a region in pixels), for `foreseenSizeForm`: its raw value, 0
    /// before any.
    private let tileSizeForm = Atomic<UInt8>(0)
    /// The thumbnails asked for last (`noteThumbnail`), below the image (`full/125,/0/default.jpg`): distinct, the
    /// latest last, at most `foreseenThumbnails`.
    let askedThumbnails = Mutex<[String]>([])
    /// How many thumbnail sizes, the last asked for, are made ahead of each new image's requests
    /// (`thumbnailPlanesFollowUp`): a viewer asks one or two of every image, a gallery another.
    static let foreseenThumbnails = 3

    /// A service answering for the images of `catalog`.
    public init(catalog: ImageCatalog, configuration: Configuration = Configuration()) {
        self.catalog = catalog
        self.configuration = configuration
        cacheControl = "public, max-age=\(configuration.cacheLifetime)"
        images = OpenImages(cache: configuration.cache, isQuiet: configuration.isQuiet)
        responses = ResponseCache(byteLimit: configuration.responseCacheBytes)
        renderBudget = RenderBudget(limits: configuration.renderBudget)
        decodedTiles = DecodedTileCache(byteLimit: configuration.decodedTileBytes)
    }

    /// Builds a small pyramidal TIFF of 256-pixel JPEG tiles (the size viewers' pyramids have, so that the working
    /// memory of its renders is a real request's) in a folder of its own (removed after) and answers the requests a
    /// viewer starts with about it (info.json, thumbnails, stored tiles whole and cut by the edge, a tile a pixel
    /// off, a render from one stored tile and one from four) through a service of its own, whose caches go with it:
    /// so a freshly started server's first requests do not pay for what a process does once (the codecs' and the
    /// resampler's first use, their code paged in, the runtime's type metadata made for each path, the heap grown
    /// to a render's size). Measured, a new server's first info.json and thumbnail each took about a millisecond
    /// longer than the next image's. Then asks this service for an image its folder does not have, which took 40-50
    /// us from its first info.json (its catalog's first use). Returns the statuses of the warm-up service's
    /// responses (empty when the image could not be made).
    @discardableResult
    public func warmUp() -> [Int] {
        let folder = NSTemporaryDirectory() + "tessera-warm-up-\(getpid())", name = "warm-up.tif"
        guard mkdir(folder, 0o700) == 0 else { return [] }
        defer {
            unlink(folder + "/" + name)
            rmdir(folder)
        }
        var image = ImageBuffer(width: 1100, height: 800, format: .rgb8)
        for index in image.bytes.indices { image.bytes[index] = UInt8(truncatingIfNeeded: index * 7 / 3) }
        var local = configuration
        local.cache = nil
        guard let plan = try? PyramidPlan(imageSize: image.size, tileSize: 256, depth: .oneTile),
              let sink = try? PyramidalTIFFSink(path: folder + "/" + name, plan: plan, pixelFormat: image.format,
                                                options: PyramidBuilder.Options(), levelStorage: .pages),
              (try? PyramidBuilder(plan: plan, sink: sink).build(from: BufferReader(image))) != nil,
              let catalog = try? ImageCatalog(path: folder)
        else { return [] }
        let service = IIIFService(catalog: catalog, configuration: local)
        let statuses = ["info.json", "full/90,/0/default.jpg", "full/125,/0/default.jpg", "0,0,256,256/256,/0/default.jpg",
                        "1024,768,76,32/76,/0/default.jpg", "0,0,512,512/257,/0/default.jpg",
                        "0,0,512,512/259,/0/default.jpg", "128,128,400,400/200,/0/default.jpg"].map {
            service.handle(HTTPRequest(method: "GET", path: "\(local.prefix)/\(name)/\($0)")).status
        }
        // And this service's own first request, for an image its folder does not have (its catalog's first use).
        _ = handle(HTTPRequest(method: "GET", path: "\(configuration.prefix)/\(name)/info.json"))
        return statuses
    }

    /// How many of the catalog's first images `tessera serve` has `prepare` look at unless told otherwise, and the
    /// longest it lets it take, in seconds: 12 pyramids of 40 MP delayed its start by about 1 ms on a local disk
    /// (27.3 ms to its banner against 26.1, medians of 5); on a slow shared file system the time bounds the delay.
    public static let preparedImages = 64, preparingTime = 0.5

    /// Of the catalog's first `limit` images, opens those that are pyramids (local files of several levels: a
    /// plain image is left to its requests, whose open may start the pyramid cache's build) and decodes the planes
    /// of each one's smallest level when that is one stored tile, for at most `seconds`: what a viewer's first
    /// requests of each (info.json, then its thumbnails) would otherwise wait for. A restarted server's first
    /// visitors then find the images open (opening a libvips pyramid was 50-110 us of the 70-140 its first
    /// info.json took in the server) and each thumbnail a resampling of held planes away (`thumbnailPlanesFollowUp`).
    /// Then gives `idleTime` (nil: none) the renders each opened image's first info.json would foresee
    /// (`foreseeEdgeRenders`). Returns how many images it opened.
    @discardableResult
    public func prepare(limit: Int, seconds: Double, idleTime: IdleTimeQueue? = nil) -> Int {
        guard limit > 0 else { return 0 }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, seconds) * 1e9)
        var opened: [(image: OpenImages.Image, encodedIdentifier: String)] = []
        for identifier in catalog.identifiers(limit: limit) where DispatchTime.now().uptimeNanoseconds < deadline {
            guard let file = catalog.file(for: identifier), let image = images.openPyramid(file.path, stamp: file.stamp)
            else { continue }
            let encodedIdentifier = ImageCatalog.pathSegment(of: identifier)
            opened.append((image, encodedIdentifier))
            thumbnailPlanesFollowUp(for: image, encodedIdentifier: encodedIdentifier)?()
        }
        if let idleTime { foreseeEdgeRenders(of: opened[...], queue: idleTime) }
        return opened.count
    }

    /// Runs a job in the machine's idle time, after those queued before it (`HTTPServer.runInIdleTime`).
    public typealias IdleTimeQueue = @Sendable (@escaping @Sendable () -> Void) -> Void

    /// Makes, in idle time from the server's start, the renders the first info.json of each of `images` (those
    /// `prepare` opened, in the catalog's order) would foresee (`edgeRendersFollowUp`), which a viewer's first views
    /// of them ask for, so that a restarted server's first visitors find them made as later ones do: one
    /// image per job given to `queue`, each queued once the one before is made, behind what requests have queued
    /// meanwhile (an info.json's own foresight); none once the server is busy (`Configuration.isQuiet`) or the
    /// responses held fill half the response cache, the rest left to what clients ask. The first views of an image
    /// whose renders were foreseen only by its info.json found some still being made (a 3-pixel sliver of a libvips
    /// level, asked 1 ms after info.json, made in 0.8 ms beside the viewer's other requests on a 2-core machine);
    /// the viewer-traffic benchmark's 12 pyramids of 40 MP took about 12 ms.
    private func foreseeEdgeRenders(of images: ArraySlice<(image: OpenImages.Image, encodedIdentifier: String)>,
                                    queue: @escaping IdleTimeQueue) {
        guard let (image, encodedIdentifier) = images.first else { return }
        queue { [self] in
            guard configuration.isQuiet(), responses.usage.bytes <= responses.byteLimit / 2 else { return }
            edgeRendersFollowUp(for: image, encodedIdentifier: encodedIdentifier)?()
            foreseeEdgeRenders(of: images.dropFirst(), queue: queue)
        }
    }

    /// How many images are open, and the memory they hold.
    public var openImages: (count: Int, bytes: Int) { images.usage }

    /// Answers one request whose path starts with the prefix: on the polling thread when nothing needs decoding
    /// (info.json of an open image, a stored tile, a held render, a 304, an error), else on a worker.
    public func answer(_ request: HTTPRequest) -> HTTPAnswer {
        HTTPAnswer.inlineOrLater { place throws(NeedsWorker) in
            var response = try self.route(request, place)
            response.headers.append(("Access-Control-Allow-Origin", "*"))
            return response
        }
    }

    /// `answer`'s response, made on the calling thread.
    public func handle(_ request: HTTPRequest) -> HTTPResponse { answer(request).response }

    /// `request`'s response, made on `place`; `madeAhead` when no client asked for it (idle-time work, `makeAhead`),
    /// which then tells nothing of what viewers ask (`noteSizeForm`, `noteThumbnail`) and counts in no lookup.
    private func route(_ request: HTTPRequest, _ place: HandlerPlace, madeAhead: Bool = false) throws(NeedsWorker)
        -> HTTPResponse {
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
              let identifier = encodedIdentifier.percentDecoded else {
            return .text(404, "not found")
        }
        // A folder's Collection: `{prefix}/collection.json` for the root, `{prefix}/{folder}/collection.json` below.
        let collectionFolder = segments == [IIIFPresentation.collectionName] ? ""
            : segments.count == 2 && segments[1] == IIIFPresentation.collectionName ? identifier : nil
        if let collectionFolder, catalog.file(for: identifier) == nil {
            return collection(of: collectionFolder, request: request)
        }
        do {
            guard let file = catalog.file(for: identifier) else { throw IIIFError.notFound("no image '\(identifier)'") }
            let base = baseURI(for: request) + "/" + encodedIdentifier
            switch segments.count {
            case 1:
                return HTTPResponse(status: 303, headers: [("Location", base + "/info.json")])
            case 2 where segments[1] == "info.json":
                return try info(file, id: base, encodedIdentifier: encodedIdentifier, request: request, place)
            case 2 where segments[1] == IIIFPresentation.manifestName:
                return try manifest(file, service: base, identifier: identifier, request: request, place)
            case 5:
                return try image(file, encodedIdentifier: encodedIdentifier, base: base, segments: Array(segments[1...]),
                                 request: request, place, madeAhead: madeAhead)
            default:
                throw IIIFError.badRequest("expected {identifier}/{region}/{size}/{rotation}/{quality}.{format}")
            }
        } catch let handOff as NeedsWorker {
            throw handOff
        } catch let error as IIIFError {
            return .text(error.status, error.description)
        } catch let refusal as RenderRefusal {
            return refusal.response
        } catch {
            return .failure(error, about: identifier)
        }
    }

    /// `scheme://host/path/prefix`, from the public base (configured, or the request's forwarded headers and
    /// Host) so that `id` matches the URL the client used, through a proxy or not.
    private func baseURI(for request: HTTPRequest) -> String {
        PublicBase.of(request, configured: configuration.publicBase).url + configuration.prefix
    }

    private func info(_ file: ImageCatalog.File, id: String, encodedIdentifier: String, request: HTTPRequest,
                      _ place: HandlerPlace) throws -> HTTPResponse {
        // A new image opened here has the idle-time thread stand by for its thumbnails' planes, which it then
        // decodes while info.json is written and sent (on the other core when that is idle), rather than from when
        // info.json is sent: a new server's first `full/90,` waited for them.
        let standBy = place == .pollingThread && configuration.isQuiet() && !images.isOpen(file.path)
            ? request.idleTime?.standBy() : nil
        let image: OpenImages.Image
        do {
            image = try images.open(file.path, place, stamp: file.stamp)
        } catch {
            standBy?.hand(nil)
            throw error
        }
        // In idle time: what the viewer asks next at once (its thumbnails), before the renders of any image before,
        // then, from when info.json is sent, what it asks later.
        let thumbnails = thumbnailPlanesFollowUp(for: image, encodedIdentifier: encodedIdentifier)
        standBy?.hand(thumbnails)
        let properties = image.source.properties
        let document = IIIFInfo(id: id, properties: properties, tileSize: tileSize(of: image),
                                limits: configuration.limits,
                                nativeScaleFactors: properties.jpeg2000.map { (0..<$0.resolutionLevels).map { 1 << $0 } } ?? [])
        var response = validators(image: image, tag: "info " + id).respond(to: request) {
            (document.json, IIIFInfo.contentType)
        }
        if standBy == nil { response.preemptingIdleFollowUp = thumbnails }
        response.idleFollowUp = edgeRendersFollowUp(for: image, encodedIdentifier: encodedIdentifier)
        return response
    }

    /// The Presentation 3.0 Manifest of the image `file` names, whose service is at `service`: one Canvas of its size.
    private func manifest(_ file: ImageCatalog.File, service: String, identifier: String, request: HTTPRequest,
                          _ place: HandlerPlace) throws -> HTTPResponse {
        let image = try images.open(file.path, place, stamp: file.stamp)
        let size = image.source.properties.size
        return validators(image: image, tag: "manifest " + service).respond(to: request) {
            (IIIFPresentation.manifest(service: service, label: ImageCatalog.lastComponent(of: identifier), size: size,
                                       limits: configuration.limits), IIIFPresentation.contentType)
        }
    }

    /// The Presentation 3.0 Collection of `folder` of the catalog ("" for its root): its subfolders' Collections,
    /// then its images' Manifests, named as the front page names them; opens no image.
    private func collection(of folder: String, request: HTTPRequest) -> HTTPResponse {
        guard catalog.listsImages else { return .text(404, "images named by a URL template cannot be listed") }
        guard let contents = catalog.folder(folder) else { return .text(404, "no folder '\(folder)'") }
        let base = baseURI(for: request)
        let items = contents.folders.map {
            IIIFPresentation.Item(kind: .collection, id: base + IIIFPresentation.collectionPath(of: $0),
                                  label: ImageCatalog.lastComponent(of: $0))
        } + contents.images.map {
            IIIFPresentation.Item(kind: .manifest, id: base + IIIFPresentation.manifestPath(of: $0),
                                  label: ImageCatalog.lastComponent(of: $0))
        }
        let document = IIIFPresentation.collection(id: base + IIIFPresentation.collectionPath(of: folder),
                                                   label: ImageCatalog.lastComponent(of: folder.isEmpty ? catalog.root : folder),
                                                   items: items)
        return HTTPResponse(status: 200, headers: [("Content-Type", IIIFPresentation.contentType),
                                                   ("Cache-Control", "no-cache")], body: document)
    }

    /// The levels whose edge renders info.json foresees: those of at most 64 tiles (8 x 8), the home view and first
    /// zoom-ins of a viewer's window; the window they are ordered for (`IIIFTileGeometry.edgeTiles`), a full-HD
    /// screen's.
    static let foreseenLevelTiles = 64, foreseenView = Tessera.Size(width: 1920, height: 1080)

    /// A viewer's first views of an image ask for the tiles along the right and bottom edges of its coarse levels:
    /// first the level its window shows whole, then those it zooms into. Some of those are renders from the stored
    /// tiles (a decode, a resampling and an encode, the slowest requests of those views): a height rounded from a
    /// narrow tile's aspect ratio (`w,`) two pixels off the level, a last column of a pixel or two that a level
    /// halved rounding down lost. Once info.json is sent, in the machine's idle time (`HTTPResponse.idleFollowUp`)
    /// and while the server is quiet (`Configuration.isQuiet`, asked before each), this makes them into the
    /// response cache in both of viewers' forms, `w,h` and `w,` (every tile in the form viewers are asking in first,
    /// `foreseenSizeForm`, then in the other), taking no core from the viewer's requests. Each
    /// goes through the request's own path as on a polling thread: it is kept under the key the viewer's request
    /// finds (or waits for, while it is made), and only a render made at once from one stored tile or a few is
    /// made, none waiting for memory or a worker. Tiles that a stored tile answers, as it is or cut or stretched in
    /// its coefficients, are left to their requests. Nil unless the image is a local file with stored tiles whose
    /// renders no info.json has foreseen since the file was opened (`OpenImages.Image.edgeForesight`), and
    /// responses are kept.
    private func edgeRendersFollowUp(for image: OpenImages.Image, encodedIdentifier: String) -> (@Sendable () -> Void)? {
        guard let tiles = image.tiles, image.source.input.isFile, configuration.responseCacheBytes > 0,
              image.edgeForesight.take() else { return nil }
        let size = image.source.properties.size
        let geometry = IIIFTileGeometry(imageSize: size, tileWidth: tiles.tileSize, tileHeight: tiles.tileSize)
        return { [self] in
            for path in Self.foreseenPaths(of: geometry, first: foreseenSizeForm) {
                CooperativeYield.point()
                guard configuration.isQuiet() else { return }
                let parts = path.split(separator: "/").map(String.init)
                guard let resolved = try? IIIFRequest(region: parts[0], size: parts[1], rotation: parts[2],
                                                      qualityAndFormat: parts[3])
                        .resolve(for: size, limits: configuration.limits),
                      !(storedTileAddress(for: resolved, in: image).map {
                          $0.tiles.answers(scale: $0.scale, column: $0.column, row: $0.row, size: resolved.size)
                      } ?? false) else { continue }
                makeAhead(encodedIdentifier + "/" + path)
            }
        }
    }

    /// The edge tiles info.json foresees (`IIIFTileGeometry.edgeTiles`), in the order they are made: every tile in
    /// the form viewers ask in (`first`), then in the other; each tile in both forms while that is not known. Each
    /// path is made as it is reached, between the foresight's yield points, rather than all of them before the first.
    static func foreseenPaths(of geometry: IIIFTileGeometry, first: IIIFTileGeometry.SizeForm?)
        -> some RandomAccessCollection<String> {
        let edges = geometry.edgeTiles(ofLevelsUpTo: foreseenLevelTiles, view: foreseenView)
        let forms = IIIFTileGeometry.SizeForm.allCases
        let order = first.map { first in
            ([first] + forms.filter { $0 != first }).flatMap { form in edges.map { ($0, form) } }
        } ?? edges.flatMap { edge in forms.map { (edge, $0) } }
        return order.lazy.map { edge, form in
            geometry.path(scale: edge.scale, column: edge.column, row: edge.row, sizeForm: form)
        }
    }

    /// The form the renders info.json foresees are made in first: the one the last tile asked for gave its size in
    /// (`noteSizeForm`); nil until one is asked for. A viewer asks in one form, and a render foreseen in the other
    /// can take as long as the one it asks for: a viewer asking `w,` for `4096,0,3,2048/1,` (a sliver of a level
    /// halved rounding down, 1 x 683 pixels) found it still being made, after `4096,0,3,2048/1,256` and others.
    var foreseenSizeForm: IIIFTileGeometry.SizeForm? {
        IIIFTileGeometry.SizeForm(rawValue: tileSizeForm.load(ordering: .relaxed))
    }

    /// Notes the form `request`'s size is in when it asks for a tile (a region in pixels, its size `w,h` or `w,`),
    /// for `foreseenSizeForm`; written only when it changes, as most requests leave it as it is.
    private func noteSizeForm(of request: IIIFRequest) {
        guard case .pixels = request.region else { return }
        let form: IIIFTileGeometry.SizeForm
        switch request.size {
        case .exact: form = .widthAndHeight
        case .width: form = .width
        default: return
        }
        if tileSizeForm.load(ordering: .relaxed) != form.rawValue {
            tileSizeForm.store(form.rawValue, ordering: .relaxed)
        }
    }

    /// Viewers ask for a thumbnail right after info.json, and every thumbnail of an image whose smallest stored
    /// level is one stored tile is resampled from that level's planes (`thumbnailPlanes`). When they are not held,
    /// this decodes them once info.json is sent, in the machine's idle time (`HTTPResponse.preemptingIdleFollowUp`:
    /// ahead of the renders foreseen for an image before, interrupting the one under way, as a viewer showing a
    /// collection asks for one image after another), while the server is quiet (`Configuration.isQuiet`) and within
    /// the render budget (none taken when it has no room at once), so that the thumbnail finds them decoded, or
    /// waits for the decode under way, instead of making them. Made on a worker instead, the decode took a core
    /// from the viewer asking for the thumbnail and from the thread answering it: 46 of 84 passes of the
    /// viewer-traffic benchmark had a request over 3 stored tiles' time (an image's first `full/90,`, mostly), 22
    /// of 84 with the decode in idle time. Then, while the server is still quiet, it renders the thumbnails asked
    /// for last of any image (`noteThumbnail`) that the planes answer at once, in the order they were asked: a viewer
    /// asks the same sizes of every image, the first at once and the next once that is answered. The first is
    /// begun here when the planes are decoded before its request comes (whose request then waits for it rather
    /// than start it afresh), and is left to its request when that came first (`ResponseCache.response` does not
    /// wait for it here), while this renders the next, which its request then finds made (an image's `full/125,`
    /// after its `full/90,`: 0.40-0.50 ms at the client, 0.22-0.33 made). Nil when there is nothing to decode: an
    /// image `prepare` opened has its planes held, and its thumbnails are resampled by their requests. Made ahead
    /// from the held planes in idle time, they ran beside a viewer's back-to-back requests (a thumbnail made in 0.29
    /// and 0.79 ms instead of 0.15) and held back the edge renders, then begun by info.json too (a 3-pixel sliver
    /// asked 1 ms after info.json was still to begin): over three runs of the viewer-traffic benchmark the requests
    /// over 3 stored tiles' time were 20 without, 40 with.
    private func thumbnailPlanesFollowUp(for image: OpenImages.Image, encodedIdentifier: String)
        -> (@Sendable () -> Void)? {
        guard image.current.preview == nil, let tiles = image.tiles else { return nil }
        let imageSize = image.source.properties.size
        var scale = 1, smallest: (scale: Int, size: Tessera.Size)?
        while scale <= max(imageSize.width, imageSize.height) {
            if let size = tiles.storedLevelSize(scale: scale) { smallest = (scale, size) }
            scale *= 2
        }
        let imageKey = responseKey(of: image, readFrom: image.source)
        // Thumbnails made ahead are kept where their requests find them, or not made.
        let makesThumbnails = configuration.responseCacheBytes > 0
        guard let (scale, size) = smallest, size.width <= tiles.tileSize, size.height <= tiles.tileSize,
              case let key = Self.planesKey(imageKey: imageKey, scale: scale), !thumbnailPlanes.holdsOrMakes(key)
        else { return nil }
        return { [self] in
            // Asked again when it runs: it may interrupt the idle-time work that makes them now (a foreseen render
            // from the same level), whose value it would wait for on its own thread (`preemptingIdleFollowUp`).
            guard configuration.isQuiet(), !thumbnailPlanes.holdsOrMakes(key) else { return }
            // What `full/{the level's width},` reads. A failure here is the thumbnail's, which reports it.
            let whole = IIIFResolvedRequest(region: Rect(x: 0, y: 0, width: imageSize.width, height: imageSize.height),
                                            size: size, rotation: 0, mirror: false, quality: .default, format: "jpg")
            guard let tile = try? storedTileSource(for: whole, in: image, imageKey: imageKey, counted: false),
                  tile.isWholeLevel,
                  let plan = try? IIIFRenderer.plan(tile.request, from: tile.source, reducedBy: tile.scale,
                                                    padding: tile.padding),
                  let reservation = renderBudget.reserveAtOnce(plan.workingSet) else { return }
            CooperativeYield.point()
            let planes = try? wholeLevelPlanes(of: tile, imageKey: imageKey, madeAhead: true)
            reservation.release()
            guard planes != nil else { return }
            for thumbnail in makesThumbnails ? askedThumbnails.withLock({ $0 }) : [] {
                CooperativeYield.point()
                guard configuration.isQuiet() else { return }
                makeAhead(encodedIdentifier + "/" + thumbnail)
            }
        }
    }

    /// Makes the response to `path` (below the prefix) ahead of its request, in idle time, as on a polling thread:
    /// kept where the request finds it, or left to the request when it needs a worker, fails or is being made.
    private func makeAhead(_ path: String) {
        let request = HTTPRequest(method: "GET", path: configuration.prefix + "/" + path)
        _ = try? route(request, .pollingThread, madeAhead: true)
    }

    /// Notes that `segments` (after the image) ask for a thumbnail, for `thumbnailPlanesFollowUp`: kept at the end of
    /// `askedThumbnails` (moved there if it was in it), the oldest dropped past `foreseenThumbnails`.
    private func noteThumbnail(_ segments: [String]) {
        let path = segments.joined(separator: "/")
        askedThumbnails.withLock { asked in
            guard asked.last != path else { return }
            asked.removeAll { $0 == path }
            asked.append(path)
            if asked.count > Self.foreseenThumbnails { asked.removeFirst() }
        }
    }

    /// What `image`'s rendered responses and decoded planes are kept under, before the request: the file as it is
    /// now and what it is read from (`source`: the file, its pyramid, or the preview).
    private func responseKey(of image: OpenImages.Image, readFrom source: ImageSource) -> String {
        image.version + "\n" + source.input.name
    }

    /// The key of the planes of the level at reduction `scale` in `thumbnailPlanes`.
    private static func planesKey(imageKey: String, scale: Int) -> String { imageKey + "\n\(scale)" }

    /// The planes of `tile`, a whole level (`OneStoredTile.isWholeLevel`): held, or decoded at their own size and
    /// kept in `thumbnailPlanes`; `madeAhead` when no client asked (idle-time work), counted in no lookup.
    private func wholeLevelPlanes(of tile: OneStoredTile, imageKey: String, madeAhead: Bool) throws -> JPEGPlanes? {
        try thumbnailPlanes.value(for: Self.planesKey(imageKey: imageKey, scale: tile.scale), counted: !madeAhead) {
            HeldLevel(tile: tile.source, content: tile.content,
                      planes: try JPEGPlanes(decoding: tile.source.input, scale: 1, rows: tile.content.height,
                                             budget: tile.source.budget))
        }.planes
    }

    private func image(_ file: ImageCatalog.File, encodedIdentifier: String, base: String, segments: [String], request: HTTPRequest,
                       _ place: HandlerPlace, madeAhead: Bool) throws -> HTTPResponse {
        let parsed = try IIIFRequest(region: segments[0], size: segments[1], rotation: segments[2],
                                     qualityAndFormat: segments[3])
        guard IIIFRenderer.knownFormats.contains(parsed.format) else {
            throw IIIFError.badRequest("unknown format '\(parsed.format)'")
        }
        if !madeAhead { noteSizeForm(of: parsed) }
        var image = try images.open(file.path, place, stamp: file.stamp)
        CooperativeYield.point()
        let size = image.source.properties.size
        let resolved = try parsed.resolve(for: size, limits: configuration.limits)
        let reduction = IIIFRenderer.reduction(for: resolved)
        if let cache = configuration.cache, !image.readsAsPyramid {
            // A plain JPEG's first requests wait for its entropy index (one pass, built first), then read through
            // it; coarse ones wait for the preview pyramid too, when one is being built.
            try place.requireWorker()
            _ = cache.waitForIndex(path: image.cacheKey, modified: image.modified, size: image.size)
            if image.current.preview == nil, reduction >= PyramidCache.previewFactor,
               cache.waitForPreview(path: image.cacheKey, modified: image.modified, size: image.size) {
                image = try images.open(file.path, place, stamp: file.stamp)
            }
        }
        let tileArea = tileSize(of: image) * tileSize(of: image)
        if !madeAhead, case .full = parsed.region, resolved.size.area <= tileArea { noteThumbnail(segments) }
        let maxSize = IIIFRequest.maxSize(of: resolved.region.size, limits: configuration.limits, upscale: false)
        let canonicalPath = resolved.canonicalPath(imageSize: size, maxSize: maxSize)
        let canonical = base + "/" + canonicalPath
        // The tag names the image and the request, not the host asked through: caches share it across addresses.
        var response = try validators(image: image, tag: encodedIdentifier + "/" + canonicalPath).respond(to: request) {
            // A whole tile is sent as stored; one cut or stretched in its coefficients is kept like a render.
            let wholeTile = resolved.size == Tessera.Size(width: tileSize(of: image), height: tileSize(of: image))
            if wholeTile, let stored = try storedTile(for: resolved, in: image) { return (stored, "image/jpeg") }
            let preview = image.current.preview.flatMap { reduction >= PyramidCache.previewFactor ? $0 : nil }
            let source = preview ?? image.source
            // What the bytes depend on: the file as it is now, what it is read from (the file, its pyramid, the
            // preview) and the request in its canonical form, whatever the host or the spelling asked with.
            let imageKey = responseKey(of: image, readFrom: source)
            let key = imageKey + "\n" + canonicalPath
            if let held = responses.heldResponse(for: key, madeAhead: madeAhead) { return (held.bytes, held.mediaType) }
            // A stored tile cut, relabelled or stretched in its coefficients decodes no pixels: made here, on the
            // polling thread, rather than after a hop to a worker that would cost more than the edit.
            if !wholeTile, let made = try storedTile(for: resolved, in: image) {
                let kept = try responses.response(for: key, madeAhead: madeAhead) {
                    ResponseCache.Response(bytes: made, mediaType: "image/jpeg")
                }
                return (kept.bytes, "image/jpeg")
            }
            // So is a render to at most a tile's pixels that decodes at most a stored tile's: from one stored tile
            // (a thumbnail from the smallest level, a tile further off its size) or across a few of a local
            // pyramid's (a sliver at the image's edge). About as cheap, when the budget has room at once; other
            // renders, and those when it has none, are made on a worker.
            let tileSource = try storedTileSource(for: resolved, in: image, imageKey: imageKey, counted: !madeAhead)
            let oneTile = try tileSource.map {
                try IIIFRenderer.plan($0.request, from: $0.source, reducedBy: $0.scale, padding: $0.padding)
            }
            // A level that is one stored tile (a thumbnail's) is kept decoded for the image's other thumbnails.
            let heldPlanes = tileSource.flatMap { tile -> (() throws -> JPEGPlanes?)? in
                guard tile.isWholeLevel else { return nil }
                if let held = tile.held { return { held.planes } }
                return { try self.wholeLevelPlanes(of: tile, imageKey: imageKey, madeAhead: madeAhead) }
            }
            func planned() throws -> IIIFRenderer.Plan {
                try oneTile
                    ?? IIIFRenderer.plan(resolved, from: source, reducedBy: preview == nil ? 1 : PyramidCache.previewFactor,
                                         tiles: preview == nil ? image.tiles : image.previewTiles)
            }
            let plan: IIIFRenderer.Plan
            var reservation: RenderBudget.Reservation?
            if resolved.size.area <= tileArea, oneTile != nil || (image.tiles != nil && source.input.isFile),
               case let quick = try planned(), quick.readSize.area <= tileArea {
                plan = quick
                if place == .pollingThread {
                    guard let granted = renderBudget.reserveAtOnce(plan.workingSet) else { throw NeedsWorker() }
                    reservation = granted
                }
            } else {
                try place.requireWorker()
                plan = try planned()
            }
            defer { reservation?.release() }
            CooperativeYield.point()
            let rendered = try responses.response(for: key, madeAhead: madeAhead) {
                func render() throws -> (bytes: [UInt8], mediaType: String) {
                    try IIIFRenderer.render(plan, quality: configuration.jpegQuality,
                                            entropyIndexFolder: configuration.cache?.folder, tileCache: decodedTiles,
                                            heldPlanes: heldPlanes)
                }
                let (bytes, mediaType) = reservation == nil
                    ? try renderBudget.withReservation(of: plan.workingSet, render) : try render()
                return ResponseCache.Response(bytes: bytes, mediaType: mediaType)
            }
            return (rendered.bytes, rendered.mediaType)
        }
        response.headers.append(("Link", "<\(canonical)>;rel=\"canonical\", <\(IIIFInfo.profileURI)>;rel=\"profile\""))
        return response
    }

    /// The stored JPEG that answers the request exactly, if there is one: a tile of a pyramid level (cut by the
    /// image's edge or not), asked for at its size in the level as stored (which, for a level halved rounding
    /// down, may be a pixel short of the size the geometry gives) or asked for a pixel off the geometry's size, in
    /// JPEG: as stored, or cut or stretched by those pixels in its coefficients. This is the path that needs no
    /// decoding of pixels and no encoding of them; a size further off (a height rounded from a narrow tile's aspect
    /// ratio) is a resampling, rendered (from the one stored tile, `storedTileSource`).
    private func storedTile(for request: IIIFResolvedRequest, in image: OpenImages.Image) throws -> [UInt8]? {
        try storedTileAddress(for: request, in: image).flatMap {
            try $0.tiles.jpeg(scale: $0.scale, column: $0.column, row: $0.row, size: request.size)
        }
    }

    /// Where `storedTile` looks for the request's answer: the stored tiles (the pyramid's, or the preview's) and the
    /// tile in them that the request asks for within a pixel; nil when no stored tile can answer it.
    private func storedTileAddress(for request: IIIFResolvedRequest, in image: OpenImages.Image)
        -> (tiles: any StoredJPEGTiles, scale: Int, column: Int, row: Int)? {
        guard request.rotation == 0, !request.mirror, request.format == "jpg",
              request.quality == .default || (request.quality == .color && image.source.properties.colorModel != .gray),
              let tiles = image.tiles ?? image.previewTiles,
              let (scale, column, row) = IIIFTileGeometry(imageSize: image.source.properties.size,
                                                          tileWidth: tileSize(of: image),
                                                          tileHeight: tileSize(of: image))
                  .tile(region: request.region, size: request.size, slack: 1)
        else { return nil }
        if image.tiles != nil { return (tiles, scale, column, row) }
        let factor = PyramidCache.previewFactor
        guard tiles.tileSize == tileSize(of: image), scale % factor == 0 else { return nil }
        return (tiles, scale / factor, column, row)
    }

    /// What a render reads when the request's region, at the stored level it is read from (its reduction's, or
    /// the smallest stored level above that), lies in one stored tile: that tile's JPEG as stored, read as the
    /// image reduced `scale` times, and the request moved to the tile's origin and kept to its real pixels. One
    /// JPEG decoded instead of the pyramid opened through libtiff: thumbnails from the smallest level (a level
    /// that is one tile is decoded whole once and kept, `thumbnailPlanes`), tiles asked for further off their size
    /// than the coefficients stretch (decoded with libjpeg's DCT scaling). `padding` is the
    /// image's last column and row that a level halved rounding down lost, where the size asks for them: repeated
    /// from the tile's last real ones (as a read past a level's end is, and the coefficients' path does), so that
    /// only an axis further off is resampled (a tile a pixel narrow whose height is rounded from its aspect ratio
    /// keeps its width, whose rows the fixed-point pass sums). A level that is one tile held in `thumbnailPlanes`
    /// (under `imageKey`, `responseKey`'s) is not read again, and is found once: the tile carries it (`held`),
    /// its lookup counted as a hit unless not `counted`.
    private func storedTileSource(for request: IIIFResolvedRequest, in image: OpenImages.Image,
                                  imageKey: String, counted: Bool) throws -> OneStoredTile? {
        guard let tiles = image.tiles else { return nil }
        var scale = IIIFRenderer.reduction(for: request)
        while scale > 1, tiles.storedLevelSize(scale: scale) == nil { scale /= 2 }
        let span = tiles.tileSize * scale, region = request.region
        let column = region.x / span, row = region.y / span
        guard (region.maxX - 1) / span == column, (region.maxY - 1) / span == row else { return nil }
        let held = column == 0 && row == 0
            ? thumbnailPlanes.heldValue(for: Self.planesKey(imageKey: imageKey, scale: scale), counted: counted) : nil
        guard let (source, content) = try held.map({ ($0.tile, $0.content) })
                ?? tiles.storedJPEG(scale: scale, column: column, row: row).map({
                    (try ImageSource(bytes: $0.jpeg, name: image.source.input.name), $0.content)
                })
        else { return nil }
        // A region past a level halved rounding down (the image's last pixel or two) is not in the tile.
        let asked = Rect(x: region.x - column * span, y: region.y - row * span, width: region.width, height: region.height)
        let moved = asked.intersection(Rect(x: 0, y: 0, width: content.width * scale, height: content.height * scale))
        guard !moved.isEmpty else { return nil }
        let inTile = IIIFResolvedRequest(region: moved, size: request.size, rotation: request.rotation,
                                         mirror: request.mirror, quality: request.quality, format: request.format)
        guard IIIFRenderer.reduction(for: inTile) >= scale else { return nil }
        let read = reducedSize(moved.size, by: scale)
        let padding = Size(width: moved.width < asked.width && request.size.width == read.width + 1 ? 1 : 0,
                           height: moved.height < asked.height && request.size.height == read.height + 1 ? 1 : 0)
        return OneStoredTile(source: source, scale: scale,
                             request: inTile, padding: padding, content: content,
                             isWholeLevel: column == 0 && row == 0 && content == tiles.storedLevelSize(scale: scale),
                             held: held)
    }

    /// A render's read from one stored tile (`storedTileSource`): the tile's JPEG as an image, read as the image
    /// reduced `scale` times, the request moved into the tile and its `padding`, and the tile's real pixels
    /// (`content`, the rest is the encoder's padding). `isWholeLevel` when the tile is all of its level (a small
    /// level's, which thumbnails read): its planes are kept decoded (`thumbnailPlanes`), and `held` when they
    /// were found there.
    private struct OneStoredTile {
        let source: ImageSource
        let scale: Int
        let request: IIIFResolvedRequest
        let padding: Size
        let content: Size
        let isWholeLevel: Bool
        let held: HeldLevel?
    }

    /// The tile size clients are told to ask for: the stored tiles' when there are any, else a tiled JPEG 2000's
    /// square codestream tiles (so that each request decodes the code-blocks of one tile), else the configured one.
    private func tileSize(of image: OpenImages.Image) -> Int {
        if let tiles = image.tiles { return tiles.tileSize }
        if let codestream = image.source.properties.jpeg2000, codestream.isTiled,
           codestream.tileSize.width == codestream.tileSize.height,
           Self.codestreamTileSizes.contains(codestream.tileSize.width) {
            return codestream.tileSize.width
        }
        return configuration.tileSize
    }

    /// The JPEG 2000 tile sides offered as IIIF tiles; smaller or larger codestream tiles get the configured size.
    static let codestreamTileSizes = 128...2048

    /// The validators of a response about `image`: a strong tag from the file's size and time and what was asked
    /// of it (`tag`), kept `cacheLifetime` seconds by clients, proxies and CDNs.
    private func validators(image: OpenImages.Image, tag: String) -> ConditionalGET {
        ConditionalGET(identity: image.version + "\n" + tag, lastModified: image.lastModified,
                       cacheControl: cacheControl)
    }

}
