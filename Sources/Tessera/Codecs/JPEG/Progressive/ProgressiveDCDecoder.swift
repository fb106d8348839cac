/// Decodes a progressive JPEG at 1/8 scale from its DC scans alone, in memory bounded by the width: each 8x8
/// block's mean (its dequantised DC / 8 + 128, libjpeg's 1x1 IDCT) becomes one pixel, chroma is brought up to
/// the luma grid and YCbCr is converted to RGB with libjpeg's tables. libjpeg would hold the whole image's
/// coefficients (2.9 GB for a gigapixel) before its first row; this reads the DC first scan and each DC refinement
/// scan in lockstep, one file cursor per scan, one row of MCUs at a time (they code the same MCUs in the same
/// order), and never reads the AC scans at all.
///
///     JPEGScanIndex (marker walk) -> one JPEGEntropyReader per DC scan
///       -> per MCU row: first scan sets pred << Al, refinements OR in their bit -> DC rows per component
///       -> (DC * q + 4) >> 3 + 128 (JPEGReducedIDCT) -> upsample (repeat, or interpolate 4:2:0 chroma) -> YCbCr to RGB -> rows
///
/// Gray, 4:4:4 and 4:2:2 equal libjpeg's 1/8 output exactly. For 4:2:0 libjpeg scales chroma by a 2x2 IDCT, AC
/// terms included, which DC alone cannot give: the block means are interpolated instead, within a level or two
/// of it where chroma changes smoothly, more at sharp colour edges inside a 16-pixel block.
final class ProgressiveDCDecoder: TiledRowDecoder {
    /// How the components become output samples.
    private enum ColorTransform { case gray, ycbcr, rgb }

    /// Where one block of an interleaved scan's MCU goes: its component's place in the scan, its coefficient in
    /// the first MCU of the row, and the step from one MCU to the next.
    private struct BlockSlot {
        var position: Int
        var base: UnsafeMutablePointer<Int16>
        var step: Int
    }

    /// One DC scan being read: where its MCU blocks go and its reading state.
    private struct ScanCursor {
        let scan: JPEGScanIndex.Scan
        /// The blocks of one MCU, in the scan's order.
        let slots: [BlockSlot]
        /// A first scan (Ah = 0), and its Al.
        let isFirst: Bool
        let shift: Int
        var state: JPEGScanState

        init(scan: JPEGScanIndex.Scan, slots: [BlockSlot], input: BufferedInput) {
            self.scan = scan
            self.slots = slots
            isFirst = scan.approximationHigh == 0
            shift = scan.approximationLow
            state = JPEGScanState(scan: scan, input: input)
        }
    }

    let size: Size
    let format: PixelFormat
    /// The output rows as a grid one tile across and one MCU row tall, and the band of them being read: tiles
    /// come in order, as the scans are read in order; a skipped band's MCU row is entropy-decoded, not emitted.
    let bands: TileBandReader
    private let frame: JPEGFrameHeader
    private let name: String
    private let allowPartial: Bool
    private let transform: ColorTransform
    private let quantization: [Int]
    private var cursors: [ScanCursor]
    /// Blocks per row of each component's coefficient and sample rows (MCU padding included).
    private let strides: [Int]
    /// The memory below, allocated once: per component one MCU row of DC coefficients (`vertical` block rows of
    /// `strides[c]`), the samples of the last three MCU rows decoded (row `m` in slot `m % 3`), and its samples
    /// for the output row being made.
    private let storage: UnsafeMutableRawPointer
    private let coefficients: [UnsafeMutablePointer<Int16>]
    private let samples: [[UnsafeMutablePointer<UInt8>]]
    private let upsampled: [UnsafeMutablePointer<UInt8>]
    /// Per component, whether it is doubled by interpolation (where libjpeg uses a 2x2 IDCT) or by repetition.
    private let interpolated: [Bool]
    /// Per component, the sample column each output column repeats.
    private let columnMaps: [[Int]]
    /// MCU rows decoded, and the first output row of the MCU row being made.
    private var mcuRow = 0
    private var outputRow = 0

