import Foundation

/// Cuts a JPEG down to its top-left corner, or stretches it a pixel or two past its real pixels, in its
/// entropy-coded data: what `JPEGCoefficientCrop` makes through libjpeg, without libjpeg's decode and encode of the
/// whole JPEG. The scan is walked once in Swift to find where each MCU's bits start and end; the corner's MCUs are
/// then copied bit for bit, and only what changes is coded again with the JPEG's own Huffman tables: the MCUs along
/// a stretched edge (`JPEGCoefficientCrop.EdgeBlocks`) and past the source's, and where only an MCU's DC prediction
/// differs from the source's (the first of each row when the rows get shorter), each component's first DC
/// difference. The headers are the source's, the frame's size changed.
///
/// Only a baseline or extended sequential Huffman JPEG of 8-bit samples with one scan of every component and no
/// restart markers, of at most `JPEGCoefficientCrop.maxPixels`, is spliced (every stored tile libvips, libtiff and
/// Tessera write); `topLeft` answers nil for anything else, for data cut short, and where a changed block needs a
/// code the tables lack, so that the caller crops through libjpeg.
enum JPEGEntropySplice {
    /// The top-left `size` of `jpeg` (a complete JPEG file) whose real pixels are its top-left `content` (the
    /// whole JPEG when nil), as `JPEGCoefficientCrop.topLeft` defines it; nil when this JPEG cannot be spliced.
    static func topLeft(of jpeg: [UInt8], size: Size, content: Size?, name: String) throws -> [UInt8]? {
        let index = try JPEGScanIndex(input: .bytes(jpeg, name: name))
        let frame = index.frame
        let content = content ?? Size(width: frame.width, height: frame.height)
        let reach = JPEGCoefficientCrop.maxExtension
        guard frame.isHuffmanSequential, frame.precision == 8, index.scans.count == 1, let scan = index.scans.first,
              scan.restartInterval == 0, scan.components == Array(frame.components.indices),
              scan.spectralStart == 0, scan.spectralEnd == 63, scan.dcTables.count == frame.components.count,
              scan.acTables.count == frame.components.count, frame.components.count <= 4,
              frame.width * frame.height <= JPEGCoefficientCrop.maxPixels,
              size.width >= 1, size.height >= 1, size.width <= 0xFFFF, size.height <= 0xFFFF,
              content.width >= 1, content.height >= 1, content.width <= frame.width, content.height <= frame.height,
              size.width <= content.width + reach, size.height <= content.height + reach,
              index.quantization.allSatisfy({ $0 != nil })
        else { return nil }
        let splice = Splice(frame: frame, scan: scan, size: size, content: content,
                            tables: index.quantization.map { $0!.map(Float.init) })
        return try jpeg.withUnsafeBufferPointer { bytes in
            try splice.run(on: UnsafeBufferPointer(rebasing: bytes[scan.dataOffset...]))
        }.map { data in
            var output = Array(jpeg[..<scan.dataOffset])
            output[index.frameOffset + 1] = UInt8(size.height >> 8)
            output[index.frameOffset + 2] = UInt8(size.height & 0xFF)
            output[index.frameOffset + 3] = UInt8(size.width >> 8)
            output[index.frameOffset + 4] = UInt8(size.width & 0xFF)
            return output + data + [0xFF, 0xD9]
        }
    }

    /// One splice's geometry and its source's coefficients, decoded MCU row by MCU row as far as the corner needs.
    private struct Splice {
        let scan: JPEGScanIndex.Scan
        let size: Size, content: Size
        /// Each component's quantisation table, natural order.
        let tables: [[Float]]
        /// Each component's sampling factors (1 x 1 for a one-component JPEG, whose scan codes blocks, not MCUs).
        let sampling: [(horizontal: Int, vertical: Int)]
        let maxSampling: (Int, Int)
        /// MCUs across and down: the source's, and the corner's.
        let sourceMCUs: (across: Int, down: Int), mcus: (across: Int, down: Int)
        /// MCU rows of the source decoded: those the corner keeps.
        let rows: Int
        /// Each component's blocks in a row of the source's MCUs.
        let blocksAcross: [Int]

