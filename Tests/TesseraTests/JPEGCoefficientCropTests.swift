import Testing
@testable import Tessera

/// A JPEG's corner cut out of its coefficients decodes to the same pixels as the whole JPEG's corner; stretched a
/// pixel or two past its real pixels, the new pixels repeat the last real column and row.
@Suite struct JPEGCoefficientCropTests {
    private func jpeg(_ format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws -> [UInt8] {
        var options = EncodeOptions()
        options.subsampling = subsampling
        return try ImageWriter.encode(TestImages.make(width: 256, height: 256, format: format, smooth: true),
                                      as: .jpeg, options: options)
    }

    @Test(arguments: [(PixelFormat.rgb8, EncodeOptions.Subsampling.s444), (.gray8, .s444), (.rgb8, .s420)])
    func theCornerDecodesAsTheWholeImagesCorner(format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws {
        let whole = try jpeg(format, subsampling: subsampling)
        let decoded = try ImageSource(bytes: whole).makeReader().readAll()
        for size in [Size(width: 100, height: 37), Size(width: 256, height: 9), Size(width: 1, height: 1)] {
            let cropped = try JPEGCoefficientCrop.topLeft(of: whole, size: size, name: "tile")
            let corner = try ImageSource(bytes: cropped).makeReader().readAll()
            #expect(corner.size == size)
            let expected = TestImages.crop(decoded, Rect(size))
            if subsampling == .s444 {
                #expect(TestImages.maxDifference(corner, expected) == 0, "\(size)")
            } else {
                // Chroma is upsampled from its neighbours: only along the cut may it differ.
                #expect(TestImages.meanDifference(corner, expected) < 1, "\(size)")
            }
        }
    }

    /// A corner that leaves out only samples of the last MCU column and row is the JPEG itself, its frame header
    /// saying the new size: the same bytes but those four, the whole image's corner decoded (exactly, but for
    /// chroma upsampled along the cut when subsampled).
    @Test(arguments: [(PixelFormat.rgb8, EncodeOptions.Subsampling.s444), (.gray8, .s444), (.rgb8, .s420)])
    func aCornerOfTheSameBlocksIsTheJPEGRelabelled(format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws {
        let whole = try jpeg(format, subsampling: subsampling)
        let decoded = try ImageSource(bytes: whole).makeReader().readAll()
        // Subsampled, one scan interleaving all components: the MCUs are what count (16 x 16 pixels, so 241 x 247 is
        // 16 x 16 of them), though the luma of a scan of its own would be 31 blocks across, not 32.
        let size = subsampling == .s420 ? Size(width: 241, height: 247) : Size(width: 250, height: 249)
        let cropped = try JPEGCoefficientCrop.topLeft(of: whole, size: size, content: Size(width: 256, height: 256), name: "tile")
        #expect(cropped.count == whole.count && zip(cropped, whole).filter { $0 != $1 }.count <= 4)
        let corner = try ImageSource(bytes: cropped).makeReader().readAll()
        #expect(corner.size == size)
        if subsampling == .s444 {
            #expect(TestImages.maxDifference(corner, TestImages.crop(decoded, Rect(size))) == 0)
        } else {
            #expect(TestImages.meanDifference(corner, TestImages.crop(decoded, Rect(size))) < 1)
        }
        // A corner of fewer blocks is cut from the coefficients, not relabelled.
        #expect(JPEGCoefficientCrop.sameBlocks(whole, size: Size(width: 100, height: 250)) == nil)
        if subsampling == .s444 {
            #expect(JPEGCoefficientCrop.sameBlocks(whole, size: Size(width: 256, height: 247)) == nil, "31 block rows")
        }
        // A second frame header (damage): decoders read the first, so neither is relabelled.
        let frame = try #require((0..<whole.count - 1).first { whole[$0] == 0xFF && whole[$0 + 1] == 0xC0 })
        let frameLength = Int(whole[frame + 2]) << 8 | Int(whole[frame + 3])
        var twoFrames = whole
        twoFrames.insert(contentsOf: whole[frame..<frame + 2 + frameLength], at: frame)
        #expect(JPEGCoefficientCrop.sameBlocks(twoFrames, size: size) == nil)
        // A progressive JPEG's scans code one component at a time: its components' blocks must match too.
        var options = EncodeOptions()
        options.subsampling = subsampling
        options.progressive = true
        let progressive = try ImageWriter.encode(TestImages.make(width: 256, height: 256, format: format, smooth: true),
                                                 as: .jpeg, options: options)
        #expect(JPEGCoefficientCrop.sameBlocks(progressive, size: Size(width: 241, height: 247)) == nil)
        #expect(JPEGCoefficientCrop.sameBlocks(progressive, size: Size(width: 250, height: 249)) != nil)
    }

    /// An edge tile padded with black past its real 203 x 250 pixels, and a whole tile, asked for up to two pixels
    /// larger: the real pixels stay as stored (only the blocks along the new edge are made again, requantised with
    /// the same tables), the new ones repeat the last real column and row, as a stretch by those pixels would.
    @Test(arguments: [(PixelFormat.rgb8, EncodeOptions.Subsampling.s444), (.gray8, .s444), (.rgb8, .s420)])
    func aCornerPastTheRealPixelsRepeatsTheirEdge(format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws {
        let pixels = TestImages.make(width: 256, height: 256, format: format, smooth: true)
        var padded = pixels
        let channels = format.channelCount, content = Size(width: 203, height: 250)
        for y in 0..<256 {
            for x in 0..<256 where x >= content.width || y >= content.height {
                for channel in 0..<channels { padded.bytes[(y * 256 + x) * channels + channel] = 0 }
            }
        }
        var options = EncodeOptions()
        options.subsampling = subsampling
        let edgeTile = try ImageWriter.encode(padded, as: .jpeg, options: options)
        let wholeTile = try jpeg(format, subsampling: subsampling)
        for (tile, real, size) in [(edgeTile, content, Size(width: 205, height: 251)), (edgeTile, content, Size(width: 203, height: 252)),
                                   (wholeTile, Size(width: 256, height: 256), Size(width: 258, height: 257))] {
            let decoded = try ImageSource(bytes: tile).makeReader().readAll()
            let stretched = try ImageSource(bytes: try JPEGCoefficientCrop.topLeft(of: tile, size: size, content: real, name: "tile"))
                .makeReader().readAll()
            #expect(stretched.size == size)
            // The real pixels away from the new edge's blocks are the stored ones exactly (4:4:4); next to it,
            // within requantisation (and, in 4:2:0, chroma upsampled from the repeated samples).
            let inner = Rect(x: 0, y: 0, width: (real.width - 1) / 16 * 16, height: (real.height - 1) / 16 * 16)
            let innerDifference = TestImages.meanDifference(TestImages.crop(stretched, inner), TestImages.crop(decoded, inner))
            #expect(subsampling == .s444 ? innerDifference == 0 : innerDifference < 0.5, "\(size): \(innerDifference)")
            // Against the pixels before compression (the stored tile's own last column and row are darkened by
            // the black padding where chroma is subsampled; the repeated samples leave that out).
            let original = TestImages.crop(pixels, Rect(real))
            let storedError = TestImages.meanDifference(TestImages.crop(decoded, Rect(real)), original)
            let realError = TestImages.meanDifference(TestImages.crop(stretched, Rect(real)), original)
            #expect(realError < storedError + 0.2, "\(size): \(realError) against \(storedError) as stored")
            // Each new column and row is the last real one (within JPEG's error at an edge beside black padding:
            // measured up to 3.9).
            for x in real.width..<size.width {
                let column = TestImages.crop(stretched, Rect(x: x, y: 0, width: 1, height: real.height))
                let last = TestImages.crop(pixels, Rect(x: real.width - 1, y: 0, width: 1, height: real.height))
                #expect(TestImages.meanDifference(column, last) < 5, "\(size): column \(x)")
            }
            for y in real.height..<size.height {
                let row = TestImages.crop(stretched, Rect(x: 0, y: y, width: real.width, height: 1))
                let last = TestImages.crop(pixels, Rect(x: 0, y: real.height - 1, width: real.width, height: 1))
                #expect(TestImages.meanDifference(row, last) < 5, "\(size): row \(y)")
            }
        }
    }

    /// The corners a splice of the entropy-coded data makes decode to exactly the pixels of libjpeg's cut of the
    /// same coefficients: cut across (rows shorter, each row's first MCU coded again), cut down (a prefix of the
    /// MCUs), stretched past real pixels on either axis and past the whole tile. A JPEG it does not splice
    /// (progressive), or one whose data is cut short, it declines rather than guess.
    @Test(arguments: [(PixelFormat.rgb8, EncodeOptions.Subsampling.s444), (.gray8, .s444), (.rgb8, .s420)])
    func aSplicedCornerIsLibjpegsCut(format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws {
        var options = EncodeOptions()
        options.subsampling = subsampling
        let tile = try ImageWriter.encode(TestImages.make(width: 256, height: 256, format: format, smooth: false),
                                          as: .jpeg, options: options)
        let edge = Size(width: 203, height: 250), whole = Size(width: 256, height: 256)
        for (content, size) in [(whole, Size(width: 100, height: 256)), (whole, Size(width: 256, height: 100)),
                                (whole, Size(width: 77, height: 31)), (whole, Size(width: 1, height: 1)),
                                (edge, Size(width: 203, height: 250)), (edge, Size(width: 205, height: 251)),
                                (edge, Size(width: 201, height: 252)), (whole, Size(width: 258, height: 257))] {
            let spliced = try #require(try JPEGEntropySplice.topLeft(of: tile, size: size, content: content, name: "tile"),
                                       "\(size) of \(content)")
            let reference = try JPEGCoefficientCrop.throughLibJPEG(tile, size: size, content: content, name: "tile")
            let pixels = try ImageSource(bytes: spliced).makeReader().readAll()
            #expect(pixels.size == size)
            #expect(pixels.bytes == (try ImageSource(bytes: reference).makeReader().readAll()).bytes,
                    "\(size) of \(content)")
        }
        options.progressive = true
        let progressive = try ImageWriter.encode(TestImages.make(width: 256, height: 256, format: format, smooth: false),
                                                 as: .jpeg, options: options)
        #expect(try JPEGEntropySplice.topLeft(of: progressive, size: Size(width: 100, height: 100), content: nil,
                                              name: "tile") == nil)
        // Cut inside its entropy-coded data (the last EOI kept, so the scan index accepts the file).
        let cut = Array(tile.prefix(tile.count / 2)) + [0xFF, 0xD9]
        #expect(try JPEGEntropySplice.topLeft(of: cut, size: Size(width: 250, height: 250), content: nil, name: "tile") == nil)
    }

    /// Damaged tiles (cut short, bytes flipped in their headers and their entropy-coded data), cut and stretched
    /// as a server does with a viewer's edge tiles: each gives a JPEG or a `TesseraError`, never a trap; a JPEG
    /// given decodes, or fails with a `TesseraError`.
    @Test(arguments: [(PixelFormat.rgb8, EncodeOptions.Subsampling.s420), (.gray8, .s444)])
    func damagedTilesGiveJPEGsOrErrorsNeverTraps(format: PixelFormat, subsampling: EncodeOptions.Subsampling) throws {
        let tile = try jpeg(format, subsampling: subsampling)
        let content = Size(width: 203, height: 250)
        TestImages.damagedCopies(of: tile) { damaged, label in
            for size in [Size(width: 100, height: 256), Size(width: 205, height: 251), Size(width: 203, height: 250)] {
                do {
                    let corner = try JPEGCoefficientCrop.topLeft(of: damaged, size: size, content: content, name: "tile")
                    _ = try ImageSource(bytes: corner).makeReader().readAll()
                } catch is TesseraError {
                } catch {
                    Issue.record("\(label), \(size): \(error)")
                }
            }
        }
    }

    /// A JPEG whose quantisation table holds zeros (invalid, but libjpeg reads it: each coefficient it scales is
    /// 0), stretched past its real pixels by the splice and through libjpeg: a JPEG of the size asked for, not a
    /// trap in the requantisation's division (found by fuzzing a pyramidal TIFF's tiles).
    @Test func zeroQuantisersRequantiseToZero() throws {
        var tile = try jpeg(.rgb8, subsampling: .s420)
        let table = try #require((0..<tile.count - 1).first { tile[$0] == 0xFF && tile[$0 + 1] == 0xDB })
        // The first table's last 16 entries in zigzag order (the highest frequencies), after the marker, the
        // length and the precision and number.
        for entry in table + 5 + 48..<table + 5 + 64 { tile[entry] = 0 }
        let content = Size(width: 203, height: 250), size = Size(width: 205, height: 251)
        for corner in [try JPEGEntropySplice.topLeft(of: tile, size: size, content: content, name: "tile"),
                       try JPEGCoefficientCrop.throughLibJPEG(tile, size: size, content: content, name: "tile")] {
            #expect(try ImageSource(bytes: try #require(corner)).makeReader().readAll().size == size)
        }
    }

    @Test func aCornerLargerThanTheImageIsRefused() throws {
        let whole = try jpeg(.rgb8, subsampling: .s420)
        #expect(throws: TesseraError.self) {
            try JPEGCoefficientCrop.topLeft(of: whole, size: Size(width: 259, height: 10), name: "tile")
        }
        #expect(throws: TesseraError.self) {
            try JPEGCoefficientCrop.topLeft(of: whole, size: Size(width: 100, height: 10), content: Size(width: 97, height: 10),
                                            name: "tile")
        }
        #expect(throws: TesseraError.self) {
            try JPEGCoefficientCrop.topLeft(of: Array(whole.prefix(100)), size: Size(width: 10, height: 10), name: "tile")
        }
        // A tile whose header claims 8192 x 8192 pixels (a hostile one of a few kilobytes, whose coefficients
        // libjpeg would allocate whole: 200 MB for each crop; found by fuzzing) is refused before.
        var huge = whole
        let frame = try #require((0..<huge.count - 1).first { huge[$0] == 0xFF && huge[$0 + 1] == 0xC0 })
        huge.replaceSubrange(frame + 5..<frame + 9, with: [0x20, 0x00, 0x20, 0x00])
        #expect(throws: TesseraError.self) {
            try JPEGCoefficientCrop.topLeft(of: huge, size: Size(width: 255, height: 257), content: Size(width: 256, height: 256),
                                            name: "tile")
        }
    }
}
