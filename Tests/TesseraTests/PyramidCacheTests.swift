import Foundation
import Testing
@testable import Tessera

@Suite final class PyramidCacheTests {
    let folder = NSTemporaryDirectory() + "tessera-cache-\(UUID().uuidString)"

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// A plain 600x400 JPEG of a gradient, or of noise (a file large enough for an entropy index), written with
    /// Tessera.
    private func image(_ name: String, noise: Bool = false) throws -> String {
        var pixels = ImageBuffer(width: 600, height: 400, format: .rgb8)
        for index in pixels.bytes.indices {
            pixels.bytes[index] = UInt8(truncatingIfNeeded: noise ? (index &* 2_654_435_761) >> 13 : index / 7)
        }
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

    @Test func inIndexModeAPlainJPEGGetsItsEntropyIndexAndNoPyramid() throws {
        let cache = try PyramidCache(folder: folder + "/cache", minimumSide: 1, mode: .index)
        let path = try image("indexed", noise: true)
        #expect(try pyramids(cache, path) == PyramidCache.Pyramids())
        cache.waitUntilIdle()
        #expect(try pyramids(cache, path) == PyramidCache.Pyramids())
        let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/cache")
        #expect(files.count == 1 && files.allSatisfy { $0.hasSuffix("." + JPEGEntropyIndex.fileExtension) })
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

    /// Sets the modification time of `path` to `seconds` ago.
    private func age(_ path: String, by seconds: Int) {
        let past = time(nil) - seconds
        var times = utimbuf(actime: past, modtime: past)
        utime(path, &times)
    }

    @Test func oneProcessHoldsALockUntilItReleasesIt() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let lock = folder + "/image.lock"
        let first = BuildLocks(timeout: 10), second = BuildLocks(timeout: 10)
        #expect(first.claim(lock))
        #expect(!second.claim(lock))
        #expect(!first.claim(lock))
        first.release(lock)
        #expect(!FileManager.default.fileExists(atPath: lock))
        #expect(second.claim(lock))
        second.release(lock)
    }

    @Test func aHeartbeatKeepsALockFreshAndAStaleOneIsTakenOver() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let lock = folder + "/image.lock"
        let holder = BuildLocks(timeout: 0.4), other = BuildLocks(timeout: 0.4)
        #expect(holder.claim(lock))
        Thread.sleep(forTimeInterval: 1)
        #expect(other.isHeld(lock))
        #expect(!other.claim(lock))
        holder.release(lock)
        // A lock whose process died: no heartbeat for longer than the timeout.
        FileManager.default.createFile(atPath: lock, contents: Data("elsewhere 1\n".utf8))
        age(lock, by: 5)
        #expect(!other.isHeld(lock))
        #expect(other.claim(lock))
        #expect(other.isHeld(lock))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["image.lock"])
        other.release(lock)
    }

