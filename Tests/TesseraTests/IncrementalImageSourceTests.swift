import Foundation
import Testing
@testable import Tessera

/// `IncrementalImageSource` fed files in random chunk sizes: the statuses it passes through, the rows or scans or
/// passes it shows against one-shot decodes, and damaged data.
@Suite struct IncrementalImageSourceTests {
    static let photo = TestImages.gradient(width: 203, height: 157)
    static let order: [IncrementalImageSource.Status] = [.unknownType, .readingHeader, .incomplete, .complete]

    /// Feeds `bytes` in chunks of 1 to `maxChunk` bytes (seeded), the last update final, calling `check` after
    /// each; returns the distinct statuses in the order seen.
    @discardableResult
    static func feed(_ bytes: [UInt8], seed: UInt64, maxChunk: Int, to source: IncrementalImageSource,
                     check: (_ received: Int) throws -> Void = { _ in }) rethrows -> [IncrementalImageSource.Status] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1, received = 0
        var seen: [IncrementalImageSource.Status] = []
        while received < bytes.count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            received = min(bytes.count, received + 1 + Int(state >> 33) % maxChunk)
            source.update(data: bytes[..<received], isFinal: received == bytes.count)
            if seen.last != source.status { seen.append(source.status) }
            try check(received)
        }
        return seen
    }

    /// Whether `statuses` follow `order`, skipping some (large chunks) but never going back, and end complete.
    static func inOrder(_ statuses: [IncrementalImageSource.Status]) -> Bool {
        let indices = statuses.compactMap { order.firstIndex(of: $0) }
        return indices.count == statuses.count && zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }
            && statuses.last == .complete
    }

    static func oneShot(_ bytes: [UInt8]) throws -> (ImageBuffer, ImageProperties) {
        let source = try ImageSource(bytes: bytes)
        return (try source.makeReader().readAll(), source.properties)
    }

    static func encode(_ image: ImageBuffer, as format: ImageFormat, progressive: Bool = false,
                       lossless: Bool = false) throws -> [UInt8] {
        var options = EncodeOptions()
        options.progressive = progressive
        options.lossless = lossless
        return try ImageWriter.encode(image, as: format, options: options)
    }

    /// The largest difference between two 8-bit images' samples (`TestImages.maxDifference` without its per-pixel
    /// arrays, which makes a difference to this suite's time in debug builds).
    static func maxDifference(_ a: ImageBuffer, _ b: ImageBuffer) -> Int {
        precondition(a.bytes.count == b.bytes.count && a.format.bitDepth == 8)
        return a.bytes.withUnsafeBufferPointer { p in
            b.bytes.withUnsafeBufferPointer { q in
                var worst = 0
                for index in 0..<p.count { worst = max(worst, abs(Int(p[index]) - Int(q[index]))) }
                return worst
            }
        }
    }

    /// A TIFF of `image`, written through a file (TIFF is not encoded in memory).
    static func tiff(_ image: ImageBuffer) throws -> [UInt8] {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestImages.write(image, to: folder + "/image.tif")
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/image.tif")))
    }

    /// Checks that the first `rows` rows of two images are identical.
    static func rowsMatch(_ partial: ImageBuffer, _ full: ImageBuffer, rows: Int) -> Bool {
        partial.bytes.withUnsafeBytes { a in
            full.bytes.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, rows * full.bytesPerRow) == 0 }
        }
    }

    /// Checks statuses, properties, the rows of every partial image, and the final image, for a top-down format.
    static func checkTopDown(_ bytes: [UInt8], seeds: [UInt64] = [1, 2, 3], maxChunks: [Int]) throws {
        let (full, properties) = try oneShot(bytes)
        for seed in seeds {
            for maxChunk in maxChunks {
                let source = IncrementalImageSource(name: "fed")
                var lastRows = 0
                let seen = try feed(bytes, seed: seed, maxChunk: maxChunk, to: source) { received in
                    // With small chunks, look at every 37th update: each look copies the whole frame.
                    guard maxChunk > 100 || received % 37 == 0, let image = try source.makeImage() else { return }
                    #expect(image.validRows >= lastRows)
                    lastRows = image.validRows
                    #expect(rowsMatch(image.pixels, full, rows: image.validRows), "seed \(seed), at \(received) bytes")
                }
                #expect(inOrder(seen) && (seen == order || maxChunk > 12), "statuses \(seen)")
                var expected = properties
                expected.fileSize = bytes.count
                #expect(source.properties == expected)
                let final = try #require(try source.makeImage())
                #expect(final.isComplete && final.validRows == full.height && final.pixels.bytes == full.bytes)
            }
        }
    }

    @Test func baselineJPEGGivesTheRowsDecodedSoFar() throws {
        let bytes = try Self.encode(Self.photo, as: .jpeg)
        try Self.checkTopDown(bytes, seeds: [1], maxChunks: [1])
        try Self.checkTopDown(bytes, maxChunks: [64, 4096, 65_536])
    }

    @Test func grayJPEGGivesTheRowsDecodedSoFar() throws {
        let gray = TestImages.gradient(width: 97, height: 61, format: .gray8)
        try Self.checkTopDown(try Self.encode(gray, as: .jpeg), maxChunks: [300])
    }

    @Test(arguments: [PixelFormat.rgb8, .rgba8, PixelFormat(.gray, bitDepth: 16), PixelFormat(.rgba, bitDepth: 16)])
    func plainPNGGivesTheRowsDecodedSoFar(format: PixelFormat) throws {
        let bytes = try Self.encode(TestImages.make(width: 120, height: 90, format: format), as: .png)
        try Self.checkTopDown(bytes, seeds: [4], maxChunks: [1])
        try Self.checkTopDown(bytes, maxChunks: [100, 65_536])
    }

    @Test(arguments: [false, true])
    func webPGivesTheRowsDecodedSoFar(lossless: Bool) throws {
        let bytes = try Self.encode(TestImages.gradient(width: 300, height: 260), as: .webp, lossless: lossless)
        try Self.checkTopDown(bytes, maxChunks: [50, 1000, 65_536])
    }

    @Test func progressiveJPEGShowsTheFrameAtEachCompleteScan() throws {
        let bytes = try Self.encode(Self.photo, as: .jpeg, progressive: true)
        let starts = Self.scanStarts(bytes)
        #expect(starts.count >= 6)
        // The independent oracle: libjpeg's one-shot decode of the file cut before scan k + 1, with an EOI.
        let afterScan = try (1...starts.count).map { scans -> ImageBuffer in
            let cut = scans < starts.count ? Array(bytes[..<starts[scans]]) + [0xFF, 0xD9] : bytes
            return try Self.oneShot(cut).0
        }
        for (seed, maxChunk) in [(1, 1), (2, 97), (3, 4096), (4, 65_536)] as [(UInt64, Int)] {
            let source = IncrementalImageSource()
            var shown = 0
            let seen = try Self.feed(bytes, seed: seed, maxChunk: maxChunk, to: source) { received in
                // With 1-byte chunks, look at every 50th update only: each look renders the whole frame.
                guard maxChunk > 1 || received % 50 == 0, let image = try source.makeImage() else { return }
                let scans = try #require(image.passes)
                #expect(scans >= shown)
                shown = scans
                #expect(image.validRows == (scans > 0 ? image.pixels.height : 0))
                if scans > 0 {
                    #expect(Self.maxDifference(image.pixels, afterScan[scans - 1]) <= 1,
                            "scan \(scans) at \(received) bytes")
                }
            }
            #expect(Self.inOrder(seen), "statuses \(seen): \(String(describing: source.error))")
            let final = try #require(try source.makeImage())
            #expect(final.isComplete && final.passes == starts.count && final.pixels.bytes == afterScan.last!.bytes)
            #expect(source.properties?.isProgressive == true)
        }
    }

    @Test(.enabled(if: TestImages.run("djpeg", ["-version"]) != nil, "needs libjpeg-turbo's cjpeg and djpeg"))
    func progressiveScansMatchDjpegOnTheFileCutAfterThem() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let photo = Self.photo
        try Data(Array("P6 \(photo.width) \(photo.height) 255\n".utf8) + photo.bytes)
            .write(to: URL(fileURLWithPath: folder + "/photo.ppm"))
        #expect(TestImages.run("cjpeg", ["-progressive", "-quality", "80", "-outfile", folder + "/p.jpg",
                                         folder + "/photo.ppm"]) == 0)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/p.jpg")))
        let starts = Self.scanStarts(bytes)
        // djpeg's decode of the file cut before scan k + 1 (an EOI added), read from its PPM.
        let afterScan = try (1...starts.count).map { scans -> [UInt8] in
            let cut = scans < starts.count ? Array(bytes[..<starts[scans]]) + [0xFF, 0xD9] : bytes
            try Data(cut).write(to: URL(fileURLWithPath: folder + "/cut.jpg"))
            #expect(TestImages.run("djpeg", ["-pnm", "-outfile", folder + "/cut.ppm", folder + "/cut.jpg"]) == 0)
            let ppm = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/cut.ppm")))
            return Array(ppm.suffix(photo.width * photo.height * 3))
        }
        let source = IncrementalImageSource()
        var scansSeen = Set<Int>()
        try Self.feed(bytes, seed: 7, maxChunk: 100, to: source) { _ in
            guard let image = try source.makeImage(), let scans = image.passes, scans > 0 else { return }
            scansSeen.insert(scans)
            let expected = ImageBuffer(width: photo.width, height: photo.height, format: .rgb8, bytes: afterScan[scans - 1])
            #expect(Self.maxDifference(image.pixels, expected) <= 1, "scan \(scans)")
        }
        #expect(source.status == .complete && scansSeen.count > starts.count / 2, "scans seen: \(scansSeen.sorted())")
    }

    /// The offsets of a JPEG's SOS markers, found by walking its segments and entropy-coded data.
    static func scanStarts(_ bytes: [UInt8]) -> [Int] {
        var starts: [Int] = [], offset = 2
        while offset + 4 <= bytes.count {
            let marker = bytes[offset + 1]
            if marker == 0xD9 { break }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if marker == 0xDA {
                starts.append(offset)
                offset += 2 + length
                while !(bytes[offset] == 0xFF && bytes[offset + 1] != 0 && !(0xD0...0xD7).contains(bytes[offset + 1])) {
                    offset += 1
                }
            } else {
                offset += 2 + length
            }
        }
        return starts
    }

    @Test(.enabled(if: TestImages.run(TestImages.python, ["-c", "import png"]) == 0, "needs pypng"))
    func interlacedPNGShowsTheLastCompletePassInBlocks() throws {
        let image = TestImages.make(width: 61, height: 43, format: .rgba8)
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(image.bytes).write(to: URL(fileURLWithPath: folder + "/pixels.raw"))
        let script = """
            import png, sys
            data = open(sys.argv[1] + '/pixels.raw', 'rb').read()
            rows = [data[y * 61 * 4:(y + 1) * 61 * 4] for y in range(43)]
            png.Writer(61, 43, greyscale=False, alpha=True, interlace=True).write(open(sys.argv[1] + '/adam7.png', 'wb'), rows)
            """
        #expect(TestImages.run(TestImages.python, ["-c", script, folder]) == 0)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/adam7.png")))
        let masks = [(7, 7), (3, 7), (3, 3), (1, 3), (1, 1), (0, 1), (0, 0)]
        let afterPass = masks.map { mask -> ImageBuffer in
            var expected = ImageBuffer(width: 61, height: 43, format: .rgba8)
            for y in 0..<43 {
                for x in 0..<61 {
                    let from = image.offset(ofRow: y & ~mask.1) + (x & ~mask.0) * 4
                    expected.bytes.replaceSubrange(expected.offset(ofRow: y) + x * 4..<expected.offset(ofRow: y) + x * 4 + 4,
                                                   with: image.bytes[from..<from + 4])
                }
            }
            return expected
        }
        for (seed, maxChunk) in [(1, 1), (2, 64), (3, 65_536)] as [(UInt64, Int)] {
            let source = IncrementalImageSource()
            var shown = 0
            let seen = try Self.feed(bytes, seed: seed, maxChunk: maxChunk, to: source) { received in
                guard maxChunk > 1 || received % 37 == 0, let partial = try source.makeImage(),
                      let passes = partial.passes else { return }
                #expect(passes >= shown)
                shown = passes
                if passes > 0 {
                    #expect(Self.rowsMatch(partial.pixels, afterPass[passes - 1], rows: partial.pixels.height), "pass \(passes)")
                }
            }
            #expect(Self.inOrder(seen) && (seen == Self.order || maxChunk > 12), "statuses \(seen)")
            #expect(source.properties?.isProgressive == true)
            #expect(try source.makeImage()?.pixels.bytes == image.bytes)
        }
    }

    @Test func wholeFileFormatsDecodeOnTheLastUpdate() throws {
        let bytes = try Self.tiff(Self.photo)
        let source = IncrementalImageSource()
        let seen = try Self.feed(bytes, seed: 5, maxChunk: 900, to: source)
        // The header is read as soon as the first bytes hold it, but no pixels are decoded before the last update.
        #expect(Self.inOrder(seen) && !seen.contains(.unknownType))
        #expect(try source.makeImage()?.pixels.bytes == Self.photo.bytes)
    }

    @Test func unknownDataIsUnknownUntilTwelveBytesThenInvalid() {
        let source = IncrementalImageSource()
        let garbage = [UInt8](repeating: 0x42, count: 40)
        source.update(data: garbage[..<11], isFinal: false)
        #expect(source.status == .unknownType)
        source.update(data: garbage, isFinal: false)
        #expect(source.status == .invalidData)
        #expect(source.error == .unknownFormat(path: "<data>"))
    }

    @Test func reducedImageFitsMaxPixelSize() throws {
        let source = IncrementalImageSource()
        let bytes = try Self.encode(Self.photo, as: .jpeg)
        source.update(data: bytes[..<(bytes.count / 2)], isFinal: false)
        let image = try #require(try source.makeImage(maxPixelSize: 64))
        #expect(image.pixels.size == Size(width: 64, height: 49))
        let full = try #require(try source.makeImage())
        #expect(image.validRows < full.validRows * 49 / 157 + 1)
    }

    @Test func truncatedAndDamagedStreamsFailCleanlyAndKeepTheirImage() throws {
        let inputs = [try Self.encode(Self.photo, as: .jpeg), try Self.encode(Self.photo, as: .jpeg, progressive: true),
                      try Self.encode(Self.photo, as: .png), try Self.encode(Self.photo, as: .webp),
                      try Self.tiff(Self.photo)]
        for bytes in inputs {
            let full = try Self.oneShot(bytes).0
            TestImages.damagedCopies(of: bytes) { damaged, label in
                let source = IncrementalImageSource(name: "damaged")
                _ = try? Self.feed(damaged, seed: 9, maxChunk: max(1, damaged.count / 3), to: source)
                let truncated = label.hasPrefix("truncated")
                #expect(truncated ? [.unexpectedEOF, .invalidData].contains(source.status)
                                  : [.complete, .unexpectedEOF, .invalidData].contains(source.status), "\(label)")
                if source.status != .complete { #expect(source.error != nil) }
                let image = try? source.makeImage()
                if truncated, let image, image.passes == nil, image.pixels.size == full.size {
                    #expect(Self.rowsMatch(image.pixels, full, rows: image.validRows), "\(label)")
                }
            }
        }
    }
}
