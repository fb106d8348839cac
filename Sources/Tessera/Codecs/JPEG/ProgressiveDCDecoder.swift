/// Decodes a progressive JPEG at 1/8 scale from its DC scans alone, in memory bounded by the width: each 8x8
/// block's mean (its dequantised DC / 8 + 128, libjpeg's 1x1 IDCT) becomes one pixel, chroma is replicated up to
/// the luma grid and YCbCr is converted to RGB with libjpeg's tables. libjpeg would hold the whole image's
/// coefficients (2.9 GB for a gigapixel) before its first row; this reads the DC first scan and each DC refinement
/// scan in lockstep, one file cursor per scan, one row of MCUs at a time (they code the same MCUs in the same
/// order), and never reads the AC scans at all.
///
///     JPEGScanIndex (marker walk) -> one JPEGEntropyReader per DC scan
///       -> per MCU row: first scan sets pred << Al, refinements OR in their bit -> DC rows per component
///       -> (DC * q + 4) >> 3 + 128 -> upsample by replication -> YCbCr to RGB -> rows
///
/// libjpeg at 1/8 scales 4:2:0 chroma by a 2x2 IDCT (AC terms included) rather than replicating block means, so
/// chroma may differ from its output by a level or two where chroma varies within a block.
final class ProgressiveDCDecoder: RowDecoder {
    /// How the components become output samples.
    private enum ColorTransform { case gray, ycbcr, rgb }

    /// One DC scan being read: its cursor, its DC predictions and its restart state.
    private final class ScanCursor {
        let scan: JPEGScanIndex.Scan
        let reader: JPEGEntropyReader
        var predictions: [Int]
        var restartsLeft: Int
        var nextRestart = 0
        var started = false

        init(scan: JPEGScanIndex.Scan, input: BufferedInput) {
            self.scan = scan
            reader = JPEGEntropyReader(input: input, offset: scan.dataOffset)
            predictions = [Int](repeating: 0, count: scan.components.count)
            restartsLeft = scan.restartInterval
        }
    }

    let size: Size
    let format: PixelFormat
    private let frame: JPEGFrameHeader
    private let name: String
    private let allowPartial: Bool
    private let transform: ColorTransform
    private let quantization: [Int]
    private let cursors: [ScanCursor]
    /// Per component, one row of MCUs' DC coefficients: `vertical` block rows of `strides[c]` blocks.
    private var coefficients: [[Int16]]
    private let strides: [Int]
    /// Per component, the samples of the last three MCU rows decoded, row `m` in slot `m % 3`.
    private var samples: [[[UInt8]]]
    /// Per component, whether it is doubled by interpolation (where libjpeg uses a 2x2 IDCT) or by repetition.
    private let interpolated: [Bool]
    /// Per component, the sample column each output column repeats.
    private let columnMaps: [[Int]]
    /// Per component, its samples for the output row being made.
    private var upsampled: [[UInt8]]
    /// The output rows of the current MCU row, and which of them are still to hand out.
    private var rows: [UInt8]
    private var rowsReady = 0
    private var rowsTaken = 0
    /// MCU rows decoded, and MCU rows turned into output rows.
    private var mcuRow = 0
    private var emittedMCURows = 0
    private var outputRow = 0

