import Foundation
import Testing
import Tessera
@testable import TesseraServer

/// Routing of `tessera serve` (Site) and the viewer's files (ViewerAssets): what each path answers, media types,
/// validators, and that nothing outside the viewer's folder is ever served.
@Suite final class SiteTests {
    let base: String
    let web: String
    let images: String

    init() throws {
        base = NSTemporaryDirectory() + "tessera-site-\(UUID().uuidString)"
        web = base + "/repo/Web"
        images = base + "/images"
        let files = FileManager.default
        for folder in [web + "/js", images, base + "/repo/.build/x86_64-unknown-linux-gnu/release", base + "/outside"] {
            try files.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let contents = [
            web + "/index.html": "<head></head><div class=\"tessera-viewer\" data-src=\"\"></div>",
            web + "/viewer.css": "body {}", web + "/js/main.js": "import './viewer.js';", web + "/.secret": "hidden",
            base + "/outside/secret.js": "secret", images + "/a b.jpg": "not decoded by these tests",
        ]
        for (path, text) in contents { #expect(files.createFile(atPath: path, contents: Data(text.utf8))) }
        try files.createSymbolicLink(atPath: web + "/js/escape.js", withDestinationPath: base + "/outside/secret.js")
        try files.createSymbolicLink(atPath: web + "/door", withDestinationPath: base + "/outside")
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }

    private func site(viewer: Bool = true) throws -> Site {
        Site(service: IIIFService(catalog: try ImageCatalog(path: images)),
             viewer: viewer ? try ViewerAssets(folder: web) : nil)
    }

    private func get(_ path: String, from site: Site, headers: [String: String] = [:]) -> HTTPResponse {
        site.handle(HTTPRequest(method: "GET", path: path, headers: headers))
    }

    private func header(_ name: String, of response: HTTPResponse) -> String? {
        response.headers.first { $0.0 == name }?.1
    }

    @Test func metricsCountEveryAnswerByRouteAndStatus() throws {
        let site = try site()
        _ = get("/web/js/main.js", from: site)
        _ = get("/web/js/missing.js", from: site)
        _ = get("/nowhere", from: site)
        let metrics = get("/metrics", from: site)
        #expect(metrics.status == 200)
        #expect(header("Content-Type", of: metrics) == MetricsRegistry.contentType)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("tessera_http_requests_total{route=\"web\",status=\"200\"} 1\n"))
        #expect(text.contains("tessera_http_requests_total{route=\"web\",status=\"404\"} 1\n"))
        #expect(text.contains("tessera_http_requests_total{route=\"none\",status=\"404\"} 1\n"))
        #expect(text.contains("tessera_render_memory_limit_bytes \(IIIFService.Configuration().renderBudget.bytes)\n"))
    }

    @Test func theViewerIsFoundFromTheExecutableUp() {
        let executable = base + "/repo/.build/x86_64-unknown-linux-gnu/release/tessera"
        #expect(ViewerAssets.locate(from: executable) == base + "/repo/Web")
        #expect(ViewerAssets.locate(from: base + "/outside/tessera") == nil)
        #expect(throws: TesseraServerError.viewerNotFound(folder: base + "/outside")) {
            try ViewerAssets(folder: base + "/outside")
        }
    }

    @Test func assetsAreServedWithTheirMediaTypesAndValidators() throws {
        let site = try site()
        let script = get("/web/js/main.js", from: site)
        #expect(script.status == 200)
        #expect(header("Content-Type", of: script) == "text/javascript; charset=utf-8")
        #expect(header("Cache-Control", of: script) == "no-cache")
        #expect(header("Access-Control-Allow-Origin", of: script) == "*")
        #expect(String(decoding: script.body, as: UTF8.self) == "import './viewer.js';")
        #expect(header("Content-Type", of: get("/web/viewer.css", from: site)) == "text/css; charset=utf-8")
        let tag = try #require(header("ETag", of: script))
        let again = get("/web/js/main.js", from: site, headers: ["if-none-match": tag])
        #expect(again.status == 304 && again.body.isEmpty)
    }

    @Test func nothingOutsideTheViewersFolderIsServed() throws {
        let site = try site()
        for path in ["/web/../outside/secret.js", "/web/%2e%2e/outside/secret.js", "/web/js/%2E%2E/%2E%2E/images/a%20b.jpg",
                     "/web/js/escape.js", "/web/door/secret.js", "/web/.secret", "/web/js", "/web/", "/web//viewer.css",
                     "/web/viewer.css%00.js", "/web/js%5Cmain.js", "/web/" + base + "/outside/secret.js",
                     "/web/" + String(repeating: "a/", count: 600) + "a.js", "/web/missing.js"] {
            #expect(get(path, from: site).status == 404, "\(path.prefix(60))")
        }
    }

    @Test func viewerPagesOpenTheImagesInfoJSON() throws {
        let site = try site()
        let page = get("/view/a%20b.jpg", from: site)
        #expect(page.status == 200)
        #expect(header("Content-Type", of: page) == "text/html; charset=utf-8")
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("data-src=\"/iiif/a%20b.jpg/info.json\""))
        #expect(html.contains("<link rel=\"preload\" as=\"fetch\" crossorigin=\"anonymous\" href=\"/iiif/a%20b.jpg/info.json\">"))
        #expect(get("/view/missing.jpg", from: site).status == 404)
        #expect(get("/view/..%2Foutside%2Fsecret.js", from: site).status == 404)
        let open = String(decoding: get("/view", from: site).body, as: UTF8.self)
        #expect(open.contains("data-src=\"\"") && !open.contains("preload"))
    }

