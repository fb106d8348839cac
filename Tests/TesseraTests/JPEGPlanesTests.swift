import Foundation
import Testing
@testable import Tessera

/// A JPEG's YCbCr planes decoded, resampled and encoded with no colour conversion and chroma at its own size,
/// against the same work done on RGB pixels (Tessera's decoder, `ResamplingReader`); the planes' layout at each
/// sampling and DCT scale; other colour spaces left to the pixel path; damaged data a typed error.
@Suite struct JPEGPlanesTests {
    /// A photo-like `width` x `height` JPEG at quality 95.
    private func jpeg(width: Int, height: Int, format: PixelFormat = .rgb8,
                      subsampling: EncodeOptions.Subsampling = .s420, progressive: Bool = false) throws -> [UInt8] {
        var options = EncodeOptions()
        options.quality = 95
        options.subsampling = subsampling
        options.progressive = progressive
        return try ImageWriter.encode(TestImages.gradient(width: width, height: height, format: format), as: .jpeg,
                                      options: options)
    }

    private func planes(_ bytes: [UInt8], scale: Int = 1) throws -> JPEGPlanes {
        try #require(try JPEGPlanes(decoding: .bytes(bytes, name: "tile.jpg"), scale: scale, budget: .default))
    }

    @Test func planesHaveEachComponentsSizeAndSampling() throws {
        let bytes = try jpeg(width: 107, height: 93)
        let full = try planes(bytes)
        #expect(full.size == Size(width: 107, height: 93))
        #expect(full.planes.map { [$0.width, $0.height] } == [[107, 93], [54, 47], [54, 47]])
        #expect(full.planes.map(\.pixelsPerSample.x) == [1, 2, 2])
        #expect(full.planes.allSatisfy { $0.stride % 8 == 0 && $0.offset + $0.stride * $0.rows <= full.samples.count })
        // At 1/2 libjpeg scales chroma's IDCT less than luma's, so chroma comes out at the luma's size.
        let half = try planes(bytes, scale: 2)
        #expect(half.size == Size(width: 54, height: 47))
        #expect(half.planes.map { [$0.width, $0.height] } == [[54, 47], [54, 47], [54, 47]])
        #expect(half.planes.map(\.pixelsPerSample.y) == [1, 1, 1])
        let gray = try planes(try jpeg(width: 30, height: 20, format: .gray8))
        #expect(gray.planes.count == 1)
        let sharp = try planes(try jpeg(width: 30, height: 20, subsampling: .s444))
        #expect(sharp.planes.map(\.pixelsPerSample.x) == [1, 1, 1])
    }