        init(frame: JPEGFrameHeader, scan: JPEGScanIndex.Scan, size: Size, content: Size, tables: [[Float]]) {
            self.scan = scan
            self.size = size
            self.content = content
            self.tables = tables
            sampling = frame.components.count == 1 ? [(1, 1)] : frame.components.map { ($0.horizontal, $0.vertical) }
            maxSampling = (sampling.map(\.horizontal).max()!, sampling.map(\.vertical).max()!)
            let mcuWidth = 8 * maxSampling.0, mcuHeight = 8 * maxSampling.1
            sourceMCUs = ((frame.width + mcuWidth - 1) / mcuWidth, (frame.height + mcuHeight - 1) / mcuHeight)
            mcus = ((size.width + mcuWidth - 1) / mcuWidth, (size.height + mcuHeight - 1) / mcuHeight)
            rows = min(sourceMCUs.down, mcus.down)
            let across = sourceMCUs.across
            blocksAcross = sampling.map { across * $0.horizontal }
        }

        /// Why a splice gives up for libjpeg to crop instead.
        private struct Declined: Error {}

        /// The corner's entropy-coded data from the source's (`data`, from the first byte after the scan header);
        /// nil when it cannot be spliced.
        func run(on data: UnsafeBufferPointer<UInt8>) throws -> [UInt8]? {
            let unstuffed = Self.unstuffed(data)
            defer { unstuffed.bytes.deallocate() }
            let components = sampling.count
            // Each component's decoded blocks, `blocksAcross` to a row: every block's DC, and all 64 coefficients
            // only of the blocks coded again (the MCU columns and rows along the new edge). The rest are copied
            // as coded, so their AC coefficients are walked past, not stored, and their memory never touched.
            let planeCounts = (0..<components).map { blocksAcross[$0] * rows * sampling[$0].vertical * 64 }
            let coefficients = UnsafeMutablePointer<Int16>.allocate(capacity: planeCounts.reduce(0, +))
            defer { coefficients.deallocate() }
            let planes = (0..<components).map { coefficients + planeCounts[..<$0].reduce(0, +) }
            let edges = (0..<components).map { c in
                let plane = planes[c], across = blocksAcross[c], down = rows * sampling[c].vertical
                return JPEGCoefficientCrop.EdgeBlocks(
                    content: content, size: size, sampling: sampling[c], maxSampling: maxSampling, table: tables[c]
                ) { column, row in
                    guard column < across, row < down else { throw Declined() }
                    return UnsafePointer(plane + (row * across + column) * 64)
                }
            }
            // The MCU columns and rows holding a block that meets the edge, in any component: coded again.
            let editedColumns = (0..<mcus.across).map { across in
                (0..<components).contains { c in
                    (0..<sampling[c].horizontal).contains { edges[c].columnMeetsEdge(across * sampling[c].horizontal + $0) }
                }
            }
            let editedRows = (0..<mcus.down).map { down in
                (0..<components).contains { c in
                    (0..<sampling[c].vertical).contains { edges[c].rowMeetsEdge(down * sampling[c].vertical + $0) }
                }
            }
            // Kept whole: those, and the MCU column and row holding each component's last real blocks, which the
            // edge's are made from (at a block's boundary, not among the edited).
            var keptColumns = editedColumns, keptRows = editedRows
            for (c, edge) in edges.enumerated() {
                if edge.stretchesAcross { keptColumns[edge.lastColumn / sampling[c].horizontal] = true }
                if edge.stretchesDown { keptRows[edge.lastRow / sampling[c].vertical] = true }
            }
            // Where each MCU's blocks of each component start (MCU after MCU, then the end of the last), and where
            // the first of them has its AC codes, after its DC difference.
            var starts = [Int](repeating: 0, count: rows * sourceMCUs.across * components + 1)
            var afterDC = [Int](repeating: 0, count: rows * sourceMCUs.across * components)
            var cursor = JPEGBitCursor(bytes: unstuffed.bytes, bitCount: unstuffed.bitCount)
            let decoded = starts.withUnsafeMutableBufferPointer { starts in
                afterDC.withUnsafeMutableBufferPointer { afterDC in
                    decode(&cursor, into: planes, keptColumns: keptColumns, keptRows: keptRows,
                           starts: starts.baseAddress!, afterDC: afterDC.baseAddress!)
                }
            }
            guard decoded else { return nil }
            starts[rows * sourceMCUs.across * components] = cursor.position
            // Each component's DC table's codes, then its AC table's.
            let codes = (scan.dcTables + scan.acTables).flatMap(\.lookup.encodingTable)
            do {
                return try codes.withUnsafeBufferPointer { codes in
                    try write(planes: planes, edges: edges, editedColumns: editedColumns, editedRows: editedRows,
                              starts: starts, afterDC: afterDC, bits: unstuffed.bytes,
                              dc: (0..<components).map { codes.baseAddress! + 256 * $0 },
                              ac: (0..<components).map { codes.baseAddress! + 256 * (components + $0) })
                }
            } catch is Declined {
                return nil
            }
        }

