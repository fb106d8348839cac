import Foundation
import Synchronization
import Testing
@testable import Tessera
@testable import TesseraServer

@Suite final class IIIFServiceTests {
    let folder = NSTemporaryDirectory() + "tessera-service-\(UUID().uuidString)"

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// A 2400x2400 JPEG of smooth gradients, large enough for a preview pyramid with a whole tile.
    private func image(_ name: String) throws -> String {
        var pixels = ImageBuffer(width: 2400, height: 2400, format: .rgb8)
        pixels.bytes.withUnsafeMutableBytes { bytes in
            for y in 0..<2400 {
                for x in 0..<2400 {
                    let index = (y * 2400 + x) * 3
                    bytes[index] = UInt8(x / 10)
                    bytes[index + 1] = UInt8(y / 10)
                    bytes[index + 2] = UInt8((x + y) / 20)
                }
            }
        }
        try FileManager.default.createDirectory(atPath: folder + "/images", withIntermediateDirectories: true)
        let path = "\(folder)/images/\(name).jpg"
        try ImageWriter.write(BufferReader(pixels), to: path)
        return path
    }

    private func get(_ service: IIIFService, _ path: String) -> HTTPResponse {
        service.handle(HTTPRequest(method: "GET", path: path, headers: ["host": "example.org"]))
    }

    private func pixels(_ response: HTTPResponse) throws -> ImageBuffer {
        #expect(response.status == 200)
        return try ImageSource(bytes: response.body).makeReader().readAll()
    }

    private func meanDifference(_ a: ImageBuffer, _ b: ImageBuffer) -> Double {
        #expect(a.width == b.width && a.height == b.height)
        return Double(zip(a.bytes, b.bytes).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.bytes.count)
    }