    /// The decoder for `request`, or nil when the DC path does not apply (not progressive, not 1/8, CMYK, 12-bit,
    /// sampling libjpeg cannot upsample) and libjpeg should decode instead.
    static func open(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws -> ProgressiveDCDecoder? {
        guard properties.isProgressive, request.scale == 8, request.page == 0, properties.bitDepth == 8,
              properties.channels == 1 || properties.channels == 3 else { return nil }
        let index = try JPEGScanIndex(input: input)
        guard index.frame.isProgressive, index.frame.precision == 8, index.frame.hasIntegralSampling else { return nil }
        return try ProgressiveDCDecoder(index: index, input: input, request: request)
    }

    private init(index: JPEGScanIndex, input: ImageInput, request: DecodeRequest) throws {
        frame = index.frame
        name = input.name
        allowPartial = request.allowPartial
        if !index.isComplete && !allowPartial {
            throw TesseraError.truncated(path: name, detail: "before its end-of-image marker")
        }
        let dcScans = index.scans.filter(\.isDC)
        for (component, factor) in index.dcQuantization.enumerated() where factor == nil && !allowPartial {
            throw TesseraError.corrupt(path: name, detail: "component \(component + 1) has no DC scan or no quantisation table")
        }
        quantization = index.dcQuantization.map { $0 ?? 0 }
        cursors = try dcScans.map { ScanCursor(scan: $0, input: try BufferedInput(input)) }
        switch frame.components.count {
        case 1:
            transform = .gray
            format = .gray8
        default:
            let ids = frame.components.map(\.id)
            if index.sawJFIF { transform = .ycbcr }
            else if let adobe = index.adobeTransform { transform = adobe == 0 ? .rgb : .ycbcr }
            else { transform = ids == [82, 71, 66] ? .rgb : .ycbcr }
            format = .rgb8
        }
        size = reducedSize(Size(width: frame.width, height: frame.height), by: 8)
        try request.budget.checkRows(width: size.width, rows: frame.maxVertical * 4, format: PixelFormat(.rgba),
                                     for: "a row of DC blocks", path: name)
        let frame = index.frame, width = size.width, maxHorizontal = frame.maxHorizontal
        strides = frame.components.map { frame.mcusAcross * $0.horizontal }
        coefficients = frame.components.map { [Int16](repeating: 0, count: frame.mcusAcross * $0.horizontal * $0.vertical) }
        columnMaps = frame.components.map { component in
            (0..<width).map { $0 * component.horizontal / maxHorizontal }
        }
        samples = frame.components.map { [[UInt8]](repeating: [UInt8](repeating: 0, count: frame.mcusAcross * $0.horizontal * $0.vertical), count: 3) }
        // libjpeg-turbo scales a component by IDCT instead of upsampling when both its ratios to the largest
        // sampling are even (jdmaster.c); at 1/8 that is a 2x2 IDCT for 4:2:0 chroma.
        interpolated = frame.components.map { $0.horizontal * 2 == maxHorizontal && $0.vertical * 2 == frame.maxVertical }
        upsampled = frame.components.map { _ in [UInt8](repeating: 0, count: width) }
        rows = [UInt8](repeating: 0, count: frame.maxVertical * width * format.channelCount)
    }

    func decodeRows(into target: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        try checkRows(from: outputRow, count: count, name: name)
        let rowBytes = size.width * format.channelCount
        for row in 0..<count {
            if rowsTaken == rowsReady {
                // Interpolated chroma needs the MCU rows above and below the one being emitted.
                while mcuRow < min(emittedMCURows + 2, frame.mcusDown) { try decodeMCURow() }
                emitRows(ofMCURow: emittedMCURows)
                emittedMCURows += 1
            }
            rows.withUnsafeBytes { source in
                (target + row * bytesPerRow).copyMemory(from: source.baseAddress! + rowsTaken * rowBytes, byteCount: rowBytes)
            }
            rowsTaken += 1
            outputRow += 1
        }
    }

    // MARK: - Entropy decoding

    /// Decodes the next row of MCUs from every DC scan and converts it into output rows.
    private func decodeMCURow() throws {
        for cursor in cursors {
            try decode(cursor, mcuRow: mcuRow)
            if cursor.reader.overran && !allowPartial {
                if cursor.reader.marker == 0 {
                    throw TesseraError.truncated(path: name, detail: "in a DC scan, before row \((outputRow + 1).grouped)"
                                                 + " of \(size.height.grouped) at 1/8 scale")
                }
                throw TesseraError.corrupt(path: name, detail: "a DC scan's data ends early, before row"
                                           + " \((outputRow + 1).grouped) of \(size.height.grouped) at 1/8 scale")
            }
        }
        storeSamples(ofMCURow: mcuRow)
        mcuRow += 1
    }

    private func decode(_ cursor: ScanCursor, mcuRow: Int) throws {
        let scan = cursor.scan
        if scan.components.count == 1 {
            // A one-component scan codes that component's blocks in raster order, with no MCU padding.
            let component = scan.components[0], info = frame.components[component]
            let firstRow = mcuRow * info.vertical, lastRow = min(firstRow + info.vertical, info.blocksDown)
            guard firstRow < lastRow else { return }
            try coefficients[component].withUnsafeMutableBufferPointer { blocks in
                for blockRow in firstRow..<lastRow {
                    let base = (blockRow - firstRow) * strides[component]
                    for column in 0..<info.blocksAcross {
                        try startUnit(cursor)
                        try decodeBlock(cursor, position: 0, into: &blocks[base + column])
                    }
                }
            }
            return
        }
        for mcu in 0..<frame.mcusAcross {
            try startUnit(cursor)
            for (position, component) in scan.components.enumerated() {
                let info = frame.components[component], stride = strides[component]
                try coefficients[component].withUnsafeMutableBufferPointer { blocks in
                    for blockRow in 0..<info.vertical {
                        for blockColumn in 0..<info.horizontal {
                            try decodeBlock(cursor, position: position,
                                            into: &blocks[blockRow * stride + mcu * info.horizontal + blockColumn])
                        }
                    }
                }
            }
        }
    }

    /// Steps over a restart marker when the interval is used up, resetting the predictions.
    @inline(__always)
    private func startUnit(_ cursor: ScanCursor) throws {
        let interval = cursor.scan.restartInterval
        guard interval > 0 else { return }
        if cursor.started && cursor.restartsLeft == 0 {
            guard cursor.reader.restart(expecting: cursor.nextRestart) || allowPartial else {
                throw TesseraError.corrupt(path: name, detail: "restart marker \(cursor.nextRestart & 7) is missing"
                                           + " before row \((outputRow + 1).grouped) at 1/8 scale")
            }
            cursor.nextRestart += 1
            cursor.restartsLeft = interval
            for index in cursor.predictions.indices { cursor.predictions[index] = 0 }
        }
        cursor.started = true
        cursor.restartsLeft -= 1
    }

    /// Decodes one block's DC from a first scan (the difference from the prediction, shifted by Al) or a
    /// refinement scan (one more bit, ORed in at Al), as libjpeg's `decode_mcu_DC_first` and `_refine` do.
    @inline(__always)
    private func decodeBlock(_ cursor: ScanCursor, position: Int, into coefficient: inout Int16) throws {
        let scan = cursor.scan, reader = cursor.reader
        if scan.approximationHigh == 0 {
            guard let size = scan.dcTables[position].decode(reader), size <= 15 else {
                if allowPartial { return }
                throw TesseraError.corrupt(path: name, detail: "a DC scan holds an invalid Huffman code before row"
                                           + " \((outputRow + 1).grouped) at 1/8 scale")
            }
            let difference = size == 0 ? 0 : reader.readSigned(Int(size))
            cursor.predictions[position] &+= difference
            coefficient = Int16(truncatingIfNeeded: cursor.predictions[position] << scan.approximationLow)
        } else if reader.read(1) != 0 {
            coefficient |= Int16(truncatingIfNeeded: 1 << scan.approximationLow)
        }
    }

    // MARK: - Samples and colour

    /// Dequantises the MCU row just decoded into its slot of `samples`.
    private func storeSamples(ofMCURow row: Int) {
        for component in frame.components.indices {
            let factor = quantization[component]
            coefficients[component].withUnsafeBufferPointer { source in
                samples[component][row % 3].withUnsafeMutableBufferPointer { target in
                    for index in source.indices { target[index] = Self.sample(source[index], quantization: factor) }
                }
            }
        }
    }

    /// Makes the output rows of MCU row `row`; the rows above and below it are in `samples` too.
    private func emitRows(ofMCURow row: Int) {
        let width = size.width
        rowsReady = min(frame.maxVertical, size.height - row * frame.maxVertical)
        rowsTaken = 0
        for local in 0..<rowsReady {
            let y = row * frame.maxVertical + local
            for component in frame.components.indices {
                if interpolated[component] { interpolate(component, outputRow: y) } else { replicate(component, outputRow: y) }
            }
            let base = local * width * format.channelCount
            rows.withUnsafeMutableBufferPointer { output in
                switch transform {
                case .gray:
                    for x in 0..<width { output[base + x] = upsampled[0][x] }
                case .rgb:
                    for x in 0..<width {
                        for channel in 0..<3 { output[base + 3 * x + channel] = upsampled[channel][x] }
                    }
                case .ycbcr:
                    for x in 0..<width {
                        let luma = Int(upsampled[0][x]), blue = Int(upsampled[1][x]), red = Int(upsampled[2][x])
                        output[base + 3 * x] = Self.clamp(luma + Self.redFromCr[red])
                        output[base + 3 * x + 1] = Self.clamp(luma + (Self.greenFromCb[blue] + Self.greenFromCr[red]) >> 16)
                        output[base + 3 * x + 2] = Self.clamp(luma + Self.blueFromCb[blue])
                    }
                }
            }
        }
    }

    /// The component's samples for one output row, each repeated across as libjpeg's box upsampling does.
    private func replicate(_ component: Int, outputRow y: Int) {
        let info = frame.components[component]
        let sampleRow = y * info.vertical / frame.maxVertical
        let start = (sampleRow % info.vertical) * strides[component], map = columnMaps[component]
        samples[component][sampleRow / info.vertical % 3].withUnsafeBufferPointer { source in
            upsampled[component].withUnsafeMutableBufferPointer { target in
                for x in target.indices { target[x] = source[start + map[x]] }
            }
        }
    }

    /// The component's samples for one output row, doubled both ways with libjpeg's triangle filter: where
    /// libjpeg scales such chroma by a 2x2 IDCT, this follows its gradients far more closely than repeating.
    private func interpolate(_ component: Int, outputRow y: Int) {
        let info = frame.components[component], stride = strides[component]
        let near = y / 2, far = min(max(y % 2 == 0 ? near - 1 : near + 1, 0), info.blocksDown - 1)
        func rowStart(_ sampleRow: Int) -> (slot: Int, offset: Int) {
            (sampleRow / info.vertical % 3, sampleRow % info.vertical * stride)
        }
        let (nearSlot, nearOffset) = rowStart(min(near, info.blocksDown - 1)), (farSlot, farOffset) = rowStart(far)
        let last = info.blocksAcross - 1
        samples[component][nearSlot].withUnsafeBufferPointer { nearRow in
            samples[component][farSlot].withUnsafeBufferPointer { farRow in
                upsampled[component].withUnsafeMutableBufferPointer { target in
                    func column(_ x: Int) -> Int { 3 * Int(nearRow[nearOffset + x]) + Int(farRow[farOffset + x]) }
                    for x in target.indices {
                        let here = min(x / 2, last), there = min(max(x % 2 == 0 ? here - 1 : here + 1, 0), last)
                        target[x] = UInt8((3 * column(here) + column(there) + 8) >> 4)
                    }
                }
            }
        }
    }

    /// libjpeg's 1x1 IDCT: the dequantised DC descaled by 8, rounded, centred on 128 and clamped.
    @inline(__always)
    private static func sample(_ coefficient: Int16, quantization: Int) -> UInt8 {
        clamp((Int(coefficient) * quantization + 4) >> 3 + 128)
    }

    @inline(__always)
    private static func clamp(_ value: Int) -> UInt8 { UInt8(max(0, min(255, value))) }

    // libjpeg's YCbCr -> RGB tables (jdcolor.c): 16-bit fixed point, rounded the same way.
    private static func fixed(_ value: Double) -> Int { Int(value * 65536 + 0.5) }
    private static let redFromCr = (0..<256).map { (fixed(1.402) * ($0 - 128) + 32768) >> 16 }
    private static let blueFromCb = (0..<256).map { (fixed(1.772) * ($0 - 128) + 32768) >> 16 }
    private static let greenFromCr = (0..<256).map { -fixed(0.71414) * ($0 - 128) }
    private static let greenFromCb = (0..<256).map { -fixed(0.34414) * ($0 - 128) + 32768 }
}