    @Test func startingRemovesWhatDeadBuildsLeftButNotALiveBuildsFiles() throws {
        let cacheFolder = folder + "/cache"
        try FileManager.default.createDirectory(atPath: cacheFolder, withIntermediateDirectories: true)
        func file(_ name: String, agedBy seconds: Int) -> String {
            let path = "\(cacheFolder)/\(name)"
            FileManager.default.createFile(atPath: path, contents: Data(count: 100))
            age(path, by: seconds)
            return path
        }
        let deadLock = file("dead.lock", agedBy: 60), deadTemporary = file(".dead.tif.tessera-AbC123", agedBy: 60)
        let deadPreview = file(".dead.preview.tif.tessera-XyZ789", agedBy: 60)
        let liveLock = file("live.lock", agedBy: 0), liveTemporary = file(".live.tif.tessera-QwE456", agedBy: 60)
        let finished = file("done.tif", agedBy: 60)
        _ = try PyramidCache(folder: cacheFolder, lockTimeout: 10)
        for path in [deadLock, deadTemporary, deadPreview] { #expect(!FileManager.default.fileExists(atPath: path)) }
        for path in [liveLock, liveTemporary, finished] { #expect(FileManager.default.fileExists(atPath: path)) }
    }

    @Test func processesSharingAFolderBuildEachPyramidOnce() throws {
        let path = try image("shared")
        let builder = try PyramidCache(folder: folder + "/cache", minimumSide: 1)
        let other = try PyramidCache(folder: folder + "/cache", minimumSide: 1)
        let release = DispatchSemaphore(value: 0)
        builder.fullBuilds.async { release.wait() }
        #expect(try pyramids(builder, path)?.full == nil)
        // The other process finds the build claimed: it builds nothing and reads the image meanwhile.
        #expect(try pyramids(other, path)?.full == nil)
        other.waitUntilIdle()
        release.signal()
        builder.waitUntilIdle()
        let built = try #require(try pyramid(other, path))
        #expect(try ImageSource(path: built).properties.size == Size(width: 600, height: 400))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/cache") == [(built as NSString).lastPathComponent])
    }

    @Test func aStaleBuildsLockAndTemporaryFilesAreTakenOver() throws {
        let path = try image("taken")
        let cache = try PyramidCache(folder: folder + "/cache", minimumSide: 1, lockTimeout: 1)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let stem = PyramidCache.fileStem(in: folder + "/cache", path: path, modified: attributes[.modificationDate] as! Date,
                                         size: attributes[.size] as! Int)
        // A process died mid-build a moment ago: its lock and temporary file are still fresh.
        FileManager.default.createFile(atPath: stem + ".lock", contents: Data("elsewhere 1\n".utf8))
        let name = (stem as NSString).lastPathComponent
        let temporary = "\(folder)/cache/.\(name).tif.tessera-Dead01"
        FileManager.default.createFile(atPath: temporary, contents: Data(count: 1000))
        #expect(try pyramids(cache, path)?.full == nil)
        cache.waitUntilIdle()
        #expect(!FileManager.default.fileExists(atPath: stem + ".tif"))
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try pyramids(cache, path)?.full == nil)
        cache.waitUntilIdle()
        #expect(!FileManager.default.fileExists(atPath: temporary))
        #expect(!FileManager.default.fileExists(atPath: stem + ".lock"))
        #expect(try pyramid(cache, path) == stem + ".tif")
    }

    @Test func temporaryFilesOfBuildsCountAgainstTheLimit() throws {
        let path = try image("counted")
        let unlimited = try PyramidCache(folder: folder + "/cache", minimumSide: 1)
        _ = try pyramid(unlimited, path)
        unlimited.waitUntilIdle()
        let built = try #require(try pyramid(unlimited, path))
        let size = try FileManager.default.attributesOfItem(atPath: built)[.size] as! Int
        // Another build in progress (its temporary file, its lock fresh) takes the room the pyramid had.
        FileManager.default.createFile(atPath: folder + "/cache/other.lock", contents: nil)
        FileManager.default.createFile(atPath: folder + "/cache/.other.tif.tessera-Live01", contents: Data(count: size))
        let second = try image("second")
        let cache = try PyramidCache(folder: folder + "/cache", limit: size * 5 / 2, minimumSide: 1)
        Thread.sleep(forTimeInterval: 1.1)
        _ = try pyramid(cache, second)
        cache.waitUntilIdle()
        #expect(!FileManager.default.fileExists(atPath: built))
        #expect(FileManager.default.fileExists(atPath: folder + "/cache/.other.tif.tessera-Live01"))
    }

    @Test func anUnwritableCacheFolderIsAOneLineError() throws {
        try FileManager.default.createDirectory(atPath: folder + "/locked", withIntermediateDirectories: true)
        chmod(folder + "/locked", 0o500)
        defer { chmod(folder + "/locked", 0o700) }
        guard getuid() != 0 else { return }  // root writes anywhere
        #expect(throws: TesseraError.self) { try PyramidCache(folder: folder + "/locked") }
    }
}