        /// Decodes the first `rows` rows of the source's MCUs from `cursor`: every block's DC into `planes`, and
        /// its AC coefficients too in the MCU columns and rows kept; where each MCU's blocks of each component
        /// start into `starts`, and where the first of them has its AC codes into `afterDC`. False on data that
        /// does not decode.
        private func decode(_ cursor: inout JPEGBitCursor, into planes: [UnsafeMutablePointer<Int16>],
                            keptColumns: [Bool], keptRows: [Bool], starts: UnsafeMutablePointer<Int>,
                            afterDC: UnsafeMutablePointer<Int>) -> Bool {
            let components = sampling.count
            let dc = scan.dcTables.map(\.lookup), ac = scan.acTables.map(\.lookup), order = JPEGScanState.naturalOrder
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: components) { predictions in
                predictions.initialize(repeating: 0)
                var slot = 0
                for down in 0..<rows {
                    for across in 0..<sourceMCUs.across {
                        let keeping = across < mcus.across && (keptColumns[across] || keptRows[down])
                        for c in 0..<components {
                            let (horizontal, vertical) = sampling[c], stride = blocksAcross[c]
                            let first = planes[c] + (down * vertical * stride + across * horizontal) * 64
                            starts[slot] = cursor.position
                            for v in 0..<vertical {
                                for h in 0..<horizontal {
                                    let block = first + (v * stride + h) * 64
                                    if keeping { block.initialize(repeating: 0, count: 64) }
                                    var dcEnd = 0
                                    guard Self.decode(into: block, from: &cursor, dc: dc[c], ac: ac[c], order: order,
                                                      keeping: keeping, prediction: &predictions[c], dcEnd: &dcEnd),
                                          !cursor.overran
                                    else { return false }
                                    if v == 0 && h == 0 { afterDC[slot] = dcEnd }
                                }
                            }
                            slot += 1
                        }
                    }
                }
                return true
            }
        }

