import Foundation
import Synchronization
import Testing
import Tessera
@testable import TesseraServer

/// The server's open images: reused while the file is unchanged, opened afresh when it changes, and bounded by the
/// memory they hold, the least recently used dropped first.
@Suite final class OpenImagesTests {
    let folder = NSTemporaryDirectory() + "tessera-open-\(UUID().uuidString)"

    init() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 0..<6 {
            try ImageWriter.write(BufferReader(ImageBuffer(width: 8 + index, height: 8, format: .rgb8)),
                                  to: "\(folder)/\(index).png")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    @Test func anUnchangedFileIsReusedAndAChangedOneReopened() throws {
        let images = OpenImages(cache: nil, isQuiet: { false })
        let first = try images.open("\(folder)/0.png", .worker)
        #expect(try images.open("\(folder)/0.png", .worker).source === first.source)
        try ImageWriter.write(BufferReader(ImageBuffer(width: 20, height: 8, format: .rgb8)), to: "\(folder)/0.png")
        let changed = try images.open("\(folder)/0.png", .worker)
        #expect(changed.source !== first.source && changed.source.properties.width == 20)
        #expect(images.usage.count == 1)
    }

    /// A stamp the caller read (the catalog's, `ImageCatalog.File`) is what says whether the file changed: no
    /// `stat(2)` of its own. Given the stamp read before a rewrite, the image open is answered.
    @Test func aStampGivenSaysWhetherTheFileChanged() throws {
        let images = OpenImages(cache: nil, isQuiet: { false }), path = "\(folder)/0.png"
        let before = try #require(FileStamp(path: path))
        let first = try images.open(path, .worker, stamp: before)
        try ImageWriter.write(BufferReader(ImageBuffer(width: 20, height: 8, format: .rgb8)), to: path)
        #expect(try images.open(path, .worker, stamp: before).source === first.source)
        let after = try #require(FileStamp(path: path))
        #expect(try images.open(path, .worker, stamp: after).source.properties.width == 20)
    }

    @Test func theLeastRecentlyUsedGoBeyondTheByteLimit() throws {
        let cost = try OpenImages(cache: nil, isQuiet: { false }).open("\(folder)/0.png", .worker).byteCost
        let images = OpenImages(cache: nil, byteLimit: 3 * cost, isQuiet: { false })
        let kept = try images.open("\(folder)/0.png", .worker)
        for index in 1..<6 {
            _ = try images.open("\(folder)/\(index).png", .worker)
            _ = try images.open("\(folder)/0.png", .worker)  // used again each time: never the oldest
        }
        #expect(images.usage.count == 3 && images.usage.bytes == 3 * cost)
        #expect(try images.open("\(folder)/0.png", .worker).source === kept.source)
        #expect(try images.open("\(folder)/5.png", .worker).source.properties.width == 13)
        #expect(images.usage.count == 3)
    }

    @Test func aPollingThreadOpensALocalFileOnlyWhileTheServerIsQuiet() throws {
        let quiet = Mutex(false)
        let images = OpenImages(cache: nil, isQuiet: { quiet.withLock { $0 } })
        #expect(throws: NeedsWorker.self) { try images.open("\(folder)/1.png", .pollingThread) }
        quiet.withLock { $0 = true }
        let opened = try images.open("\(folder)/1.png", .pollingThread)
        #expect(opened.source.properties.width == 9)
        // A remote file's open waits on the network: a worker's, however quiet the server.
        #expect(throws: NeedsWorker.self) { try images.open("http://127.0.0.1:9/1.png", .pollingThread) }
        #expect(try images.open("\(folder)/1.png", .worker).source === opened.source)
    }

    /// `openPyramid` opens a local file only when it is a pyramid of several levels, and keeps it as `open` would:
    /// `open` then finds it. The edge foresight of one opening is claimed once, through any copy of the image.
    @Test func onlyPyramidsAreOpenedAheadAndTheirForesightIsClaimedOnce() throws {
        let images = OpenImages(cache: nil, isQuiet: { true })
        #expect(images.openPyramid("\(folder)/0.png") == nil && images.usage.count == 0, "a plain image")
        #expect(images.openPyramid("\(folder)/missing.tif") == nil)
        #expect(images.openPyramid("http://127.0.0.1:9/pyramid.tif") == nil, "a remote file")
        let path = "\(folder)/pyramid.tif"
        let plan = try PyramidPlan(imageSize: Size(width: 600, height: 400), tileSize: 256, depth: .oneTile)
        let sink = try PyramidalTIFFSink(path: path, plan: plan, pixelFormat: .rgb8, options: PyramidBuilder.Options(),
                                         levelStorage: .pages)
        _ = try PyramidBuilder(plan: plan, sink: sink).build(from: BufferReader(ImageBuffer(width: 600, height: 400,
                                                                                         format: .rgb8)))
        let prepared = try #require(images.openPyramid(path))
        #expect(prepared.tiles != nil && images.usage.count == 1)
        #expect(images.openPyramid(path)?.source === prepared.source, "found open")
        let opened = try images.open(path, .pollingThread)
        #expect(opened.source === prepared.source)
        #expect(opened.edgeForesight.take() && !prepared.edgeForesight.take())
    }
}
