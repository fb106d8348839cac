import Foundation
import Testing
@testable import Tessera

/// The directories of `bytes` as the reader that walks pyramids reads them (`TIFFDirectoryReader`, tested against
/// libtiff), not the writer: the two cannot share a mistake.
func directoryReader(_ bytes: [UInt8]) -> TIFFDirectoryReader? {
    TIFFDirectoryReader(byteCount: bytes.count, maxValueBytes: 1 << 20) { offset, count in
        Array(bytes[Int(offset)..<Int(offset) + count])
    }
}

/// Builds a pyramid of a 300 x 200 gradient into a TIFF and returns the file's bytes.
private func buildTIFF(format: TileFormat, pixelFormat: PixelFormat = .rgb8, levels: PyramidalTIFFSink.LevelStorage,
                       classicLimit: UInt64 = UInt64(UInt32.max)) throws -> (PyramidPlan, [UInt8]) {
    let folder = try TestImages.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let image = TestImages.gradient(width: 300, height: 200, format: pixelFormat)
    let plan = try PyramidPlan(imageSize: image.size, tileSize: 64, depth: .oneTile)
    var options = PyramidBuilder.Options()
    options.tileFormat = format
    options.threads = 3
    let path = "\(folder)/out.tif"
    let sink = try PyramidalTIFFSink(path: path, plan: plan, pixelFormat: pixelFormat, options: options,
                                     levelStorage: levels, classicLimit: classicLimit)
    _ = try PyramidBuilder(plan: plan, sink: sink, options: options).build(from: BufferReader(image))
    let files = try FileManager.default.contentsOfDirectory(atPath: folder)
    #expect(files == ["out.tif"], "the temporary file is renamed, nothing else is left")
    return (plan, Array(try Data(contentsOf: URL(fileURLWithPath: path))))
}