    /// An error answered to a client names the image it asked for, never the file the server read: paths on the
    /// server's disks (or its storage's addresses) are its own business.
    @Test func errorsNameTheImageAskedForNotTheServersFile() throws {
        let path = try image("cut")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: path))
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: folder + "/images/notes.txt"))
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        for (request, status, message) in [("/iiif/cut/full/max/0/default.jpg", 500, "cut: truncated"),
                                           ("/iiif/notes.txt/info.json", 404, "notes.txt: not an image")] {
            let response = get(service, request)
            let body = String(decoding: response.body, as: UTF8.self)
            #expect(response.status == status && body.hasPrefix(message), "\(request): \(body)")
            #expect(!body.contains(folder), "\(request): \(body)")
            #expect(response.logNote?.contains(folder + "/images/") == true, "the log has the file")
        }
    }

    /// An invalid argument reaching a client is the server's own mistake: a 500 naming the image and nothing of the
    /// server's files, which the log note keeps.
    @Test func anInternalErrorTellsClientsNothingOfTheServersFiles() {
        let error = TesseraError.invalidArgument("/srv/images/x.tif: region 0,0,9,9 is not inside the 8x8 image")
        let response = HTTPResponse.failure(error, about: "x.tif")
        #expect(response.status == 500)
        #expect(String(decoding: response.body, as: UTF8.self)
                == "x.tif: the server failed to make this answer\n")
        #expect(response.logNote == "/srv/images/x.tif: region 0,0,9,9 is not inside the 8x8 image")
    }

    /// An image using a feature Tessera does not handle is IIIF's 501, not implemented: the server is not broken,
    /// this image is beyond it. The body names the image and the feature, the log note the file.
    @Test func anUnsupportedImageIsNotImplemented() {
        let error = TesseraError.unsupported(path: "/srv/images/dem.tif",
                                             feature: "TIFF samples that are not unsigned integers (SampleFormat 3)")
        let response = HTTPResponse.failure(error, about: "dem.tif")
        #expect(response.status == 501)
        #expect(String(decoding: response.body, as: UTF8.self)
                == "dem.tif: unsupported: TIFF samples that are not unsigned integers (SampleFormat 3)\n")
        #expect(response.logNote == "/srv/images/dem.tif: unsupported: TIFF samples that are not unsigned integers"
                + " (SampleFormat 3)")
    }

    /// A remote source's failure is a 502 (a 404 when the URL names nothing) whose body says what went wrong
    /// without the storage's host and port, which libcurl's words name; the log note keeps them.
    @Test func aRemoteSourcesFailureHidesItsAddressFromClients() {
        let url = "http://storage.internal:9000/images/x.tif"
        for (detail, status, told) in [
            ("failed to connect to storage.internal port 9000 after 3 ms: couldn't connect to server", 502,
             "x.tif: failed to connect to its source after 3 ms: couldn't connect to server"),
            ("could not resolve host: storage.internal", 502, "x.tif: could not resolve host: its source"),
            ("connection timed out after 10001 milliseconds", 502, "x.tif: connection timed out after 10001 milliseconds"),
            ("HTTP 404 Not Found", 404, "x.tif: HTTP 404 Not Found"),
        ] {
            let response = HTTPResponse.failure(TesseraError.http(url: url, detail: detail), about: "x.tif")
            #expect(response.status == status)
            #expect(String(decoding: response.body, as: UTF8.self) == told + "\n")
            #expect(response.logNote == url + ": " + detail)
        }
    }

    @Test func streamedAndWholeRendersAgreeAndARenderOverTheWholeBudgetIsA400() throws {
        _ = try image("wide")
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        // Rotation 0 streams strips to the encoder; a mirror holds the whole image: mirrored back, the same pixels.
        let streamed = try pixels(get(service, "/iiif/wide/full/600,/0/default.png"))
        let whole = try pixels(get(service, "/iiif/wide/full/600,/!0/default.png")).oriented(exif: 2)
        #expect(streamed.bytes == whole.bytes)
        #expect(service.renderBudget.usage == .init(bytes: 0, inFlight: 0, queued: 0, refused: 0))
        var configuration = IIIFService.Configuration()
        configuration.renderBudget.bytes = 1 << 20
        let small = IIIFService(catalog: try ImageCatalog(path: folder + "/images"), configuration: configuration)
        let refused = get(small, "/iiif/wide/full/max/0/default.png")
        #expect(refused.status == 400)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("--render-memory"))
        #expect(get(small, "/iiif/wide/full/64,/0/default.png").status == 200)
    }

    @Test func coarseRequestsWaitForThePreviewAndAreAnsweredFromIt() throws {
        _ = try image("wide")
        let cache = try PyramidCache(folder: folder + "/cache", minimumSide: 1)
        var configuration = IIIFService.Configuration()
        configuration.cache = cache
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"), configuration: configuration)
        let direct = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        let tile = "/iiif/wide/0,0,2048,2048/256,/0/default.jpg", overview = "/iiif/wide/full/!200,200/0/default.png"
        // Holding the queue of full builds keeps the full pyramid waiting; the first coarse request waits for the
        // preview and is answered from it.
        let release = DispatchSemaphore(value: 0)
        cache.fullBuilds.async { release.wait() }
        defer { release.signal() }
        let fromPreview = get(service, tile)
        let source = try ImageSource(path: folder + "/images/wide.jpg")
        let pyramids = cache.pyramids(for: source, path: folder + "/images/wide.jpg",
                                      modified: try modified("wide"), size: try byteCount("wide"))
        let previewFile = try #require(pyramids?.preview)
        let previewTiles = try #require(try ImageSource(path: previewFile).storedJPEGTiles())
        let stored = try #require(try previewTiles.jpeg(scale: 1, column: 0, row: 0, size: Size(width: 256, height: 256)))
        #expect(fromPreview.body == stored, "a whole tile at 1/8 is the preview's stored tile")
        #expect(meanDifference(try pixels(fromPreview), try pixels(get(direct, tile))) < 2)
        #expect(meanDifference(try pixels(get(service, overview)), try pixels(get(direct, overview))) < 2)
    }

    /// Runs a peer tool, its output discarded; nil when it cannot be started.
    private static func run(_ executable: String, _ arguments: [String]) -> Int32? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    static let needsVips = ConditionTrait.enabled(if: run("vips", ["--version"]) == 0, "needs libvips' `vips` command")

    /// A 1533x1107 image of gradients and ripples (no size a power of two), as a PNG and as the pyramidal TIFF of
    /// JPEG tiles `vips tiffsave --pyramid` makes of it (levels halved rounding down: 766x553, 383x276, ...).
    private func libvipsPyramid() throws -> (original: ImageBuffer, pyramid: String) {
        var pixels = ImageBuffer(width: 1533, height: 1107, format: .rgb8)
        pixels.bytes.withUnsafeMutableBytes { bytes in
            for y in 0..<1107 {
                for x in 0..<1533 {
                    let index = (y * 1533 + x) * 3, ripple = sin(Double(x) / 23) * cos(Double(y) / 31)
                    bytes[index] = UInt8(x / 7)
                    bytes[index + 1] = UInt8(y / 5)
                    bytes[index + 2] = UInt8(127.5 + 127 * ripple)
                }
            }
        }
        try FileManager.default.createDirectory(atPath: folder + "/images", withIntermediateDirectories: true)
        try ImageWriter.write(BufferReader(pixels), to: folder + "/source.png")
        let pyramid = folder + "/images/vips.tif"
        #expect(Self.run("vips", ["tiffsave", folder + "/source.png", pyramid, "--pyramid", "--tile", "--tile-width",
                                  "256", "--tile-height", "256", "--compression", "jpeg"]) == 0)
        return (pixels, pyramid)
    }

    /// Edge tiles asked for as viewers ask (`w,` rounded up, the height from the aspect ratio) are a pixel or two
    /// off libvips' rounded-down levels: each is answered from its own level's stored tile, cut or stretched by
    /// those pixels in its coefficients (the last real column and row repeated), not from the level twice as large;
    /// a size further off, or a thumbnail, is rendered from the one stored tile its region lies in. Their pixels
    /// stay close to a render of the full image.
    @Test(needsVips) func tilesAPixelOffALevelAreAnsweredFromThatLevel() throws {
        let (original, pyramid) = try libvipsPyramid()
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        let tiles = try #require(try ImageSource(path: pyramid).storedJPEGTiles())
        /// The mean difference per sample between `path`'s answer and the full image's `region` resampled to its size.
        func difference(_ path: String, _ region: Rect) throws -> Double {
            let answer = try pixels(get(service, path))
            let full = try ResamplingReader(source: BufferReader(original.cropped(to: region)), size: answer.size)
            return meanDifference(answer, try full.readAll())
        }
        // What a level's own stored tiles differ by (libvips' JPEG at Q75 and its 2x2 averaging): measured 1.38 at
        // 1/2 and 2.08 at 1/4.
        let stored = [2: try difference("/iiif/vips/512,512,512,512/256,/0/default.jpg", Rect(x: 512, y: 512, width: 512, height: 512)),
                      4: try difference("/iiif/vips/0,0,1024,1024/256,/0/default.jpg", Rect(x: 0, y: 0, width: 1024, height: 1024))]
        // (region, size, the level it is a tile of, the stored tile's column, row and size as asked): the right edge
        // at 1/2, the corner at 1/2, a size a pixel over the level's. Measured: 1.80, 2.15, 1.56 (stretched with the
        // kernel from the decoded tile: 1.79, 2.81, 1.71; from the level twice as large: 1.02, 1.21, 1.02).
        let near: [(Rect, String, Int, Int, Int, Size)] = [
            (Rect(x: 1024, y: 0, width: 509, height: 512), "255,", 2, 2, 0, Size(width: 255, height: 257)),
            (Rect(x: 1024, y: 1024, width: 509, height: 83), "255,", 2, 2, 2, Size(width: 255, height: 42)),
            (Rect(x: 1024, y: 512, width: 509, height: 512), "255,256", 2, 2, 1, Size(width: 255, height: 256)),
        ]
        for (region, size, scale, column, row, asked) in near {
            let request = try IIIFRequest(region: region.description, size: size, rotation: "0", qualityAndFormat: "default.jpg")
                .resolve(for: original.size, limits: IIIFLimits())
            #expect(IIIFRenderer.reduction(for: request) == scale, "\(region) at \(size) is read from its level")
            #expect(request.size == asked)
            let path = "/iiif/vips/\(region)/\(size)/0/default.jpg"
            #expect(get(service, path).body == (try tiles.jpeg(scale: scale, column: column, row: row, size: asked)),
                    "\(region) at \(size) is the stored tile in its coefficients")
            let measured = try difference(path, region)
            #expect(measured < stored[scale]! + 2, "\(region) at \(size): mean difference \(measured)")
        }
        // Further off than a pixel: the right edge at 1/4 (a height rounded from the narrow tile's aspect ratio two
        // pixels over the level's) and six pixels taller, rendered from the one stored tile the region lies in, in
        // its YCbCr planes (`JPEGPlanes`), the image's last column (lost to the rounded-down level) repeated and only
        // the height resampled. Measured: 3.38, 1.88 (through RGB pixels: 3.32, 1.88; both axes resampled with the
        // kernel: 2.83, 1.88; the first from the level twice as large, as before issue 20: 1.58).
        for size in ["128,", "128,262"] {
            let region = Rect(x: 1024, y: 0, width: 509, height: 1024)
            let measured = try difference("/iiif/vips/\(region)/\(size)/0/default.jpg", region)
            #expect(measured < stored[4]! + 2, "\(region) at \(size): mean difference \(measured)")
        }
        // Thumbnails from the 1/8 level's one tile, decoded once at its own size and kept, in its planes (averaged
        // 2 x 2 before the kernel for the smaller): measured 9.04 and 6.28, the ripple being near the limit of
        // these sizes (the smaller from the tile decoded at 1/2 by libjpeg: 9.59, session 43; through RGB pixels:
        // 9.81 and 7.83; read through libtiff and box-shrunk, as before issue 20: 11.1 and 7.9).
        for width in [90, 125] {
            let measured = try difference("/iiif/vips/full/\(width),/0/default.jpg", Rect(original.size))
            #expect(measured < 11, "full/\(width),: mean difference \(measured)")
        }
        let held = service.thumbnailPlanes
        #expect(held.lookups.misses == 1 && held.lookups.hits == 1, "the tile decoded once for both: \(held.lookups)")
        #expect(held.usage.count == 1 && held.usage.bytes <= held.byteLimit)
        // A tile asked for at its size in the rounded-down level is the stored tile, cropped in its coefficients,
        // and kept like a render; an interior tile is the stored tile as it is, not kept.
        let kept = service.responses.usage.count
        let edge = get(service, "/iiif/vips/1024,0,509,512/254,256/0/default.jpg")
        #expect(edge.body == (try tiles.jpeg(scale: 2, column: 2, row: 0, size: Size(width: 254, height: 256))))
        #expect(service.responses.usage.count == kept + 1)
        let interior = get(service, "/iiif/vips/512,512,512,512/256,/0/default.jpg")
        #expect(interior.body == (try tiles.jpeg(scale: 2, column: 1, row: 1, size: Size(width: 256, height: 256))))
        #expect(service.responses.usage.count == kept + 1)
    }

    /// An image's info.json carries, while its smallest level's planes are not held, the decode of that level (one
    /// stored tile) as its preempting idle follow-up: run, the thumbnails after it find the planes held and decode
    /// nothing.
    /// Once they are held, or for an image with no stored tiles, info.json carries none; while the server is busy,
    /// the follow-up decodes nothing. The decode made ahead is no lookup of the planes (`/metrics`): no client asked.
    @Test(needsVips) func infoJSONDecodesTheThumbnailLevelAfterItIsSent() throws {
        _ = try libvipsPyramid()
        _ = try image("plain")
        let quiet = Mutex(false)
        var configuration = IIIFService.Configuration()
        configuration.isQuiet = { quiet.withLock { $0 } }
        configuration.responseCacheBytes = 0  // no renders foreseen: the follow-up is the decode alone
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"), configuration: configuration)
        let held = service.thumbnailPlanes
        let info = get(service, "/iiif/vips/info.json")
        #expect(info.status == 200)
        let followUp = try #require(info.preemptingIdleFollowUp, "the 1/8 level's planes are not held yet")
        #expect(held.usage.count == 0, "nothing is decoded before the follow-up runs")
        followUp()
        #expect(held.usage.count == 0, "nothing is decoded while the server is busy")
        quiet.withLock { $0 = true }
        followUp()
        #expect(held.usage.count == 1 && held.lookups == CacheLookups(), "\(held.lookups)")
        // Run again once they are held, it asks nothing of them (it would wait for the idle-time work it
        // interrupted, were that making them).
        followUp()
        #expect(held.lookups == CacheLookups(), "\(held.lookups)")
        #expect(get(service, "/iiif/vips/info.json").preemptingIdleFollowUp == nil, "the planes are held")
        for width in [90, 125] {
            #expect(get(service, "/iiif/vips/full/\(width),/0/default.jpg").status == 200)
        }
        #expect(held.lookups.misses == 0 && held.lookups.hits == 2, "\(held.lookups)")
        #expect(get(service, "/iiif/plain/info.json").preemptingIdleFollowUp == nil, "a plain JPEG stores no tiles")
    }

    /// A thumbnail from a level whose planes are held reads nothing of the file: the level's tile is held with
    /// them. Here the file's bytes are zeroed after the first thumbnail (its size and time kept, so the image stays
    /// open as it was): another thumbnail size is still rendered, while a stored tile, read again, is corrupt.
    @Test(needsVips) func thumbnailsFromHeldPlanesReadNothingOfTheFile() throws {
        let (_, pyramid) = try libvipsPyramid()
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        #expect(get(service, "/iiif/vips/full/90,/0/default.jpg").status == 200)
        var before = stat()
        #expect(stat(pyramid, &before) == 0)
        try Data(count: Int(before.st_size)).write(to: URL(fileURLWithPath: pyramid))
        let times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, pyramid, times, 0) == 0)
        let thumbnail = get(service, "/iiif/vips/full/125,/0/default.jpg")
        #expect(thumbnail.status == 200 && thumbnail.body.starts(with: [0xFF, 0xD8]))
        #expect(service.thumbnailPlanes.lookups.hits == 1)
        #expect(get(service, "/iiif/vips/512,512,512,512/256,/0/default.jpg").status == 500, "the file was zeroed")
    }

    /// Once info.json's follow-up has decoded a new image's thumbnail level, it makes the thumbnails asked for last
    /// of any image (at most `foreseenThumbnails`, the sizes a viewer asks of every image), so that the image's own
    /// requests find them made: a viewer's second thumbnail, asked once the first is answered, took as long as the
    /// first. With none asked for yet, the follow-up is the decode alone.
    @Test(needsVips) func infoJSONMakesTheThumbnailsAskedForLast() throws {
        let (_, pyramid) = try libvipsPyramid()
        try FileManager.default.copyItem(atPath: pyramid, toPath: folder + "/images/other.tif")
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        let decode = try #require(get(service, "/iiif/vips/info.json").preemptingIdleFollowUp)
        decode()
        #expect(service.thumbnailPlanes.usage.count == 1 && service.responses.usage.count == 0)
        let sizes = ["90,", "125,", "!64,64", "150,"]
        for size in sizes + ["125,"] {
            #expect(get(service, "/iiif/vips/full/\(size)/0/default.jpg").status == 200)
        }
        #expect(get(service, "/iiif/vips/0,0,1024,1024/256,/0/default.jpg").status == 200, "a tile is no thumbnail")
        let kept = service.responses.usage.count
        #expect(kept == sizes.count)
        // Distinct, the latest last: 125 asked again moved to the end; 90, the oldest, dropped.
        let asked = ["!64,64", "150,", "125,"].map { "full/\($0)/0/default.jpg" }
        #expect(service.askedThumbnails.withLock { $0 } == asked)
        let followUp = try #require(get(service, "/iiif/other/info.json").preemptingIdleFollowUp)
        let counted = service.responses.lookups, planesCounted = service.thumbnailPlanes.lookups
        followUp()
        #expect(service.askedThumbnails.withLock { $0 } == asked, "the thumbnails made ahead tell nothing")
        #expect(service.responses.lookups == counted && service.thumbnailPlanes.lookups == planesCounted,
                "nor are they lookups (/metrics), of the responses or the planes: no client asked for them")
        #expect(service.thumbnailPlanes.usage.count == 2)
        #expect(service.responses.usage.count == kept + IIIFService.foreseenThumbnails)
        for size in sizes.dropFirst() {
            let found = get(service, "/iiif/other/full/\(size)/0/default.jpg")
            #expect(found.status == 200 && service.responses.usage.count == kept + IIIFService.foreseenThumbnails,
                    "\(size) was made")
            let rendered = get(IIIFService(catalog: try ImageCatalog(path: folder + "/images")),
                               "/iiif/other/full/\(size)/0/default.jpg")
            #expect(found.body == rendered.body, "\(size): the bytes its request renders")
        }
        #expect(service.responses.lookups.hits == counted.hits + IIIFService.foreseenThumbnails,
                "each request for a size made ahead is a hit")
        #expect(get(service, "/iiif/other/full/90,/0/default.jpg").status == 200)
        #expect(service.responses.usage.count == kept + IIIFService.foreseenThumbnails + 1,
                "the oldest size was not made")
    }

    /// `prepare`, run before a server listens, opens the pyramids among the catalog's first images (a plain JPEG is
    /// left to its requests) and decodes each one's smallest level, counted in no lookup. The first info.json of a
    /// prepared image then still foresees its edge renders (once), and carries no decode, nor, once thumbnail sizes
    /// have been asked, their renders: they are resampled by their requests from the held planes.
    @Test(needsVips) func prepareOpensThePyramidsAndDecodesTheirThumbnailLevels() throws {
        let (_, pyramid) = try libvipsPyramid()
        try FileManager.default.copyItem(atPath: pyramid, toPath: folder + "/images/other.tif")
        _ = try image("plain")
        let catalog = try ImageCatalog(path: folder + "/images")
        #expect(IIIFService(catalog: catalog).prepare(limit: 0, seconds: 10) == 0)
        #expect(IIIFService(catalog: catalog).prepare(limit: 10, seconds: 0) == 0, "no time given")
        let service = IIIFService(catalog: catalog)
        #expect(service.prepare(limit: 10, seconds: 10) == 2)
        #expect(service.openImages.count == 2, "the plain JPEG is not opened")
        #expect(service.thumbnailPlanes.usage.count == 2 && service.thumbnailPlanes.lookups == CacheLookups())
        #expect(service.prepare(limit: 10, seconds: 10) == 2 && service.thumbnailPlanes.usage.count == 2,
                "prepared again, the images are found open and their planes held")
        let info = get(service, "/iiif/vips/info.json")
        #expect(info.status == 200 && info.preemptingIdleFollowUp == nil, "the planes are held")
        #expect(info.idleFollowUp != nil, "the edge renders are foreseen by the first info.json")
        #expect(get(service, "/iiif/vips/info.json").idleFollowUp == nil, "and only by the first")
        for width in [90, 125] {
            #expect(get(service, "/iiif/vips/full/\(width),/0/default.jpg").status == 200)
        }
        #expect(service.thumbnailPlanes.lookups == CacheLookups(hits: 2, coalesced: 0, misses: 0))
        #expect(get(service, "/iiif/other/info.json").preemptingIdleFollowUp == nil, "no thumbnail made ahead")
        let found = get(service, "/iiif/other/full/90,/0/default.jpg")
        #expect(service.thumbnailPlanes.lookups == CacheLookups(hits: 3, coalesced: 0, misses: 0))
        let rendered = get(IIIFService(catalog: catalog), "/iiif/other/full/90,/0/default.jpg")
        #expect(found.status == 200 && found.body == rendered.body, "the bytes of a render from the file")
    }

    /// `prepare`, given an idle-time queue, makes through it the renders each image it opened would have its first
    /// info.json foresee: one image per job, in the catalog's order, the next queued once one is made (behind what
    /// requests queued meanwhile). A viewer's request then finds the render kept, and the first info.json foresees
    /// nothing more. Nothing is made while the server is busy (the image's first info.json foresees its renders
    /// then), and no image's once the responses held fill half the response cache.
    @Test(needsVips) func prepareForeseesTheOpenedImagesEdgeRendersInIdleTime() throws {
        let (_, pyramid) = try libvipsPyramid()
        try FileManager.default.copyItem(atPath: pyramid, toPath: folder + "/images/other.tif")
        let catalog = try ImageCatalog(path: folder + "/images")
        let queued = Mutex<[@Sendable () -> Void]>([])
        let queue: IIIFService.IdleTimeQueue = { job in queued.withLock { $0.append(job) } }
        /// Runs the jobs queued, and those they queue, one at a time; returns how many ran.
        func runQueued() -> Int {
            var ran = 0
            while let job = queued.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                #expect(queued.withLock { $0.isEmpty }, "one image at a time")
                job()
                ran += 1
            }
            return ran
        }

        let service = IIIFService(catalog: catalog)
        #expect(service.prepare(limit: 10, seconds: 10, idleTime: queue) == 2)
        #expect(service.responses.usage.count == 0, "nothing made before its turn in idle time")
        #expect(runQueued() == 2)
        let made = service.responses.usage.count
        #expect(made > 0 && service.responses.lookups == CacheLookups(), "made ahead: no lookup counted")
        for name in ["other", "vips"] {
            #expect(get(service, "/iiif/\(name)/info.json").idleFollowUp == nil, "\(name)'s renders foreseen already")
        }
        let edge = "/iiif/vips/1024,0,509,1024/128,/0/default.jpg"
        let found = get(service, edge)
        #expect(service.responses.usage.count == made && service.responses.lookups.hits == 1)
        #expect(found.status == 200 && found.body == get(IIIFService(catalog: catalog), edge).body)

        var busyConfiguration = IIIFService.Configuration()
        busyConfiguration.isQuiet = { false }
        let busy = IIIFService(catalog: catalog, configuration: busyConfiguration)
        busy.prepare(limit: 10, seconds: 10, idleTime: queue)
        #expect(runQueued() == 1 && busy.responses.usage.count == 0, "nothing made, nothing more queued while busy")
        #expect(get(busy, "/iiif/vips/info.json").idleFollowUp != nil, "left to the first info.json")

        // A cache just under twice what the first image's renders hold takes that image's, and no other's.
        let first = IIIFService(catalog: catalog)
        first.prepare(limit: 10, seconds: 10, idleTime: queue)
        queued.withLock { $0.removeFirst() }()
        #expect(queued.withLock { $0.count } == 1, "the next image's job, queued and not run")
        queued.withLock { $0.removeAll() }
        var smallConfiguration = IIIFService.Configuration()
        smallConfiguration.responseCacheBytes = 2 * first.responses.usage.bytes - 2
        let small = IIIFService(catalog: catalog, configuration: smallConfiguration)
        small.prepare(limit: 10, seconds: 10, idleTime: queue)
        #expect(runQueued() == 2 && small.responses.usage == first.responses.usage)
        #expect(get(small, "/iiif/vips/info.json").idleFollowUp != nil, "the second image's left to its info.json")
    }

    /// info.json of an image not yet open also carries, to be made in idle time, the renders a viewer's first views
    /// will ask for that no stored tile answers (edge tiles of the coarse levels asked `w,`, their height rounded two pixels off the
    /// level's): made while the server is quiet and kept, so that the viewer's request finds them, the bytes it
    /// would have rendered. Nothing is made while the server is busy, and only the image's first info.json
    /// foresees anything.
    @Test(needsVips) func infoJSONForeseesTheCoarseLevelsEdgeRenders() throws {
        _ = try libvipsPyramid()
        let catalog = try ImageCatalog(path: folder + "/images")
        let quiet = Mutex(false)
        var configuration = IIIFService.Configuration()
        configuration.isQuiet = { quiet.withLock { $0 } }
        let busy = IIIFService(catalog: catalog, configuration: configuration)
        let busyFollowUp = try #require(get(busy, "/iiif/vips/info.json").idleFollowUp)
        busyFollowUp()
        #expect(busy.responses.usage.count == 0 && busy.thumbnailPlanes.usage.count == 0,
                "nothing is made while the server is busy")

        quiet.withLock { $0 = true }
        let service = IIIFService(catalog: catalog, configuration: configuration)
        let followUp = try #require(get(service, "/iiif/vips/info.json").idleFollowUp)
        followUp()
        let made = service.responses.usage.count
        #expect(made > 0)
        #expect(get(service, "/iiif/vips/info.json").idleFollowUp == nil, "foreseen once, by its first info.json")
        // The right column of the 384 x 277 level: 128 pixels wide as viewers round, 127 as libvips stored it.
        let edge = "/iiif/vips/1024,0,509,1024/128,/0/default.jpg"
        let found = get(service, edge)
        #expect(service.responses.usage.count == made, "the viewer's request finds the render kept")
        let onRequest = IIIFService(catalog: catalog)
        let rendered = get(onRequest, edge)
        #expect(onRequest.responses.usage.count == 1, "a render, kept")
        #expect(found.status == 200 && found.body == rendered.body)
        let image = try pixels(found)
        #expect(image.width == 128 && image.height == 258)
    }

    /// The renders info.json foresees are made first in the form the last tile asked for gave its size in: here
    /// every edge tile asked `w,h` is a stored tile cut or stretched in its coefficients (nothing to make), and those
    /// asked `w,` are renders. Given as many turns as there are edge tiles, the foresight of a server whose viewers
    /// ask `w,h` makes nothing, and that of one whose viewers ask `w,` makes renders. A thumbnail (region `full`)
    /// says nothing of the form; until a tile is asked for, each tile is foreseen in both forms, one after the other.
    @Test(needsVips) func foreseenRendersComeFirstInTheFormViewersAsk() throws {
        let (_, pyramid) = try libvipsPyramid()
        try FileManager.default.copyItem(atPath: pyramid, toPath: folder + "/images/other.tif")
        let catalog = try ImageCatalog(path: folder + "/images")
        let edges = IIIFTileGeometry(imageSize: Size(width: 1533, height: 1107), tileWidth: 256, tileHeight: 256)
            .edgeTiles(ofLevelsUpTo: IIIFService.foreseenLevelTiles, view: IIIFService.foreseenView).count
        let turns = Mutex(0)
        var configuration = IIIFService.Configuration()
        configuration.isQuiet = { turns.withLock { turns in
            turns -= 1
            return turns >= 0
        } }
        for (asked, form, renders) in [("0,0,1024,1024/256,256", IIIFTileGeometry.SizeForm.widthAndHeight, false),
                                       ("0,0,1024,1024/256,", .width, true)] {
            let service = IIIFService(catalog: catalog, configuration: configuration)
            #expect(get(service, "/iiif/other/full/90,/0/default.jpg").status == 200)
            #expect(service.foreseenSizeForm == nil, "no tile asked for yet")
            #expect(get(service, "/iiif/other/\(asked)/0/default.jpg").status == 200)
            #expect(service.foreseenSizeForm == form, "after \(asked)")
            let followUp = try #require(get(service, "/iiif/vips/info.json").idleFollowUp)
            let before = service.responses.usage.count
            turns.withLock { $0 = edges }
            followUp()
            #expect((service.responses.usage.count > before) == renders, "after \(asked)")
            turns.withLock { $0 = 2 * edges }
            followUp()
            #expect(service.foreseenSizeForm == form, "the renders made ahead, in both forms, tell nothing")
        }
        let geometry = IIIFTileGeometry(imageSize: Size(width: 1533, height: 1107), tileWidth: 256, tileHeight: 256)
        let widthFirst = IIIFService.foreseenPaths(of: geometry, first: .width)
        let bothForms = IIIFService.foreseenPaths(of: geometry, first: nil)
        #expect(widthFirst.count == 2 * edges && bothForms.count == 2 * edges)
        // A `w,` path has the comma right before the rotation.
        func asksWidth(_ path: String) -> Bool { path.contains(",/0/") }
        #expect(widthFirst.prefix(edges).allSatisfy(asksWidth) && !widthFirst.suffix(edges).contains(where: asksWidth))
        #expect(bothForms.enumerated().allSatisfy { asksWidth($0.element) == ($0.offset % 2 == 1) })
        let heightFirst = IIIFService.foreseenPaths(of: geometry, first: .widthAndHeight)
        #expect(Set(widthFirst) == Set(bothForms) && Set(heightFirst) == Set(bothForms))
    }

    /// info.json is written directly, byte for byte as JSONSerialization writes the same document pretty-printed
    /// with sorted keys (what it was made with before, and what clients' tests match text against), with an id that
    /// needs escaping and the optional limits present.
    @Test func infoJSONIsWhatJSONSerializationWrites() throws {
        let properties = ImageProperties(format: .tiff, width: 7001, height: 5003, channels: 3, bitDepth: 8,
                                         colorModel: .rgb, hasAlpha: false,
                                         levels: [Size(width: 7001, height: 5003), Size(width: 3500, height: 2501)])
        for (id, limits) in [("http://h/iiif/plain.tif", IIIFLimits(maxArea: 25_000_000)),
                             ("http://h/iiif/a \"quoted\" \\ name\u{1}\t/é.tif", IIIFLimits(maxWidth: 4000, maxHeight: 3000))] {
            let written = IIIFInfo(id: id, properties: properties, tileSize: 256, limits: limits).json
            let object = try JSONSerialization.jsonObject(with: Data(written))
            let expected = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys,
                                                                                          .withoutEscapingSlashes])
            #expect(written == Array(expected) + [0x0A], "\(String(decoding: written, as: UTF8.self))")
            #expect((object as? [String: Any])?["id"] as? String == id)
        }
    }

    /// The warm-up answers each of its viewer-like requests (a path it got wrong would warm nothing up) and leaves
    /// neither its image nor its folder behind.
    @Test func warmUpAnswersEveryRequestAndLeavesNothing() throws {
        let service = IIIFService(catalog: try ImageCatalog(path: NSTemporaryDirectory()))
        let statuses = service.warmUp()
        #expect(statuses.count == 8 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(!FileManager.default.fileExists(atPath: NSTemporaryDirectory() + "tessera-warm-up-\(getpid())"))
        #expect(service.openImages.count == 0)
    }

    /// info.json's `sizes` are the levels libvips stored (rounded down), and asking for one is that level's pixels
    /// as stored, re-encoded: not the level stretched by a pixel, not a larger level shrunk.
    @Test(needsVips) func sizesAreTheStoredLevelsAndAreReadAsTheyAre() throws {
        let (_, pyramid) = try libvipsPyramid()
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        let info = try JSONSerialization.jsonObject(with: Data(get(service, "/iiif/vips/info.json").body)) as! [String: Any]
        let sizes = (info["sizes"] as! [[String: Int]]).map { Size(width: $0["width"]!, height: $0["height"]!) }
        let levels = try ImageSource(path: pyramid).properties.levels
        #expect(sizes == levels.dropFirst().reversed(), "\(sizes) against \(levels)")
        for scale in [2, 4] {
            let level = levels[scale == 2 ? 1 : 2]
            let answer = try pixels(get(service, "/iiif/vips/full/\(level.width),\(level.height)/0/default.png"))
            let stored = try ImageSource(path: pyramid).makeReader(ReadOptions(
                region: Rect(x: 0, y: 0, width: level.width * scale, height: level.height * scale), scale: scale)).readAll()
            #expect(answer.size == stored.size && answer.bytes == stored.bytes, "the 1/\(scale) level as stored")
        }
    }

    /// Rendered responses are kept once for every spelling and host that asks, and a changed file misses them;
    /// stored tiles are not kept.
    @Test(needsVips) func renderedResponsesAreKeptByTheirCanonicalRequestAndTheFile() throws {
        let path = try image("plain")
        _ = try libvipsPyramid()
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"))
        let first = get(service, "/iiif/plain/full/300,/0/default.jpg")
        let again = service.handle(HTTPRequest(method: "GET", path: "/iiif/plain/full/300,300/0/default.jpg",
                                               headers: ["host": "other.example.org"]))
        #expect(again.body == first.body && service.responses.usage.count == 1)
        _ = get(service, "/iiif/vips/0,0,1024,1024/256,/0/default.jpg")
        #expect(service.responses.usage.count == 1, "a stored tile is not kept")
        var black = ImageBuffer(width: 2400, height: 2400, format: .rgb8)
        black.bytes = [UInt8](repeating: 0, count: black.bytes.count)
        try ImageWriter.write(BufferReader(black), to: path)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: path)
        let changed = get(service, "/iiif/plain/full/300,/0/default.jpg")
        #expect(changed.status == 200 && changed.body != first.body, "a changed file is rendered again")
        #expect(service.responses.usage.count == 2)
    }

    /// What needs no decoding is answered on the polling thread: info.json of an open pyramid, a stored tile, a
    /// held render, a bad request; so is a render from one stored tile to at most a tile's pixels. Another render,
    /// or an image not open yet while other requests are in progress, is handed to a worker; a quiet server opens
    /// a local image on the polling thread.
    @Test(needsVips) func storedTilesAndHeldRendersAreAnsweredAtOnceAndRendersOnAWorker() throws {
        _ = try libvipsPyramid()
        var busy = IIIFService.Configuration()
        busy.isQuiet = { false }
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"), configuration: busy)
        func isNow(_ path: String, of service: IIIFService) -> Bool {
            if case .now = service.answer(HTTPRequest(method: "GET", path: path, headers: ["host": "example.org"])) {
                return true
            }
            return false
        }
        func isNow(_ path: String) -> Bool { isNow(path, of: service) }
        #expect(isNow("/iiif/vips/info.json", of: IIIFService(catalog: try ImageCatalog(path: folder + "/images"))),
                "not open yet, on a quiet server")
        #expect(!isNow("/iiif/vips/info.json"), "not open yet, on a busy server")
        #expect(get(service, "/iiif/vips/info.json").status == 200)
        #expect(isNow("/iiif/vips/info.json"))
        #expect(isNow("/iiif/vips/0,0,1024,1024/256,/0/default.jpg"), "a stored tile")
        #expect(isNow("/iiif/vips/full/300,/0/default.xyz"), "a bad request")
        #expect(!isNow("/iiif/vips/full/300,/0/default.jpg"), "a render")
        #expect(get(service, "/iiif/vips/full/300,/0/default.jpg").status == 200)
        #expect(isNow("/iiif/vips/full/300,/0/default.jpg"), "the render, held")
        #expect(isNow("/iiif/vips/full/90,/0/default.jpg"), "a thumbnail from the smallest level's one tile")
        let thumbnail = try pixels(get(service, "/iiif/vips/full/90,/0/default.jpg"))
        #expect(thumbnail.width == 90, "made on the polling thread, kept")
        #expect(!isNow("/iiif/vips/0,0,256,256/^1024,/0/default.jpg"), "one stored tile made larger than a tile")
    }

    @Test func regionsOfAPlainJPEGAreReadThroughItsEntropyIndex() throws {
        // Grain, so the file is a photograph's size and its index fits in 0.5% of it.
        var image = ImageBuffer(width: 1600, height: 1200, format: .rgb8)
        var state: UInt32 = 7
        image.bytes.withUnsafeMutableBytes { bytes in
            for index in bytes.indices {
                state = state &* 1_664_525 &+ 1_013_904_223
                bytes[index] = UInt8((index / 3 % 1600 + index / 4800) / 12 % 200 + Int(state >> 27))
            }
        }
        try FileManager.default.createDirectory(atPath: folder + "/images", withIntermediateDirectories: true)
        let path = folder + "/images/plain.jpg"
        try ImageWriter.write(BufferReader(image), to: path)
        let cache = try PyramidCache(folder: folder + "/cache", minimumSide: 100_000)
        var configuration = IIIFService.Configuration()
        configuration.cache = cache
        let tile = "/iiif/plain/512,768,256,256/256,/0/default.png"
        let direct = try pixels(get(IIIFService(catalog: try ImageCatalog(path: folder + "/images")), tile)).bytes
        let built = try JPEGEntropyIndex.loadOrBuild(for: path, folder: cache.folder)
        #expect(try pixels(get(IIIFService(catalog: try ImageCatalog(path: folder + "/images"),
                                           configuration: configuration), tile)).bytes == direct)
        // An index whose DC predictions are off (its checksum made good) shows that the tile came through it.
        let index = built.index
        let shifted = JPEGEntropyIndex(key: index.key, dataOffset: index.dataOffset, mcusAcross: index.mcusAcross,
                                       mcusDown: index.mcusDown, componentCount: index.componentCount,
                                       restartInterval: index.restartInterval, stride: index.stride,
                                       states: index.states.map { state in
                                           var state = state
                                           state.predictions[0] += 40
                                           return state
                                       })
        try Data(shifted.encoded()).write(to: URL(fileURLWithPath: built.file))
        #expect(try pixels(get(IIIFService(catalog: try ImageCatalog(path: folder + "/images"),
                                           configuration: configuration), tile)).bytes != direct)
    }

    private func modified(_ name: String) throws -> Date {
        try FileManager.default.attributesOfItem(atPath: "\(folder)/images/\(name).jpg")[.modificationDate] as! Date
    }

    private func byteCount(_ name: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: "\(folder)/images/\(name).jpg")[.size] as! Int
    }

    /// Behind a proxy, ids follow its forwarded headers, or the configured public URL, which wins; images and
    /// info.json carry the configured lifetime, and an image's tag does not depend on the host asked through.
    @Test func idsFollowTheProxyOrThePublicURLAndTagsDoNotDependOnTheHost() throws {
        _ = try image("proxied")
        var configuration = IIIFService.Configuration()
        configuration.cacheLifetime = 600
        let service = IIIFService(catalog: try ImageCatalog(path: folder + "/images"), configuration: configuration)
        let forwarded = ["host": "127.0.0.1:8001", "x-forwarded-proto": "https", "x-forwarded-host": "maps.example.org, inner",
                         "x-forwarded-prefix": "/tiles/"]
        let info = service.handle(HTTPRequest(method: "GET", path: "/iiif/proxied.jpg/info.json", headers: forwarded))
        #expect(String(decoding: info.body, as: UTF8.self).contains("\"id\" : \"https://maps.example.org/tiles/iiif/proxied.jpg\""))
        #expect(info.headers.contains { $0 == ("Cache-Control", "public, max-age=600") })
        let tag = { (host: String) in
            service.handle(HTTPRequest(method: "GET", path: "/iiif/proxied.jpg/0,0,256,256/256,/0/default.jpg",
                                       headers: ["host": host])).headers.first { $0.0 == "ETag" }?.1
        }
        #expect(tag("a.example.org") != nil && tag("a.example.org") == tag("b.example.org"))
        configuration.publicBase = PublicBase(url: "https://images.example.org/iiif-proxy/")
        let configured = IIIFService(catalog: try ImageCatalog(path: folder + "/images"), configuration: configuration)
        let answer = configured.handle(HTTPRequest(method: "GET", path: "/iiif/proxied.jpg/info.json", headers: forwarded))
        #expect(String(decoding: answer.body, as: UTF8.self).contains("\"id\" : \"https://images.example.org/iiif-proxy/iiif/proxied.jpg\""))
    }
}