    /// Asked for its first rows, a decode stops after the MCU row holding them, with the same samples as a whole
    /// decode's.
    @Test func rowsBelowThoseWantedAreNotDecoded() throws {
        let bytes = try jpeg(width: 107, height: 93)
        let whole = try planes(bytes)
        let top = try #require(try JPEGPlanes(decoding: .bytes(bytes, name: "tile.jpg"), scale: 1, rows: 20, budget: .default))
        #expect(top.size == Size(width: 107, height: 32))
        #expect(top.planes.map(\.height) == [32, 16, 16])
        for (plane, wholePlane) in zip(top.planes, whole.planes) {
            for row in 0..<plane.height {
                #expect(top.samples[plane.offset + row * plane.stride..<plane.offset + row * plane.stride + plane.width]
                    == whole.samples[wholePlane.offset + row * wholePlane.stride..<wholePlane.offset + row * wholePlane.stride
                        + wholePlane.width], "row \(row)")
            }
        }
    }

    /// Asked for a narrow run of its columns, a decode turns only their blocks into samples (cut to them, chroma
    /// repeated and taken back): the same samples as a whole decode's there, at every sampling and with its rows cut
    /// short too, progressive or not, and zeros beyond the blocks holding them. Columns over a quarter of the width
    /// are decoded whole.
    @Test func columnsWantedAreTheWholeDecodesSamples() throws {
        let cases: [(format: PixelFormat, subsampling: EncodeOptions.Subsampling, columns: Range<Int>, rows: Int?,
                     progressive: Bool)] = [
            (.rgb8, .s420, 40..<60, nil, false), (.rgb8, .s420, 250..<256, 20, false), (.rgb8, .s444, 9..<70, nil, false),
            (.gray8, .s420, 100..<101, 50, false), (.rgb8, .s420, 131..<180, 70, true)]
        for (format, subsampling, columns, rows, progressive) in cases {
            let bytes = try jpeg(width: 256, height: 96, format: format, subsampling: subsampling, progressive: progressive)
            let whole = try planes(bytes)
            let cut = try #require(try JPEGPlanes(decoding: .bytes(bytes, name: "tile.jpg"), scale: 1, rows: rows,
                                                  columns: columns, budget: .default))
            #expect(cut.planes.map(\.stride) == whole.planes.map(\.stride) && cut.size.width == 256)
            for (plane, wholePlane) in zip(cut.planes, whole.planes) {
                let across = Int(plane.pixelsPerSample.x)
                let samples = columns.lowerBound / across..<(columns.upperBound + across - 1) / across
                for row in 0..<plane.height {
                    let line = plane.offset + row * plane.stride, wholeLine = wholePlane.offset + row * wholePlane.stride
                    #expect(cut.samples[line + samples.lowerBound..<line + samples.upperBound]
                        == whole.samples[wholeLine + samples.lowerBound..<wholeLine + samples.upperBound],
                            "\(format) \(subsampling) \(columns), row \(row)")
                    let left = max(0, samples.lowerBound - 16 / across)
                    #expect(cut.samples[line..<line + left].allSatisfy { $0 == 0 },
                            "\(format) \(subsampling) \(columns): columns left of the cut's blocks not decoded")
                }
            }
        }
        let bytes = try jpeg(width: 256, height: 96)
        let wide = try #require(try JPEGPlanes(decoding: .bytes(bytes, name: "tile.jpg"), scale: 1, columns: 0..<65,
                                               budget: .default))
        #expect(wide.samples == (try planes(bytes)).samples, "65 of 256 columns: the whole width decoded")
    }

    /// Stored tiles laid side by side (`JPEGPlanes.stored`) are each decoded straight into their place: the same
    /// samples there as the tile's own decode of the rows and columns asked of it (whole, or cut to a narrow run of
    /// columns), across tile rows and columns, with the last tile row cut short; a column of tiles cut to a few
    /// columns lays out only those (from 96, the iMCU column holding 100). Tiles whose side is no whole number
    /// of iMCU rows (40 pixels at 4:2:0) are left to the pixels: their blocks would overlap their neighbours'.
    @Test func storedTilesAreDecodedInTheirPlaces() throws {
        let side = 64
        // Each region, and the columns laid out: whole tiles, or a column of tiles' few columns.
        for (region, columnsLaidOut) in [(Rect(x: 100, y: 20, width: 30, height: 60), 64..<192),
                                         (Rect(x: 60, y: 70, width: 5, height: 50), 0..<128),
                                         (Rect(x: 100, y: 10, width: 5, height: 110), 96..<112),
                                         (Rect(x: 0, y: 0, width: 192, height: 128), 0..<192)] {
            let tiles = try TestTiles(image: TestImages.gradient(width: 200, height: 130), side: side)
            let (laid, covered) = try #require(try JPEGPlanes.stored(tiles, scale: 1, region: region, budget: .default,
                                                                   name: "tiles"))
            #expect(covered.x..<covered.maxX == columnsLaidOut, "\(region)")
            for row in region.y / side...(region.maxY - 1) / side {
                for column in region.x / side...(region.maxX - 1) / side {
                    let columns = max(0, region.x - column * side)..<min(side, region.maxX - column * side)
                    let rows = min(side, region.maxY - row * side)
                    let tile = try #require(try JPEGPlanes(decoding: .bytes(tiles.tiles[row][column], name: "tile"), scale: 1,
                                                           rows: rows, columns: columns, budget: .default))
                    for (plane, place) in zip(tile.planes, laid.planes) {
                        let (across, down) = (Int(plane.pixelsPerSample.x), Int(plane.pixelsPerSample.y))
                        let samples = columns.lowerBound / across..<(columns.upperBound + across - 1) / across
                        let x = (column * side - covered.x) / across
                        for line in 0..<(rows + down - 1) / down {
                            let from = plane.offset + line * plane.stride
                            let to = place.offset + ((row * side - covered.y) / down + line) * place.stride + x
                            #expect(laid.samples[to + samples.lowerBound..<to + samples.upperBound]
                                == tile.samples[from + samples.lowerBound..<from + samples.upperBound],
                                    "\(region): tile \(column), \(row), line \(line)")
                        }
                    }
                }
            }
        }
        let odd = try TestTiles(image: TestImages.gradient(width: 100, height: 100), side: 40)
        #expect(try JPEGPlanes.stored(odd, scale: 1, region: Rect(x: 30, y: 30, width: 20, height: 20), budget: .default,
                                      name: "tiles") == nil)
    }

    /// An image's `side`-pixel tiles as 4:2:0 JPEGs, each whole (past the image's edge, its last pixels repeated), as
    /// a pyramidal TIFF stores them: a level's stored tiles without the file.
    private struct TestTiles: StoredJPEGTiles {
        let tileSize: Int, size: Size
        /// Row by row, column by column.
        let tiles: [[[UInt8]]]

        init(image: ImageBuffer, side: Int) throws {
            var options = EncodeOptions()
            options.quality = 90
            tileSize = side
            size = image.size
            tiles = try (0..<(image.height + side - 1) / side).map { row in
                try (0..<(image.width + side - 1) / side).map { column in
                    var tile = ImageBuffer(width: side, height: side, format: image.format)
                    for y in 0..<side {
                        for x in 0..<side {
                            let source = (min(row * side + y, image.height - 1) * image.width
                                + min(column * side + x, image.width - 1)) * 3
                            for channel in 0..<3 { tile.bytes[(y * side + x) * 3 + channel] = image.bytes[source + channel] }
                        }
                    }
                    return try ImageWriter.encode(tile, as: .jpeg, options: options)
                }
            }
        }

        func jpeg(scale: Int, column: Int, row: Int, size: Size) throws -> [UInt8]? { nil }
        func storedJPEG(scale: Int, column: Int, row: Int) throws -> (jpeg: [UInt8], content: Size)? {
            guard scale == 1 else { return nil }
            return (tiles[row][column], Size(width: min(tileSize, size.width - column * tileSize),
                                             height: min(tileSize, size.height - row * tileSize)))
        }
        func storedLevelSize(scale: Int) -> Size? { scale == 1 ? size : nil }
        var indexByteCount: Int { 0 }
    }

    /// How far the planar path's answer and the pixel path's (the JPEG decoded to RGB at `scale`, its `region` of
    /// the decoded pixels read, its last column or row repeated by `padding`, resampled to `size` and encoded alike)
    /// are from a full-precision render (the original pixels the JPEG was made of, their region resampled to
    /// `size` in floats): mean differences per sample.
    private func differences(_ original: ImageBuffer, subsampling: EncodeOptions.Subsampling = .s420, scale: Int = 1,
                             region: Rect? = nil, padding: Size = Size(width: 0, height: 0), size: Size) throws
        -> (planar: Double, pixels: Double) {
        var options = EncodeOptions()
        options.quality = 95
        options.subsampling = subsampling
        let bytes = try ImageWriter.encode(original, as: .jpeg, options: options)
        let decodedSize = Size(width: (original.width + scale - 1) / scale, height: (original.height + scale - 1) / scale)
        let region = region ?? Rect(decodedSize)
        let extent = Size(width: region.width + padding.width, height: region.height + padding.height)
        let planar = try planes(bytes, scale: scale)
            .resampled(region: region, extent: extent, to: size, subsampling: subsampling, kernel: .lanczos3)
            .encoded(options: options, name: "answer.jpg")
        var pixels: any ImageReader = BufferReader(TestImages.crop(
            try ImageSource(bytes: bytes, name: "tile.jpg").makeReader(ReadOptions(scale: scale)).readAll(), region))
        pixels = try ResamplingReader(source: EdgeExtendingReader(source: pixels, size: extent), size: size)
        let viaPixels = try ImageWriter.encode(pixels, as: .jpeg, options: options)
        // The original's pixels that the region and its repeated edge stand for, at full resolution.
        let covered = Rect(x: region.x * scale, y: region.y * scale,
                           width: min(original.width - region.x * scale, extent.width * scale),
                           height: min(original.height - region.y * scale, extent.height * scale))
        let truth = try ResamplingReader(source: BufferReader(TestImages.crop(original, covered)), size: size).readAll()
        func difference(_ answer: [UInt8]) throws -> Double {
            let decoded = try ImageSource(bytes: answer, name: "answer.jpg").makeReader().readAll()
            #expect(decoded.size == size && decoded.format == truth.format)
            return TestImages.meanDifference(decoded, truth)
        }
        return (try difference(planar), try difference(viaPixels))
    }

    /// Thumbnails, a shrink after 1/2 by DCT scaling, an edge tile whose last column is repeated and rows stretched,
    /// a region at odd offsets, 4:4:4 and gray sources, a shrink by 2.6 at full size, shrinks after 1/4 and 1/8: the
    /// planar path is as close to a full-precision render as the pixel path, or closer (chroma is resampled once,
    /// at its own size, not upsampled, resampled and averaged down again). Measured (planar, pixels): (1.09, 1.16), (1.36, 1.41),
    /// (1.50, 1.51), (1.13, 1.22), (0.81, 0.83), (0.33, 0.33), (1.38, 1.47), (3.71, 4.56), (13.27, 13.89). Chroma
    /// decoded at 1/2 is luma's size, twice what a 4:2:0 answer keeps: it is averaged 2 x 2 before the kernel
    /// (`BoxShrink`; the kernel alone: 1.30, 3.46, 12.66). The seventh is the thumbnail of 90 a server makes from a
    /// tile it keeps decoded at its own size: averaged 2 x 2, then the kernel, rather than decoded at 1/2.
    @Test func resampledPlanesAreAsCloseToAFullRenderAsResampledPixels() throws {
        let image = TestImages.gradient(width: 236, height: 164)
        var cases = [try differences(image, size: Size(width: 125, height: 87)),
                     try differences(image, scale: 2, size: Size(width: 90, height: 63)),
                     try differences(TestImages.gradient(width: 107, height: 256), padding: Size(width: 1, height: 0),
                                     size: Size(width: 108, height: 258)),
                     try differences(image, region: Rect(x: 33, y: 17, width: 151, height: 101), size: Size(width: 77, height: 51)),
                     try differences(image, subsampling: .s444, size: Size(width: 125, height: 87))]
        cases.append(try differences(TestImages.gradient(width: 236, height: 164, format: .gray8),
                                     size: Size(width: 125, height: 87)))
        cases.append(try differences(image, size: Size(width: 90, height: 63)))
        cases += [try differences(image, scale: 4, size: Size(width: 40, height: 28)),
                  try differences(image, scale: 8, size: Size(width: 20, height: 14))]
        for (index, (planar, pixels)) in cases.enumerated() {
            // libjpeg's DCT scaling by 1/4 and 1/8 aliases the ripple, through either path: no bound of its own.
            #expect(planar < pixels + 0.05 && (planar < 2 || index >= 7),
                    "case \(index): \(planar) from a full render, \(pixels) through pixels")
        }
    }

    /// A length kept is each sample as decoded, and a repeated last column or row is that column or row again:
    /// at the JPEG's corner, and from inside it (each plane's window starting past its first sample).
    @Test func aKeptLengthCopiesAndPaddingRepeatsTheLastColumnAndRow() throws {
        let source = try planes(try jpeg(width: 107, height: 64))
        for (region, size) in [(Rect(x: 0, y: 0, width: 107, height: 64), Size(width: 108, height: 64)),
                               (Rect(x: 16, y: 8, width: 90, height: 56), Size(width: 91, height: 57))] {
            let answer = source.resampled(region: region, extent: size, to: size, subsampling: .s420, kernel: .lanczos3)
            for (plane, out) in zip(source.planes, answer.planes) {
                let (stepX, stepY) = (Int(plane.pixelsPerSample.x), Int(plane.pixelsPerSample.y))
                let (left, top) = (region.x / stepX, region.y / stepY)
                let (columns, rows) = ((region.width + stepX - 1) / stepX, (region.height + stepY - 1) / stepY)
                for row in 0..<out.height {
                    let from = plane.offset + (top + min(row, rows - 1)) * plane.stride + left
                    let expected = (0..<out.width).map { source.samples[from + min($0, columns - 1)] }
                    let to = Array(answer.samples[out.offset + row * out.stride..<out.offset + row * out.stride + out.width])
                    #expect(to == expected, "\(region), row \(row)")
                }
            }
        }
    }

    /// Weights made for one call (a thumbnail's, `keepingWeights` false) are the weights kept for later calls: the
    /// same samples, 4:2:0 (the second chroma plane taking the first's) and 4:4:4, shrinking and stretching.
    @Test func weightsMadeForOneCallResampleAsKeptOnesDo() throws {
        for subsampling in [EncodeOptions.Subsampling.s420, .s444] {
            let source = try planes(try jpeg(width: 107, height: 64, subsampling: subsampling))
            for (region, size) in [(Rect(x: 0, y: 0, width: 107, height: 64), Size(width: 83, height: 49)),
                                   (Rect(x: 5, y: 3, width: 90, height: 51), Size(width: 131, height: 77))] {
                let made = source.resampled(region: region, extent: region.size, to: size, subsampling: subsampling,
                                            kernel: .lanczos3, keepingWeights: false)
                let kept = source.resampled(region: region, extent: region.size, to: size, subsampling: subsampling,
                                            kernel: .lanczos3)
                #expect(made.samples == kept.samples, "\(subsampling), \(region) to \(size)")
            }
        }
    }

    /// A shrink by two is averaged in 2 x 2 boxes of the region's own samples, never of those past it: a sliver one
    /// pixel across, its column repeated to two (a level halved rounding down lost the image's last), shrunk to one
    /// pixel across and half its rows, is each plane's column of the region averaged two rows at a time.
    @Test func aShrinkByTwoAveragesTheRegionsOwnSamples() throws {
        let source = try planes(try jpeg(width: 107, height: 64))
        let region = Rect(x: 16, y: 8, width: 1, height: 32)
        let answer = source.resampled(region: region, extent: Size(width: 2, height: 32), to: Size(width: 1, height: 16),
                                      subsampling: .s420, kernel: .lanczos3)
        for (plane, out) in zip(source.planes, answer.planes) {
            let (stepX, stepY) = (Int(plane.pixelsPerSample.x), Int(plane.pixelsPerSample.y))
            let (column, top) = (region.x / stepX, region.y / stepY)
            for row in 0..<out.height {
                let upper = Int(source.samples[plane.offset + (top + 2 * row) * plane.stride + column])
                let lower = Int(source.samples[plane.offset + (top + 2 * row + 1) * plane.stride + column])
                #expect(Int(answer.samples[out.offset + row * out.stride]) == (upper + lower + 1) / 2,
                        "row \(row) of a plane sampled every \(stepX) pixels")
            }
        }
    }

    /// A JPEG claiming more pixels than a tile can have is nil too, for the pixel path's strips: its header says
    /// 4097 x 4097, its data is a 16 x 16 image's.
    @Test func aJPEGLargerThanATileHasNoPlanes() throws {
        var bytes = try jpeg(width: 16, height: 16)
        let frame = try #require((0..<bytes.count - 8).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        bytes.replaceSubrange(frame + 5..<frame + 9, with: [0x10, 0x01, 0x10, 0x01])
        #expect(try JPEGPlanes(decoding: .bytes(bytes, name: "claims.jpg"), scale: 1, budget: .default) == nil)
    }

    /// A CMYK JPEG has no YCbCr planes: nil, for the pixel path to convert.
    @Test func aJPEGThatIsNotYCbCrOrGrayHasNoPlanes() throws {
        let folder = try PillowOracle.fixtures(files: [:], script: """
            Image.new("CMYK", (40, 30), (10, 20, 30, 40)).save(sys.argv[1] + "/cmyk.jpg")
            """)
        let bytes = try [UInt8](Data(contentsOf: folder.appendingPathComponent("cmyk.jpg")))
        #expect(try JPEGPlanes(decoding: .bytes(bytes, name: "cmyk.jpg"), scale: 1, budget: .default) == nil)
    }

    /// Truncated or damaged data is a `TesseraError` naming the input, never a crash or gray filler.
    @Test func damagedDataIsAnErrorNamingTheInput() throws {
        let bytes = try jpeg(width: 96, height: 80)
        #expect(throws: TesseraError.self) {
            try JPEGPlanes(decoding: .bytes(Array(bytes.prefix(bytes.count / 2)), name: "cut.jpg"), scale: 1,
                           budget: .default)
        }
        TestImages.damagedCopies(of: bytes) { damaged, label in
            do {
                _ = try JPEGPlanes(decoding: .bytes(damaged, name: "damaged.jpg"), scale: 1, budget: .default)
            } catch let error as TesseraError {
                #expect("\(error)".contains("damaged.jpg"), "\(label): \(error)")
            } catch {
                Issue.record("\(label): \(error) is not a TesseraError")
            }
        }
    }
}