        /// The corner's MCUs in order: copied where the source codes the same blocks from the same prediction; where
        /// only the prediction differs, each component's first DC difference coded again and the rest copied; coded
        /// again where the blocks change, with each component's DC and AC codes (`encodingTable`, 256 each).
        private func write(planes: [UnsafeMutablePointer<Int16>], edges: [JPEGCoefficientCrop.EdgeBlocks],
                           editedColumns: [Bool], editedRows: [Bool], starts: [Int], afterDC: [Int],
                           bits: UnsafePointer<UInt8>, dc: [UnsafePointer<UInt32>], ac: [UnsafePointer<UInt32>]) throws
            -> [UInt8] {
            let components = sampling.count
            var writer = JPEGBitWriter(bits: starts.last!)
            var predictions = [Int](repeating: 0, count: components)
            // The block being coded again.
            let target = UnsafeMutablePointer<Int16>.allocate(capacity: 64)
            target.initialize(repeating: 0, count: 64)
            defer { target.deallocate() }
            /// The DC of the last block of component `c` in the source's MCU at `across`, `down`.
            func lastDC(_ c: Int, _ across: Int, _ down: Int) -> Int {
                let (horizontal, vertical) = sampling[c]
                return Int(planes[c][(((down + 1) * vertical - 1) * blocksAcross[c] + (across + 1) * horizontal - 1) * 64])
            }
            for down in 0..<mcus.down {
                for across in 0..<mcus.across {
                    let inSource = across < sourceMCUs.across && down < rows
                    let changed = !inSource || editedColumns[across] || editedRows[down]
                    if !changed {
                        // The source's prediction at this MCU: its previous MCU's last DCs, 0 at the start.
                        let mcu = down * sourceMCUs.across + across
                        let same = mcu == 0 ? predictions.allSatisfy { $0 == 0 } : (0..<components).allSatisfy {
                            predictions[$0] == lastDC($0, (mcu - 1) % sourceMCUs.across, (mcu - 1) / sourceMCUs.across)
                        }
                        if same {
                            writer.copy(bits, from: starts[mcu * components], to: starts[(mcu + 1) * components])
                        }
                        for c in 0..<components {
                            if !same {
                                let first = mcu * components + c
                                let (horizontal, vertical) = sampling[c]
                                let difference = Int(planes[c][(down * vertical * blocksAcross[c] + across * horizontal) * 64])
                                    - predictions[c]
                                guard Self.encodeDC(difference, table: dc[c], into: &writer) else {
                                    throw Declined()
                                }
                                writer.copy(bits, from: afterDC[first], to: starts[first + 1])
                            }
                            predictions[c] = lastDC(c, across, down)
                        }
                        continue
                    }
                    for c in 0..<components {
                        let (horizontal, vertical) = sampling[c]
                        for v in 0..<vertical {
                            for h in 0..<horizontal {
                                let column = across * horizontal + h, row = down * vertical + v
                                if edges[c].meetsEdge(column: column, row: row) {
                                    try edges[c].extend(into: target, column: column, row: row)
                                } else if column < blocksAcross[c], row < rows * vertical {
                                    target.update(from: planes[c] + (row * blocksAcross[c] + column) * 64, count: 64)
                                } else {
                                    // Past the corner and past the source: never shown.
                                    target.update(repeating: 0, count: 64)
                                }
                                guard Self.encode(target, prediction: predictions[c], dc: dc[c], ac: ac[c],
                                                  into: &writer) else { throw Declined() }
                                predictions[c] = Int(target[0])
                            }
                        }
                    }
                }
            }

            return writer.finish()
        }