    /// Decodes the image whose scans `index` holds (`JPEGDecodePlan` says when); throws for a file cut short or
    /// lacking a DC scan, unless partial output was asked for.
    init(index: JPEGScanIndex, input: ImageInput, request: DecodeRequest) throws {
        let frame = index.frame
        self.frame = frame
        name = input.name
        allowPartial = request.allowPartial
        if !index.isComplete && !allowPartial {
            throw TesseraError.truncated(path: name, detail: "before its end-of-image marker")
        }
        for (component, factor) in index.dcQuantization.enumerated() where factor == nil && !allowPartial {
            throw TesseraError.corrupt(path: name, detail: "component \(component + 1) has no DC scan or no quantisation table")
        }
        quantization = index.dcQuantization.map { $0 ?? 0 }
        switch frame.components.count {
        case 1:
            transform = .gray
            format = .gray8
        default:
            if index.sawJFIF { transform = .ycbcr }
            else if let adobe = index.adobeTransform { transform = adobe == 0 ? .rgb : .ycbcr }
            else { transform = frame.components.map(\.id) == [82, 71, 66] ? .rgb : .ycbcr }
            format = .rgb8
        }
        let size = reducedSize(Size(width: frame.width, height: frame.height), by: 8), width = size.width
        self.size = size
        let strides = frame.components.map { frame.mcusAcross * $0.horizontal }
        let blocks = frame.components.indices.map { strides[$0] * frame.components[$0].vertical }
        // Per component: coefficients (2 bytes a block), three slots of samples, one output row of samples.
        let bytes = blocks.reduce(0) { $0 + 5 * $1 } + frame.components.count * width
        try request.budget.check(bytes + frame.maxVertical * width * format.channelCount,
                                 for: "a row of DC blocks", path: name)
        self.strides = strides
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: max(1, bytes))
        self.storage = storage
        var offset = 0, coefficients: [UnsafeMutablePointer<Int16>] = [], samples: [[UnsafeMutablePointer<UInt8>]] = []
        var upsampled: [UnsafeMutablePointer<UInt8>] = []
        for count in blocks {
            coefficients.append((storage + offset).assumingMemoryBound(to: Int16.self))
            offset += 2 * count
            samples.append((0..<3).map { slot in (storage + offset + slot * count).assumingMemoryBound(to: UInt8.self) })
            offset += 3 * count
        }
        for _ in frame.components {
            upsampled.append((storage + offset).assumingMemoryBound(to: UInt8.self))
            offset += width
        }
        self.coefficients = coefficients
        cursors = try index.scans.filter(\.isDC).map { scan in
            let slots = scan.components.enumerated().flatMap { position, component in
                let info = frame.components[component]
                return (0..<info.vertical * info.horizontal).map { block in
                    BlockSlot(position: position,
                              base: coefficients[component] + block / info.horizontal * strides[component] + block % info.horizontal,
                              step: info.horizontal)
                }
            }
            return ScanCursor(scan: scan, slots: slots, input: try BufferedInput(input))
        }
        self.samples = samples
        self.upsampled = upsampled
        let maxHorizontal = frame.maxHorizontal
        columnMaps = frame.components.map { component in (0..<width).map { $0 * component.horizontal / maxHorizontal } }
        // libjpeg-turbo scales a component by IDCT instead of upsampling when both its ratios to the largest
        // sampling are even (jdmaster.c); at 1/8 that is a 2x2 IDCT for 4:2:0 chroma.
        interpolated = frame.components.map { $0.horizontal * 2 == maxHorizontal && $0.vertical * 2 == frame.maxVertical }
        bands = TileBandReader(grid: TileGrid(imageSize: size, tileSize: Size(width: width, height: frame.maxVertical)),
                               format: format, cropsWithinTiles: false, budget: request.budget,
                               purpose: "a row of DC blocks", name: name)
    }

    deinit { storage.deallocate() }

    /// Makes the output rows of MCU row `row` (the only tile across) into `target`.
    func decodeTile(column: Int, row: Int, columns: Range<Int>, into target: UnsafeMutableRawPointer,
                    bytesPerRow: Int) throws {
        outputRow = row * frame.maxVertical
        // Interpolated chroma needs the MCU rows above and below the one being emitted.
        while mcuRow < min(row + 2, frame.mcusDown) { try decodeMCURow() }
        emitRows(ofMCURow: row, into: target, bytesPerRow: bytesPerRow)
    }

    // MARK: - Entropy decoding

    /// Decodes the next row of MCUs from every DC scan, in file order, and dequantises it.
    private func decodeMCURow() throws {
        let row = mcuRow
        try cursors.withUnsafeMutableBufferPointer { cursors in
            for index in cursors.indices {
                try decode(&cursors[index], mcuRow: row)
                guard cursors[index].state.reader.overran && !allowPartial else { continue }
                if cursors[index].state.reader.marker == 0 { throw TesseraError.truncated(path: name, detail: "in a DC scan, \(place)") }
                throw TesseraError.corrupt(path: name, detail: "a DC scan's data ends early, \(place)")
            }
        }
        storeSamples(ofMCURow: row)
        mcuRow += 1
    }

    /// Where decoding is, for error messages.
    private var place: String { "before row \((outputRow + 1).grouped) of \(size.height.grouped) at 1/8 scale" }

    private func decode(_ cursor: inout ScanCursor, mcuRow: Int) throws {
        let scan = cursor.scan
        // The block loop touches only locals and pointers: a table read out of an array per block would be
        // retained and released per block, a third of the time.
        let tables = scan.dcTables, first = tables.first
        let table0 = first, table1 = tables.count > 1 ? tables[1] : first, table2 = tables.count > 2 ? tables[2] : first
        let table3 = tables.count > 3 ? tables[3] : first
        @inline(__always) func block(_ position: Int, _ coefficient: UnsafeMutablePointer<Int16>) throws {
            let table: JPEGHuffmanTable?
            switch position {
            case 0: table = table0
            case 1: table = table1
            case 2: table = table2
            default: table = table3
            }
            try decodeBlock(&cursor, position: position, table: table, into: coefficient)
        }
        if scan.components.count == 1 {
            // A one-component scan codes that component's blocks in raster order, with no MCU padding.
            let component = scan.components[0], info = frame.components[component], stride = strides[component]
            let firstRow = mcuRow * info.vertical, lastRow = min(firstRow + info.vertical, info.blocksDown)
            for blockRow in firstRow..<max(firstRow, lastRow) {
                let base = coefficients[component] + (blockRow - firstRow) * stride
                for column in 0..<info.blocksAcross {
                    try startUnit(&cursor)
                    try block(0, base + column)
                }
            }
            return
        }
        let slots = cursor.slots
        try slots.withUnsafeBufferPointer { slots in
            for mcu in 0..<frame.mcusAcross {
                try startUnit(&cursor)
                for slot in slots { try block(slot.position, slot.base + mcu * slot.step) }
            }
        }
    }

    /// Steps over a restart marker when the interval is used up, resetting the predictions.
    @inline(__always)
    private func startUnit(_ cursor: inout ScanCursor) throws {
        guard cursor.state.startUnit() || allowPartial else {
            throw TesseraError.corrupt(path: name, detail: "restart marker \((cursor.state.nextRestart - 1) & 7) is missing \(place)")
        }
    }

    /// Decodes one block's DC from a first scan (the difference from the prediction, shifted by Al) or a
    /// refinement scan (one more bit, ORed in at Al).
    @inline(__always)
    private func decodeBlock(_ cursor: inout ScanCursor, position: Int, table: JPEGHuffmanTable?,
                             into coefficient: UnsafeMutablePointer<Int16>) throws {
        guard cursor.isFirst else { return cursor.state.decodeDCRefinement(shift: cursor.shift, into: coefficient) }
        guard cursor.state.decodeDCFirst(position: position, table: table, shift: cursor.shift, into: coefficient)
            || allowPartial else {
            throw TesseraError.corrupt(path: name, detail: "a DC scan holds an invalid Huffman code \(place)")
        }
    }

    // MARK: - Samples and colour

    /// Dequantises the MCU row just decoded into its slot of `samples`.
    private func storeSamples(ofMCURow row: Int) {
        for component in frame.components.indices {
            let factor = quantization[component], source = coefficients[component], target = samples[component][row % 3]
            for index in 0..<strides[component] * frame.components[component].vertical {
                target[index] = JPEGReducedIDCT.oneByOne(dc: source[index], quantization: factor)
            }
        }
    }

    /// Makes the output rows of MCU row `row` into `target`, `bytesPerRow` apart; the rows above and below it
    /// are in `samples` too.
    private func emitRows(ofMCURow row: Int, into target: UnsafeMutableRawPointer, bytesPerRow: Int) {
        let width = size.width, channels = format.channelCount
        for local in 0..<min(frame.maxVertical, size.height - row * frame.maxVertical) {
            let y = row * frame.maxVertical + local
            for component in frame.components.indices {
                if interpolated[component] { interpolate(component, outputRow: y) } else { replicate(component, outputRow: y) }
            }
            let line = UnsafeMutableRawBufferPointer(start: target + local * bytesPerRow, count: width * channels)
            line.withMemoryRebound(to: UInt8.self) { output in
                switch transform {
                case .gray:
                    let gray = upsampled[0]
                    for x in 0..<width { output[x] = gray[x] }
                case .rgb:
                    let red = upsampled[0], green = upsampled[1], blue = upsampled[2]
                    for x in 0..<width {
                        output[3 * x] = red[x]
                        output[3 * x + 1] = green[x]
                        output[3 * x + 2] = blue[x]
                    }
                case .ycbcr:
                    JPEGYCbCr.convert(luma: upsampled[0], blue: upsampled[1], red: upsampled[2], count: width,
                                      into: output.baseAddress!)
                }
            }
        }
    }

    /// The component's samples for one output row, each repeated across as libjpeg's box upsampling does.
    private func replicate(_ component: Int, outputRow y: Int) {
        let info = frame.components[component], target = upsampled[component]
        let sampleRow = y * info.vertical / frame.maxVertical
        let source = samples[component][sampleRow / info.vertical % 3] + sampleRow % info.vertical * strides[component]
        columnMaps[component].withUnsafeBufferPointer { map in
            for x in map.indices { target[x] = source[map[x]] }
        }
    }

    /// The component's samples for one output row, doubled both ways with libjpeg's triangle filter: where
    /// libjpeg scales such chroma by a 2x2 IDCT, this follows its gradients far more closely than repeating.
    private func interpolate(_ component: Int, outputRow y: Int) {
        let info = frame.components[component], stride = strides[component], target = upsampled[component]
        let lastRow = info.blocksDown - 1, last = info.blocksAcross - 1
        let near = min(y / 2, lastRow), far = min(max(y % 2 == 0 ? near - 1 : near + 1, 0), lastRow)
        func row(_ sampleRow: Int) -> UnsafeMutablePointer<UInt8> {
            samples[component][sampleRow / info.vertical % 3] + sampleRow % info.vertical * stride
        }
        let nearRow = row(near), farRow = row(far)
        for x in 0..<size.width {
            let here = min(x / 2, last), there = min(max(x % 2 == 0 ? here - 1 : here + 1, 0), last)
            let column = 3 * Int(nearRow[here]) + Int(farRow[here]), neighbour = 3 * Int(nearRow[there]) + Int(farRow[there])
            target[x] = UInt8((3 * column + neighbour + 8) >> 4)
        }
    }
}
