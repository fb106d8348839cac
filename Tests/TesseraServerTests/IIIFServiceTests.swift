import Foundation
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
        let previewTiles = try #require(try StoredTileReader(source: ImageSource(path: previewFile)))
        let stored = try #require(try previewTiles.jpeg(scale: 1, column: 0, row: 0))
        #expect(fromPreview.body == stored, "a whole tile at 1/8 is the preview's stored tile")
        #expect(meanDifference(try pixels(fromPreview), try pixels(get(direct, tile))) < 2)
        #expect(meanDifference(try pixels(get(service, overview)), try pixels(get(direct, overview))) < 2)
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
}