        /// The scan's entropy-coded bytes up to the marker that ends them, stuffed zero bytes taken out, then 16
        /// zero bytes (what `JPEGBitCursor` reads past the end); the caller deallocates `bytes`.
        static func unstuffed(_ data: UnsafeBufferPointer<UInt8>) -> (bytes: UnsafeMutablePointer<UInt8>, bitCount: Int) {
            let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: data.count + 16)
            var count = 0, at = 0
            while let base = data.baseAddress, at < data.count {
                // The bytes up to the next 0xFF (some hundreds, in coded data) are copied as they are.
                let rest = data.count - at
                let run = memchr(base + at, 0xFF, rest).map { UnsafeRawPointer($0) - UnsafeRawPointer(base + at) } ?? rest
                (bytes + count).initialize(from: base + at, count: run)
                count += run
                at += run
                // A 0xFF is data when a stuffed zero byte follows; else a marker ends the data.
                guard at + 1 < data.count, data[at + 1] == 0 else { break }
                bytes[count] = 0xFF
                count += 1
                at += 2
            }
            (bytes + count).initialize(repeating: 0, count: 16)
            return (bytes, 8 * count)
        }

        /// Decodes one block (T.81 F.2.2) into 64 coefficients in natural order, only its DC unless `keeping`;
        /// false on an invalid code or a run past the block's end.
        @inline(__always)
        static func decode(into block: UnsafeMutablePointer<Int16>, from cursor: inout JPEGBitCursor,
                           dc: JPEGHuffmanTable.Lookup, ac: JPEGHuffmanTable.Lookup, order: UnsafePointer<Int>,
                           keeping: Bool, prediction: inout Int, dcEnd: inout Int) -> Bool {
            // Decoded from a local copy, which stays in registers: through `inout` every bit consumed was stored.
            var reader = cursor
            defer { cursor = reader }
            guard let (run, _, difference) = dc.decodeCoefficient(&reader), run == 0 else { return false }
            dcEnd = reader.position
            prediction &+= difference
            block.pointee = Int16(truncatingIfNeeded: prediction)
            return keeping ? ac.decodeSequentialAC(&reader, into: block, order: order, keeping: true)
                : ac.decodeSequentialAC(&reader, into: block, order: order, keeping: false)
        }

        /// Codes a DC difference (its size's code, then its bits) with the DC table's codes; false when the size
        /// has no code or is too large for 8-bit samples.
        @inline(__always)
        static func encodeDC(_ difference: Int, table: UnsafePointer<UInt32>, into writer: inout JPEGBitWriter) -> Bool {
            let coded = magnitude(difference)
            return coded.size <= 11 && put(coded.size, table, then: coded, into: &writer)
        }

        /// A value's size in bits and those bits (a negative value's ones' complement), F.1.2.1.
        @inline(__always)
        static func magnitude(_ value: Int) -> (size: Int, bits: UInt32) {
            let size = value == 0 ? 0 : Int.bitWidth - abs(value).leadingZeroBitCount
            return (size, UInt32(truncatingIfNeeded: value < 0 ? value - 1 : value))
        }

        /// Writes `symbol`'s code from `table` (`encodingTable`, 256 entries), then the `value` bits after it
        /// (at most 11: with a code of at most 16, one write); false when the table has no code for it.
        @inline(__always)
        static func put(_ symbol: Int, _ table: UnsafePointer<UInt32>, then value: (size: Int, bits: UInt32) = (0, 0),
                        into writer: inout JPEGBitWriter) -> Bool {
            let code = table[symbol]
            guard code != 0 else { return false }
            let length = Int(code & 0xFF), mask = UInt32(1) &<< UInt32(value.size) &- 1
            writer.write((code >> 8) &<< UInt32(value.size) | value.bits & mask, bits: length + value.size)
            return true
        }

        /// Codes one block (T.81 F.1.2) with the tables' codes (`encodingTable`); false when a symbol has no code
        /// or a value is too large for 8-bit samples.
        static func encode(_ block: UnsafePointer<Int16>, prediction: Int, dc: UnsafePointer<UInt32>,
                           ac: UnsafePointer<UInt32>, into writer: inout JPEGBitWriter) -> Bool {
            guard encodeDC(Int(block[0]) - prediction, table: dc, into: &writer) else { return false }
            // The nonzero AC coefficients, bit k for zigzag position k, visited in order.
            let order = JPEGScanState.naturalOrder
            var nonzero: UInt64 = 0
            for k in 1..<64 { nonzero |= (block[order[k]] != 0 ? 1 : 0) << UInt64(k) }
            var previous = 0
            while nonzero != 0 {
                let k = nonzero.trailingZeroBitCount
                nonzero &= nonzero - 1
                var run = k - previous - 1
                while run > 15 {
                    guard put(0xF0, ac, into: &writer) else { return false }
                    run -= 16
                }
                let coded = magnitude(Int(block[order[k]]))
                guard coded.size <= 10, put(run << 4 | coded.size, ac, then: coded, into: &writer) else { return false }
                previous = k
            }
            let run = 63 - previous
            return run == 0 || put(0x00, ac, into: &writer)
        }
    }
}
