import Foundation
import Testing
@testable import Tessera
@testable import TesseraServer

/// The Presentation 3.0 documents `serve` makes for manifest viewers: an image's Manifest, a folder's Collection.
@Suite final class IIIFPresentationTests {
    let folder = NSTemporaryDirectory() + "tessera-presentation-\(UUID().uuidString)"
    let service: IIIFService

    /// A folder of a 600 x 400 JPEG, `maps/` holding a 300 x 500 PNG, and a hidden file.
    init() throws {
        try FileManager.default.createDirectory(atPath: folder + "/maps", withIntermediateDirectories: true)
        try ImageWriter.write(BufferReader(ImageBuffer(width: 600, height: 400, format: .rgb8)), to: folder + "/view.jpg")
        try ImageWriter.write(BufferReader(ImageBuffer(width: 300, height: 500, format: .rgb8)), to: folder + "/maps/plan b.png")
        _ = FileManager.default.createFile(atPath: folder + "/.hidden.jpg", contents: Data([1]))
        service = IIIFService(catalog: try ImageCatalog(path: folder))
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func document(_ path: String) throws -> [String: Any] {
        let response = service.handle(HTTPRequest(method: "GET", path: path, headers: ["host": "example.org"]))
        #expect(response.status == 200, "\(path): \(String(decoding: response.body, as: UTF8.self))")
        #expect(response.headers.contains { $0 == ("Content-Type", IIIFPresentation.contentType) })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(object["@context"] as? String == IIIFPresentation.context)
        return object
    }

    private func items(_ object: [String: Any]) -> [[String: Any]] { object["items"] as? [[String: Any]] ?? [] }

    @Test func anImagesManifestIsOneCanvasOfItsSizePaintedThroughItsService() throws {
        let service = "http://example.org/iiif/maps%2Fplan%20b.png"
        let manifest = try document("/iiif/maps%2Fplan%20b.png/manifest.json")
        #expect(manifest["id"] as? String == service + "/manifest.json")
        #expect(manifest["type"] as? String == "Manifest")
        #expect(manifest["label"] as? [String: [String]] == ["none": ["plan b.png"]])
        let canvases = items(manifest)
        #expect(canvases.count == 1)
        let canvas = try #require(canvases.first)
        #expect(canvas["type"] as? String == "Canvas")
        #expect(canvas["width"] as? Int == 300 && canvas["height"] as? Int == 500)
        let page = try #require(items(canvas).first)
        let annotation = try #require(items(page).first)
        #expect(annotation["motivation"] as? String == "painting" && annotation["target"] as? String == canvas["id"] as? String)
        let body = try #require(annotation["body"] as? [String: Any])
        #expect(body["id"] as? String == service + "/full/max/0/default.jpg")
        let services = try #require(body["service"] as? [[String: Any]])
        #expect(services.first?["id"] as? String == service && services.first?["type"] as? String == "ImageService3")
        let thumbnail = try #require((manifest["thumbnail"] as? [[String: Any]])?.first)
        #expect(thumbnail["id"] as? String == service + "/full/!256,256/0/default.jpg")
        #expect(thumbnail["width"] as? Int == 154 && thumbnail["height"] as? Int == 256)
    }

    @Test func aFoldersCollectionListsItsFoldersThenItsImagesManifests() throws {
        let root = try document("/iiif/collection.json")
        #expect(root["id"] as? String == "http://example.org/iiif/collection.json")
        #expect(root["type"] as? String == "Collection")
        #expect(items(root).map { $0["id"] as? String } == ["http://example.org/iiif/maps/collection.json",
                                                           "http://example.org/iiif/view.jpg/manifest.json"])
        #expect(items(root).map { $0["type"] as? String } == ["Collection", "Manifest"])
        let maps = try document("/iiif/maps/collection.json")
        #expect(maps["label"] as? [String: [String]] == ["none": ["maps"]])
        #expect(items(maps).map { $0["id"] as? String } == ["http://example.org/iiif/maps%2Fplan%20b.png/manifest.json"])
        // Each item's document is there.
        _ = try document("/iiif/maps%2Fplan%20b.png/manifest.json")
        let missing = service.handle(HTTPRequest(method: "GET", path: "/iiif/nowhere/collection.json"))
        #expect(missing.status == 404)
    }
}
