import Foundation
import Testing
@testable import Tessera

@Suite final class PyramidCacheTests {
    let folder = NSTemporaryDirectory() + "tessera-cache-\(UUID().uuidString)"

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// A plain 600x400 JPEG of a gradient, written with Tessera.
    private func image(_ name: String) throws -> String {
        var pixels = ImageBuffer(width: 600, height: 400, format: .rgb8)
        for index in pixels.bytes.indices { pixels.bytes[index] = UInt8(truncatingIfNeeded: index / 7) }
        let path = "\(folder)/\(name).jpg"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try ImageWriter.write(BufferReader(pixels), to: path)
        return path
    }

    private func pyramids(_ cache: PyramidCache, _ path: String) throws -> PyramidCache.Pyramids? {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return cache.pyramids(for: try ImageSource(path: path), path: path,
                              modified: attributes[.modificationDate] as! Date, size: attributes[.size] as! Int)
    }

    private func pyramid(_ cache: PyramidCache, _ path: String) throws -> String? {
        try pyramids(cache, path)?.full
    }

    @Test func aPyramidIsBuiltOnceThenServedFromTheCache() throws {
        let cache = try PyramidCache(folder: folder + "/cache", minimumSide: 1)
        let path = try image("first")
        #expect(try pyramid(cache, path) == nil)
        #expect(try pyramid(cache, path) == nil)
        cache.waitUntilIdle()
        let built = try #require(try pyramid(cache, path))
        let source = try ImageSource(path: built)
        #expect(source.properties.size == Size(width: 600, height: 400))
        #expect(source.properties.levels.count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/cache").count == 1)
    }

    @Test func aPreviewPyramidAnswersUntilTheFullOneIsBuilt() throws {
        let cache = try PyramidCache(folder: folder + "/cache", minimumSide: 1)
        let path = try image("preview")
        // Holding the queue of full builds keeps the full pyramid waiting while the preview is built.
        let release = DispatchSemaphore(value: 0)
        cache.fullBuilds.async { release.wait() }
        #expect(try pyramids(cache, path)?.full == nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(cache.waitForPreview(path: path, modified: attributes[.modificationDate] as! Date,
                                     size: attributes[.size] as! Int))
        let preview = try #require(try pyramids(cache, path)?.preview)
        #expect(try ImageSource(path: preview).properties.size == Size(width: 75, height: 50))
        #expect(try pyramid(cache, path) == nil)
        release.signal()
        cache.waitUntilIdle()
        #expect(try pyramid(cache, path) != nil)
        #expect(!FileManager.default.fileExists(atPath: preview))
    }

    @Test func theLeastRecentlyUsedPyramidsAreRemovedBeyondTheLimit() throws {
        let first = try image("first"), second = try image("second")
        let unlimited = try PyramidCache(folder: folder + "/cache", minimumSide: 1)
        _ = try pyramid(unlimited, first)
        unlimited.waitUntilIdle()
        let firstPyramid = try #require(try pyramid(unlimited, first))
        let size = try FileManager.default.attributesOfItem(atPath: firstPyramid)[.size] as! Int
        // Room for one pyramid and a half: building the second removes the first, used less recently.
        let cache = try PyramidCache(folder: folder + "/cache", limit: size * 3 / 2, minimumSide: 1)
        Thread.sleep(forTimeInterval: 1.1)
        _ = try pyramid(cache, second)
        cache.waitUntilIdle()
        #expect(!FileManager.default.fileExists(atPath: firstPyramid))
        #expect(try pyramid(cache, second) != nil)
    }

    @Test func smallImagesAndPyramidsGetNone() throws {
        let cache = try PyramidCache(folder: folder + "/cache")
        let path = try image("small")
        #expect(try pyramid(cache, path) == nil)
        cache.waitUntilIdle()
        #expect(try pyramid(cache, path) == nil)
    }
}
