/// Decodes the first frame of a GIF in pure Swift.
///
/// The image is the logical screen (grown to the frame when the frame sticks out); pixels outside the frame
/// are the background colour, or transparent when the frame has a transparent index. (Pillow fills them with
/// index 0 instead of the background index; the two agree whenever the background index is 0, as Pillow
/// writes.) Output is RGB 8-bit, RGBA 8-bit when a transparent index is set (its pixels keep their palette
/// colour with alpha 0).
/// Non-interlaced frames stream: each row is LZW-decoded when it is asked for, in O(width) memory.
/// Interlaced frames store rows in four passes, so the frame's indices are decoded whole first
/// (`width * height` bytes, checked against the memory budget).
///
/// Damaged data (a truncated file, LZW data that ends early, a code beyond the table) throws when the first
/// row it spoils is asked for; with `allowPartial`, that row and every frame row after it come out zero.
///
/// Only the first frame decodes. `pageCount` is the number of frames, counted when the file is opened by
/// walking the block structure to the end (sub-block lengths only, no LZW): one sequential read of the file.
final class GIFDecoder: ImageDecoder {
    private let header: GIFHeader
    private let input: BufferedInput
    private let allowPartial: Bool
    private let budget: MemoryBudget
    private let lzw: LZWDecoder
    let size: Size
    let format: PixelFormat
    /// The next output row (0 is the top row).
    private var row = 0
    /// Indices of the frame's current row (non-interlaced) or of the whole frame (interlaced, once decoded).
    private var indices: [UInt8] = []
    /// Whether an interlaced frame has been decoded into `indices` (as far as its data allowed).
    private var interlacedFrameDecoded = false
    /// Frame rows decoded so far: a prefix of the frame for non-interlaced frames, of the pass order otherwise.
    private var frameRowsDecoded = 0
    /// The pixel outside the frame: the background colour, or the transparent index's colour with alpha 0.
    private let backgroundPixel: [UInt8]
    /// The error that stopped decoding, rethrown for every later frame row unless `allowPartial`.
    private var failure: TesseraError?

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        try GIFHeader(reading: BufferedInput(input)).properties()
    }

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        guard request.page == 0 else {
            throw TesseraError.unsupported(path: input.name, feature: "decoding GIF frames after the first")
        }
        self.input = try BufferedInput(input)
        header = try GIFHeader(reading: self.input)
        size = header.size
        format = header.outputFormat
        allowPartial = request.allowPartial
        budget = request.budget
        if let transparent = header.frame.transparentIndex {
            backgroundPixel = Array(header.palette[3 * transparent..<3 * transparent + 3]) + [0]
        } else {
            backgroundPixel = [header.background.0, header.background.1, header.background.2]
        }
        self.input.seek(to: header.frame.dataOffset)
        lzw = LZWDecoder(input: self.input, minimumCodeSize: header.frame.minimumCodeSize)
    }

    /// Rows of a non-interlaced frame can only be skipped by decoding them (the LZW stream has no row marks);
    /// an interlaced frame is decoded whole when its first row is asked for, and rows outside the frame cost nothing.
    func skipRows(_ count: Int) throws {
        let frame = header.frame.rect
        let end = min(size.height, row + max(0, count))
        if !header.frame.isInterlaced {
            var y = max(row, frame.y)
            while y < min(end, frame.maxY) {
                _ = try frameRow(y - frame.y)
                y += 1
            }
        }
        row = end
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        guard count > 0 else { return }
        guard row + count <= size.height else {
            throw TesseraError.invalidArgument("\(input.name): rows \(row)..<\(row + count) are past the image")
        }
        let frame = header.frame.rect, width = size.width, channels = format.channelCount
        for index in 0..<count {
            let y = row + index
            let out = (rows + index * bytesPerRow).assumingMemoryBound(to: UInt8.self)
            guard frame.y <= y && y < frame.maxY else {
                fillBackground(out, from: 0, to: width)
                continue
            }
            guard let frameIndices = try frameRow(y - frame.y) else {
                out.initialize(repeating: 0, count: width * channels)
                continue
            }
            // frame.maxX <= width: the image grows to hold the frame.
            fillBackground(out, from: 0, to: frame.x)
            fillBackground(out, from: frame.maxX, to: width)
            let transparent = header.frame.transparentIndex
            header.palette.withUnsafeBufferPointer { palette in
                frameIndices.withUnsafeBufferPointer { source in
                    for x in 0..<frame.width {
                        let index = Int(source[x]), target = (frame.x + x) * channels
                        out[target] = palette[3 * index]
                        out[target + 1] = palette[3 * index + 1]
                        out[target + 2] = palette[3 * index + 2]
                        if channels == 4 { out[target + 3] = index == transparent ? 0 : 255 }
                    }
                }
            }
        }
        row += count
    }

    /// Writes the background pixel over `start..<end` of a row.
    private func fillBackground(_ out: UnsafeMutablePointer<UInt8>, from start: Int, to end: Int) {
        let channels = backgroundPixel.count
        for x in start..<max(start, end) {
            for channel in 0..<channels { out[x * channels + channel] = backgroundPixel[channel] }
        }
    }

    /// The indices of frame row `y`, or nil when damage stopped decoding before it (and `allowPartial` is set).
    /// Non-interlaced rows must be asked for in order, each once.
    private func frameRow(_ y: Int) throws -> ArraySlice<UInt8>? {
        let width = header.frame.rect.width
        if header.frame.isInterlaced {
            try decodeInterlacedFrame()
            guard Self.passOrder(ofRow: y, height: header.frame.rect.height) < frameRowsDecoded else {
                return try missing()
            }
            return indices[y * width..<(y + 1) * width]
        }
        if indices.count != width { indices = [UInt8](repeating: 0, count: width) }
        guard failure == nil, try decodeFrameRow(into: 0) else { return try missing() }
        return indices[...]
    }

    /// Throws the failure that stopped decoding, or returns nil (a zero row) when partial images are allowed.
    private func missing() throws -> ArraySlice<UInt8>? {
        if let failure, !allowPartial { throw failure }
        return nil
    }

    /// Decodes every row of an interlaced frame into `indices`, in pass order, once.
    private func decodeInterlacedFrame() throws {
        guard !interlacedFrameDecoded else { return }
        let rect = header.frame.rect
        let (area, overflow) = rect.width.multipliedReportingOverflow(by: rect.height)
        try budget.check(overflow ? Int.max : area, for: "the interlaced GIF frame's indices", path: input.name)
        indices = [UInt8](repeating: 0, count: area)
        interlacedFrameDecoded = true
        for pass in Self.passes {
            for y in stride(from: pass.start, to: rect.height, by: pass.step) {
                guard try decodeFrameRow(into: y * rect.width) else { return }
            }
        }
    }

    /// LZW-decodes the next frame row into `indices[start...]`; false, with `failure` set, when it cannot.
    private func decodeFrameRow(into start: Int) throws -> Bool {
        let width = header.frame.rect.width
        let produced: Int
        do {
            produced = try indices.withUnsafeMutableBufferPointer {
                try lzw.decode(into: UnsafeMutableBufferPointer(rebasing: $0[start..<start + width]))
            }
        } catch let LZWError.codeBeyondTable(code) {
            failure = .corrupt(path: input.name, detail: "LZW code \(code) beyond the table \(progress)")
            return false
        }
        guard produced == width else {
            let reason = lzw.end == .endOfFile ? "" : " (the image data ends early)"
            failure = .truncated(path: input.name, detail: progress + reason)
            return false
        }
        frameRowsDecoded += 1
        return true
    }

    /// How far decoding got, for messages: "after row N of M" in image rows, or in pass order when interlaced.
    private var progress: String {
        let frame = header.frame.rect
        if header.frame.isInterlaced {
            return "after \(frameRowsDecoded.grouped) of \(frame.height.grouped) interlaced rows"
        }
        return "after row \((frame.y + frameRowsDecoded).grouped) of \(size.height.grouped)"
    }

    /// The interlace passes: rows 0, 8, 16, ...; then 4, 12, ...; then 2, 6, ...; then 1, 3, ....
    private static let passes = [(start: 0, step: 8), (start: 4, step: 8), (start: 2, step: 4), (start: 1, step: 2)]

    /// Where frame row `y` comes in the interlaced data, counting rows from 0.
    static func passOrder(ofRow y: Int, height: Int) -> Int {
        var before = 0
        for pass in passes {
            if y >= pass.start && (y - pass.start) % pass.step == 0 { return before + (y - pass.start) / pass.step }
            before += pass.start < height ? (height - pass.start + pass.step - 1) / pass.step : 0
        }
        return before
    }
}