    @Test func theFrontPageShowsEachImageAsACardAndEachFolderAsAFolder() throws {
        let files = FileManager.default
        try files.createDirectory(atPath: images + "/maps/old", withIntermediateDirectories: true)
        try ImageWriter.write(BufferReader(ImageBuffer(width: 600, height: 300, format: .rgb8)), to: images + "/maps/wide.jpg")
        let page = get("/", from: try site())
        #expect(page.status == 200 && header("Content-Type", of: page) == "text/html; charset=utf-8")
        let root = String(decoding: page.body, as: UTF8.self)
        #expect(root.contains("<p>1 image, 1 folder</p>"))
        #expect(root.contains("<li class=\"folder\"><a href=\"/browse/maps/\">"))
        // A file that does not decode is still listed, with what is wrong with it.
        #expect(root.contains("<span class=\"name\">a b.jpg</span><span class=\"meta\">"))
        let maps = String(decoding: get("/browse/maps/", from: try site()).body, as: UTF8.self)
        #expect(maps.contains("<nav><a href=\"/\">Tessera</a> / <strong>maps</strong></nav><p>1 image, 1 folder</p>"))
        #expect(maps.contains("<a class=\"thumb\" href=\"/view/maps%2Fwide.jpg\"><img loading=\"lazy\""))
        #expect(maps.contains("width=\"256\" height=\"128\" src=\"/iiif/maps%2Fwide.jpg/full/!256,256/0/default.jpg\""))
        #expect(maps.contains("<span class=\"meta\">600 &times; 300 &middot; JPEG</span>"))
        #expect(maps.contains("<a href=\"/iiif/maps%2Fwide.jpg/info.json\">info.json</a>"))
        #expect(maps.contains("<a href=\"/iiif/maps%2Fwide.jpg/manifest.json\">manifest</a>"))
        #expect(maps.contains("<a href=\"/iiif/maps/collection.json\">IIIF collection</a>"))
        #expect(root.contains("<a href=\"/iiif/collection.json\">IIIF collection</a>"))
        #expect(maps.contains("<a href=\"/web/progressive.html?id=maps%2Fwide.jpg\">progressive</a>"))
        #expect(get("/browse/maps/old/", from: try site()).status == 200)
        for missing in ["/browse/nowhere/", "/browse/..%2Foutside/", "/browse/maps/wide.jpg/", "/browse/.hidden/"] {
            #expect(get(missing, from: try site()).status == 404, "\(missing)")
        }
        let without = String(decoding: get("/browse/maps/", from: try site(viewer: false)).body, as: UTF8.self)
        #expect(!without.contains("/view/") && !without.contains("progressive"))
        #expect(without.contains("<a class=\"thumb\" href=\"/iiif/maps%2Fwide.jpg/info.json\">"))
    }

    @Test func withoutTheViewerItsPathsSaySoAndTheRestStillWorks() throws {
        let site = try site(viewer: false)
        let page = get("/view/a%20b.jpg", from: site)
        #expect(page.status == 404)
        #expect(String(decoding: page.body, as: UTF8.self).contains("--web DIR"))
        #expect(get("/iiif/a%20b.jpg", from: site).status == 303)
        #expect(get("/nowhere", from: site).status == 404)
    }

    @Test func onlyGetAndHeadReachTheViewer() throws {
        let response = try site().handle(HTTPRequest(method: "POST", path: "/web/viewer.css"))
        #expect(response.status == 405)
        #expect(header("Allow", of: response) == "GET, HEAD")
    }

    @Test func extraRoutesComeFirst() throws {
        let route = Site.Route("extra", matches: { $0.hasPrefix("/stream/") }) { _, _ in .text(200, "streamed") }
        let site = Site(service: IIIFService(catalog: try ImageCatalog(path: images)), viewer: nil, extraRoutes: [route])
        #expect(get("/stream/a", from: site).body == Array("streamed\n".utf8))
    }

    @Test func healthAnswersLoadBalancersAndFailsWhileDraining() throws {
        let healthy = get("/health", from: try site())
        #expect(healthy.status == 200 && healthy.body == Array("{\"status\":\"ok\"}\n".utf8))
        #expect(header("Cache-Control", of: healthy) == "no-store")
        let draining = Site(service: IIIFService(catalog: try ImageCatalog(path: images)), viewer: nil, isDraining: { true })
        #expect(get("/health", from: draining).status == 503)
    }

    @Test func pagesLinksStartWithTheProxysPrefix() throws {
        let site = try site()
        let headers = ["x-forwarded-prefix": "/tiles"]
        let page = String(decoding: get("/view/a%20b.jpg", from: site, headers: headers).body, as: UTF8.self)
        #expect(page.contains("data-src=\"/tiles/iiif/a%20b.jpg/info.json\""))
        let front = String(decoding: get("/", from: site, headers: headers).body, as: UTF8.self)
        #expect(!front.contains("href=\"/iiif") && !front.contains("href=\"/view"))
    }

    @Test func aPublicURLIsAnAbsoluteHTTPURL() {
        #expect(PublicBase(url: "https://Maps.example.org:8443/tiles/") == PublicBase(origin: "https://Maps.example.org:8443", path: "/tiles"))
        #expect(PublicBase(url: "http://example.org")?.url == "http://example.org")
        for bad in ["example.org", "ftp://example.org", "https://", "https://example.org/?a=1", "https://example.org/#x", ""] {
            #expect(PublicBase(url: bad) == nil, "\(bad)")
        }
    }
}
