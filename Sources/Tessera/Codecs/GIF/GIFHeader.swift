/// The structure of a GIF file up to its first frame's pixel data (logical screen, colour tables, the graphic
/// control extension and image descriptor of the first frame), plus a count of its frames.
struct GIFHeader {
    /// The first frame's rectangle on the screen and how to read its pixels.
    struct Frame {
        var rect: Rect
        var isInterlaced: Bool
        /// Index of the transparent colour from the graphic control extension before the frame, if any.
        var transparentIndex: Int?
        /// Bits per index of the colour table in use (1-8), 8 when the file has none.
        var bitsPerIndex: Int
        /// The LZW minimum code size, 1-8.
        var minimumCodeSize: Int
        /// Offset of the first data sub-block.
        var dataOffset: Int
    }

    /// The image size: the logical screen, grown to hold the first frame when it sticks out (as Pillow does,
    /// which also makes files with a 0x0 screen readable).
    var size: Size
    var frame: Frame
    /// 256 RGB triples of the frame's colour table (local, else global), missing entries black. Without any
    /// table, indices are gray levels, as Pillow reads them.
    var palette: [UInt8]
    /// The colour of pixels outside the frame: the global table's background entry, or without a global table
    /// the frame table's first colour (as Pillow fills); transparent instead when the frame has a transparent index.
    var background: (UInt8, UInt8, UInt8)
    /// Image descriptors in the file; counting them reads the file's block structure (not its pixels) to the end.
    var frameCount: Int

    var outputFormat: PixelFormat { frame.transparentIndex == nil ? .rgb8 : .rgba8 }

    /// What `ImageProperties` reports: one channel of palette indices, `bitsPerIndex` bits deep.
    func properties() -> ImageProperties {
        ImageProperties(format: .gif, width: size.width, height: size.height, channels: 1,
                        bitDepth: frame.bitsPerIndex, colorModel: .palette,
                        hasAlpha: frame.transparentIndex != nil, isProgressive: frame.isInterlaced,
                        pageCount: frameCount)
    }

    /// Parses `input` from its start; leaves it positioned anywhere.
    init(reading input: BufferedInput) throws {
        let name = input.name
        func truncated(_ part: String) -> TesseraError { .truncated(path: name, detail: "in the \(part)") }
        func corrupt(_ detail: String) -> TesseraError { .corrupt(path: name, detail: detail) }
        func bytes(_ count: Int, _ part: String) throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            guard try bytes.withUnsafeMutableBytes({ try input.read(into: $0) }) == count else {
                throw truncated(part)
            }
            return bytes
        }
        func littleEndian16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
        /// A colour table of `1 << bits` entries as 256 RGB triples.
        func colourTable(bits: Int, _ part: String) throws -> [UInt8] {
            var table = [UInt8](repeating: 0, count: 768)
            let stored = 3 << bits
            guard try table.withUnsafeMutableBytes({
                try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<stored]))
            }) == stored else { throw truncated(part) }
            return table
        }
        /// Moves past a run of data sub-blocks; false when the file ends first.
        func skipSubBlocks() throws -> Bool {
            while true {
                guard let size = try input.readByte() else { return false }
                if size == 0 { return true }
                input.skip(Int(size))
            }
        }

        input.seek(to: 0)
        let screen = try bytes(13, "header")
        guard screen.starts(with: Array("GIF87a".utf8)) || screen.starts(with: Array("GIF89a".utf8)) else {
            throw corrupt("no GIF87a or GIF89a signature")
        }
        var globalTable: [UInt8]?
        var globalBits = 8
        if screen[10] & 0x80 != 0 {
            globalBits = Int(screen[10] & 7) + 1
            globalTable = try colourTable(bits: globalBits, "global colour table")
        }

        // Blocks up to the first image descriptor; a graphic control extension applies to the next image.
        func firstFrame() throws -> (Frame, [UInt8]) {
            var transparentIndex: Int?
            while true {
                guard let introducer = try input.readByte() else { throw truncated("blocks before the first image") }
                switch introducer {
                case 0x21:
                    guard let label = try input.readByte() else { throw truncated("extension") }
                    let start = input.offset
                    if label == 0xF9, let size = try input.readByte(), size >= 4 {
                        let control = try bytes(4, "graphic control extension")
                        transparentIndex = control[0] & 1 != 0 ? Int(control[3]) : nil
                    }
                    input.seek(to: start)
                    guard try skipSubBlocks() else { throw truncated("extension") }
                case 0x2C:
                    let descriptor = try bytes(9, "image descriptor")
                    let flags = descriptor[8]
                    let rect = Rect(x: littleEndian16(descriptor, 0), y: littleEndian16(descriptor, 2),
                                    width: littleEndian16(descriptor, 4), height: littleEndian16(descriptor, 6))
                    var palette: [UInt8]
                    var bits = globalBits
                    if flags & 0x80 != 0 {
                        bits = Int(flags & 7) + 1
                        palette = try colourTable(bits: bits, "local colour table")
                    } else if let globalTable {
                        palette = globalTable
                    } else {
                        palette = (0..<768).map { UInt8($0 / 3) }
                    }
                    guard let codeSize = try input.readByte() else { throw truncated("image data") }
                    guard (1...8).contains(codeSize) else { throw corrupt("LZW minimum code size \(codeSize)") }
                    let frame = Frame(rect: rect, isInterlaced: flags & 0x40 != 0, transparentIndex: transparentIndex,
                                      bitsPerIndex: bits, minimumCodeSize: Int(codeSize), dataOffset: input.offset)
                    return (frame, palette)
                case 0x3B:
                    throw corrupt("the file ends (trailer) before any image")
                default:
                    throw corrupt("unknown block 0x\(String(introducer, radix: 16)) at byte \((input.offset - 1).grouped)")
                }
            }
        }
        (frame, palette) = try firstFrame()
        // A frame larger than the screen grows the image; both sides fit in 16 bits, so the sum cannot overflow.
        size = Size(width: max(littleEndian16(screen, 6), frame.rect.maxX),
                    height: max(littleEndian16(screen, 8), frame.rect.maxY))
        guard size.area > 0 else { throw corrupt("the image is \(size)") }
        // Without a global table the background index means nothing; Pillow fills with index 0 of the frame's.
        let backgroundIndex = globalTable == nil ? 0 : Int(screen[11])
        let backgroundTable = globalTable ?? palette
        background = (backgroundTable[3 * backgroundIndex], backgroundTable[3 * backgroundIndex + 1],
                      backgroundTable[3 * backgroundIndex + 2])

        // The frame count tolerates damage after the first frame: counting stops there, decoding is unaffected.
        var frames = 1
        guard try skipSubBlocks() else {
            frameCount = frames
            return
        }
        counting: while let introducer = try input.readByte() {
            switch introducer {
            case 0x21:
                guard try input.readByte() != nil, try skipSubBlocks() else { break counting }
            case 0x2C:
                guard let descriptor = try? bytes(9, "image descriptor") else { break counting }
                if descriptor[8] & 0x80 != 0 { input.skip(3 << (Int(descriptor[8] & 7) + 1)) }
                guard try input.readByte() != nil, try skipSubBlocks() else { break counting }
                frames += 1
            default:
                break counting
            }
        }
        frameCount = frames
    }
}