/// The pyramidal TIFF writer, read back with a reader independent of it.
@Suite struct PyramidalTIFFTests {
    @Test(arguments: [false, true])
    func pyramidalTIFFPagesDescribeEveryLevelAndPointAtItsTiles(big: Bool) throws {
        // A limit of 0 bytes makes the writer choose BigTIFF as it would past 4 GiB.
        let (plan, bytes) = try buildTIFF(format: .jpeg, levels: .pages, classicLimit: big ? 0 : UInt64(UInt32.max))
        #expect(Array(bytes.prefix(4)) == (big ? [0x49, 0x49, 43, 0] : [0x49, 0x49, 42, 0]))
        if big { #expect(Array(bytes[4..<8]) == [8, 0, 0, 0]) }
        let reader = try #require(directoryReader(bytes))
        var offset = reader.firstOffset
        var directories: [TIFFDirectoryReader.Fields] = []
        while offset != 0 {
            #expect(offset % 2 == 0, "directories start on a word boundary")
            let directory = try #require(reader.directory(at: offset))
            directories.append(directory)
            offset = directory.next
        }
        #expect(directories.count == plan.levels.count)
        for (level, directory) in zip(plan.levels, directories) {
            #expect(directory.integers(254) == [level.depth == 0 ? 0 : 1])
            #expect(directory.integers(256) == [UInt64(level.size.width)])
            #expect(directory.integers(257) == [UInt64(level.size.height)])
            #expect(directory.integers(259) == [7])
            #expect(directory.integers(262) == [6])
            #expect(directory.integers(530) == [2, 2])
            #expect(directory.integers(322) == [64] && directory.integers(323) == [64])
            let offsets = directory.integers(324) ?? [], counts = directory.integers(325) ?? []
            #expect(offsets.count == level.tileCount && counts.count == level.tileCount)
            for (start, count) in zip(offsets, counts) {
                let tile = bytes[Int(start)..<Int(start + count)]
                #expect(isCompleteImage(tile), "each tile is a whole JPEG stream")
            }
        }
    }

    /// A region off the tile grid, read across a level's stored tiles in their YCbCr planes (`JPEGPlanes.stored`)
    /// and resampled there, is as close to a full-precision render as the same region read through pixels and
    /// resampled, and so is a sliver of them (each tile decoded cut to its columns); more tiles than
    /// `JPEGPlanes.maxStoredTiles` are left to the pixels. Measured (in planes and encoded at quality 95, through
    /// pixels not encoded): 1.19 and 1.11 at full resolution, 1.83 and 1.77 at 1/2, 1.33 and 1.44 for 8 columns of
    /// 200 rows stretched by a pixel (across two tiles), 1.20 and 1.14 for 8 columns inside one tile, whose columns alone
    /// are laid out.
    @Test func aRegionAcrossStoredTilesIsResampledInTheirPlanes() throws {
        let (_, bytes) = try buildTIFF(format: .jpeg, levels: .pages)
        let source = try ImageSource(bytes: bytes, name: "pyramid.tif")
        let tiles = try #require(try source.storedJPEGTiles())
        let original = TestImages.gradient(width: 300, height: 200)
        var options = EncodeOptions()
        options.quality = 95
        let cases = [(1, Rect(x: 40, y: 30, width: 100, height: 90), Size(width: 67, height: 60)),
                     (2, Rect(x: 100, y: 60, width: 170, height: 120), Size(width: 85, height: 60)),
                     (1, Rect(x: 60, y: 0, width: 8, height: 200), Size(width: 8, height: 201)),
                     (1, Rect(x: 70, y: 0, width: 8, height: 200), Size(width: 8, height: 201))]
        for (scale, region, size) in cases {
            let read = region.reduced(by: scale)
            let (planes, covered) = try #require(try JPEGPlanes.stored(tiles, scale: scale, region: read, budget: .default,
                                                                      name: "pyramid.tif"))
            let first = (x: read.x / 64 * 64, y: read.y / 64 * 64)
            if read.x / 64 == (read.maxX - 1) / 64 {
                // One column of tiles, each cut to the region's columns: those of their 16-pixel iMCU columns.
                #expect(covered == Rect(x: read.x / 16 * 16, y: first.y, width: (read.maxX + 15) / 16 * 16 - read.x / 16 * 16,
                                        height: read.maxY - first.y))
            } else {
                #expect(covered == Rect(x: first.x, y: first.y, width: ((read.maxX - 1) / 64 + 1) * 64 - first.x,
                                        height: read.maxY - first.y))
            }
            let moved = Rect(x: read.x - covered.x, y: read.y - covered.y, width: read.width, height: read.height)
            let answer = try planes.resampled(region: moved, extent: moved.size, to: size, subsampling: .s420,
                                              kernel: .lanczos3).encoded(options: options, name: "answer.jpg")
            let planar = try ImageSource(bytes: answer, name: "answer.jpg").makeReader().readAll()
            let pixels = try ResamplingReader(source: source.makeReader(ReadOptions(region: region, scale: scale)),
                                              size: size).readAll()
            let truth = try ResamplingReader(source: BufferReader(TestImages.crop(original, region)), size: size).readAll()
            let (inPlanes, throughPixels) = (TestImages.meanDifference(planar, truth), TestImages.meanDifference(pixels, truth))
            #expect(planar.size == size && inPlanes < throughPixels + 0.5,
                    "1/\(scale) \(region): \(inPlanes) from a full render in planes, \(throughPixels) through pixels")
        }
        #expect(try JPEGPlanes.stored(tiles, scale: 1, region: Rect(x: 0, y: 0, width: 300, height: 200), budget: .default,
                                      name: "pyramid.tif") == nil, "20 tiles: a strip at a time, through pixels")
    }

    /// Levels halved rounding up (300 x 200 down to 38 x 25) keep their stored tiles at every scale: 75 / 38 is no
    /// power of two.
    @Test func everyLevelHalvedRoundingUpHasItsStoredTiles() throws {
        let (plan, bytes) = try buildTIFF(format: .jpeg, levels: .pages)
        let tiles = try #require(try ImageSource(bytes: bytes).storedJPEGTiles())
        for level in plan.levels {
            let size = Size(width: min(64, level.size.width), height: min(64, level.size.height))
            #expect(try tiles.jpeg(scale: level.scaleFactor, column: 0, row: 0, size: size) != nil, "1/\(level.scaleFactor)")
        }
        #expect(plan.levels.map(\.scaleFactor) == [1, 2, 4, 8])
    }

    /// The levels and tile places the walk reads from the directories' bytes are those libtiff reads.
    @Test(arguments: [(PyramidalTIFFSink.LevelStorage.pages, false), (.pages, true), (.subIFDs, false)])
    func theDirectoryWalkReadsWhatLibTIFFReads(storage: PyramidalTIFFSink.LevelStorage, big: Bool) throws {
        let (plan, bytes) = try buildTIFF(format: .jpeg, levels: storage, classicLimit: big ? 0 : UInt64(UInt32.max))
        let input = ImageInput.bytes(bytes, name: "pyramid.tif")
        let file = try TIFFFile(reading: input, budget: .default)
        var index = StoredTileReader.Index()
        let pyramid = TIFFPyramid(file.directories, full: plan.levels[0].size) { index.visit($0, fields: $1) }
        #expect(pyramid.levels.map(\.size) == plan.levels.map(\.size))
        let tiles = try #require(StoredTileReader(input: input, index: index, pyramid: pyramid))
        #expect(tiles.levels.map(\.size) == plan.levels.map(\.size))
        #expect(tiles.levels.map(\.offsets.count) == plan.levels.map(\.tileCount))
        for (level, stored) in zip(pyramid.levels, tiles.levels) {
            switch level.location {
            case let .page(page): try file.selectPage(page)
            case let .subIFD(offset): try file.selectSubIFD(at: offset)
            }
            #expect(file.u32(256) == UInt32(level.size.width) && file.u32(257) == UInt32(level.size.height))
            for tile in stored.offsets.indices {
                let range = file.byteRange(ofBlock: UInt32(tile))
                #expect(range.offset == stored.offsets[tile] && range.count == stored.byteCounts[tile])
            }
        }
    }

    /// A YCbCr JPEG TIFF storing a plane per tile (PlanarConfiguration 2) has no whole tiles to send as stored, so
    /// its index is empty; the same file with every sample in each tile (1) has one.
    @Test func tilesOfOnePlaneEachAreNotSentAsStored() throws {
        for planar: UInt64 in [1, 2] {
            let tiles = planar == 1 ? 4 : 12, tileBytes = 16, start = 8 + tiles * tileBytes
            var directory = TIFFDirectory()
            directory.add(.imageWidth, .long, [32])
            directory.add(.imageLength, .long, [32])
            directory.add(.bitsPerSample, .short, [8, 8, 8])
            directory.add(.compression, .short, [7])
            directory.add(.photometric, .short, [6])
            directory.add(.samplesPerPixel, .short, [3])
            directory.add(.planarConfiguration, .short, [planar])
            directory.add(.tileWidth, .short, [16])
            directory.add(.tileLength, .short, [16])
            directory.add(.tileOffsets, .long, (0..<tiles).map { UInt64(8 + $0 * tileBytes) })
            directory.add(.tileByteCounts, .long, [UInt64](repeating: UInt64(tileBytes), count: tiles))
            var header = ByteWriter()
            header.bytes = [0x49, 0x49, 42, 0]
            header.u32(UInt32(start))
            let tile: [UInt8] = [0xFF, 0xD8] + [UInt8](repeating: 0, count: tileBytes - 4) + [0xFF, 0xD9]
            let bytes = header.bytes + Array([[UInt8]](repeating: tile, count: tiles).joined())
                + directory.serialized(at: UInt64(start), next: 0, .classic)
            let stored = try ImageSource(bytes: bytes).storedJPEGTiles()
            #expect((stored != nil) == (planar == 1), "PlanarConfiguration \(planar)")
        }
    }

    /// A directory claiming more tiles than an Int counts (4 billion pixels square in 1-pixel tiles) is left out of
    /// the index, where multiplying its columns by its rows trapped.
    @Test func aLevelOfMoreTilesThanAnIntCountsIsLeftOut() throws {
        let side = UInt64(UInt32.max)
        var directory = TIFFDirectory()
        directory.add(.imageWidth, .long, [side])
        directory.add(.imageLength, .long, [side])
        directory.add(.bitsPerSample, .short, [8])
        directory.add(.compression, .short, [7])
        directory.add(.photometric, .short, [1])
        directory.add(.tileWidth, .short, [1])
        directory.add(.tileLength, .short, [1])
        directory.add(.tileOffsets, .long, [8])
        directory.add(.tileByteCounts, .long, [8])
        let bytes: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0] + directory.serialized(at: 8, next: 0, .classic)
        let fields = try #require(directoryReader(bytes)?.directory(at: 8))
        var index = StoredTileReader.Index()
        index.visit(TIFFPyramid.Level(size: Size(width: Int(side), height: Int(side)), location: .page(0)), fields: fields)
    }

    @Test func pyramidalTIFFSubIFDsHangOffTheFirstDirectory() throws {
        let (plan, bytes) = try buildTIFF(format: .png, pixelFormat: .rgba8, levels: .subIFDs)
        let reader = try #require(directoryReader(bytes))
        let first = try #require(reader.directory(at: reader.firstOffset))
        #expect(first.next == 0)
        let subIFDs = first.integers(330) ?? []
        #expect(subIFDs.count == plan.levels.count - 1)
        for (level, offset) in zip(plan.levels.dropFirst(), subIFDs) {
            let directory = try #require(reader.directory(at: offset))
            #expect(directory.integers(254) == [1])
            #expect(directory.integers(256) == [UInt64(level.size.width)])
            #expect(directory.integers(259) == [8] && directory.integers(317) == [2])
            #expect(directory.integers(277) == [4] && directory.integers(338) == [2])
        }
    }

    @Test func bigTIFFDirectoriesUseEightByteCountsAndOffsets() throws {
        var directory = TIFFDirectory()
        directory.add(.tileOffsets, .offset, [16, 1 << 33, 7])
        directory.add(.imageWidth, .long, [70_000])
        directory.add(.bitsPerSample, .short, [8, 8, 8])
        for (variant, big) in [(TIFFDirectory.Variant.classic, false), (.big, true)] {
            let start = 100
            let header: [UInt8] = big ? [0x49, 0x49, 43, 0, 8, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0] : [0x49, 0x49, 42, 0, 100, 0, 0, 0]
            let bytes = header + [UInt8](repeating: 0, count: start - header.count)
                + directory.serialized(at: UInt64(start), next: 4242, variant)
            #expect(bytes.count - start == directory.byteCount(variant))
            let parsed = try #require(directoryReader(bytes)?.directory(at: UInt64(start)))
            #expect(parsed.integers(256) == [70_000])
            #expect(parsed.integers(258) == [8, 8, 8])
            #expect(parsed.integers(324) == (big ? [16, 1 << 33, 7] : [16, 0, 7]), "classic offsets are 32 bits")
            #expect(parsed.next == 4242)
            let firstTag = Int(bytes[start + (big ? 8 : 2)]) | Int(bytes[start + (big ? 9 : 3)]) << 8
            #expect(firstTag == 256, "entries are sorted by tag")
        }
    }
}
