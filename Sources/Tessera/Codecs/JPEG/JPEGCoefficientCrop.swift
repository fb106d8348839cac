import CCodecShims
import CJPEG
import Foundation

/// Cuts a JPEG down to its top-left corner, or stretches it by a pixel or two past its real pixels, in its
/// coefficients, as `jpegtran -crop WxH+0+0` does: the quantised coefficients of the blocks inside the corner are
/// copied into a new JPEG with the same tables, so their pixels are those stored. Where the corner reaches past
/// `content` (the real pixels of a padded edge tile, or the whole JPEG), only the blocks that meet the new edge are
/// made again: their last real column and row repeated (in their coefficients, `EdgeBlocks`) and quantised with
/// the same tables.
/// This is how a pyramid's padded edge tile is sent at its real size, or at the pixel more a viewer asks for, with
/// no decode of the whole tile and no encode. A corner that codes the same blocks as the whole JPEG (its real
/// pixels end in the last MCU column and row) is the JPEG itself with the new size in its frame header; any other
/// corner of a sequential JPEG is spliced from its entropy-coded data (`JPEGEntropySplice`), the MCUs that do not
/// change copied bit for bit; libjpeg makes the rest.
enum JPEGCoefficientCrop {
    /// How far past its real pixels, on each axis, a corner may reach.
    static let maxExtension = 2

    /// The largest JPEG cut or stretched, in pixels (4096 x 4096): its coefficients are held while it is, and a
    /// stored tile is far smaller. A tile whose header claims more is refused before anything is allocated for it.
    static let maxPixels = 1 << 24

    /// Whether a corner of `size` can be cut from real pixels of `content`: within `maxExtension` on each axis,
    /// either way (a viewer's size a pixel or two off a tile's, by rounding).
    static func reaches(_ size: Size, from content: Size) -> Bool {
        size.width >= 1 && size.height >= 1 && abs(size.width - content.width) <= maxExtension
            && abs(size.height - content.height) <= maxExtension
    }

    /// The top-left `size` of `jpeg` (a complete JPEG file) as a JPEG file, its pixels past `content` (the real
    /// pixels, the whole JPEG when nil) the last real column and row repeated; `size` may reach at most
    /// `maxExtension` pixels past `content`, and `content` lies inside the JPEG.
    static func topLeft(of jpeg: [UInt8], size: Size, content: Size? = nil, name: String) throws -> [UInt8] {
        if let content, size.width <= content.width, size.height <= content.height,
           let relabelled = sameBlocks(jpeg, size: size) {
            return relabelled
        }
        if let spliced = try JPEGEntropySplice.topLeft(of: jpeg, size: size, content: content, name: name) {
            return spliced
        }
        return try throughLibJPEG(jpeg, size: size, content: content, name: name)
    }

    /// `topLeft` made by libjpeg: every coefficient read, the edge blocks made again, every block coded again.
    /// For what `JPEGEntropySplice` declines (progressive JPEGs, restart markers, a code the tables lack).
    static func throughLibJPEG(_ jpeg: [UInt8], size: Size, content: Size?, name: String) throws -> [UInt8] {
        let session = try JPEGSession(input: .bytes(jpeg, name: name))
        let info = session.info.pointee
        let whole = Size(width: Int(info.image_width), height: Int(info.image_height))
        let content = content ?? whole
        guard size.width >= 1, size.height >= 1, content.width >= 1, content.height >= 1,
              content.width <= whole.width, content.height <= whole.height,
              size.width <= content.width + maxExtension, size.height <= content.height + maxExtension else {
            throw TesseraError.invalidArgument("\(name): cannot crop a \(whole.width)x\(whole.height) JPEG to \(size)")
        }
        guard whole.width * whole.height <= maxPixels else {
            throw TesseraError.unsupported(path: name, feature: "cutting a \(whole.width)x\(whole.height) JPEG in its "
                                               + "coefficients (at most \(maxPixels.grouped) pixels)")
        }
        try session.check(tessera_jpeg_read_coefficients(session.decoder), during: "reading coefficients")
        guard let encoder = tessera_jpeg_encoder_create() else {
            throw TesseraError.io(path: name, detail: "cannot create a JPEG encoder")
        }
        defer { tessera_jpeg_encoder_destroy(encoder) }
        func check(_ status: Int32) throws {
            guard status == 0 else { return }
            let message = String(cString: tessera_jpeg_encoder_message(encoder))
            throw TesseraError.corrupt(path: name, detail: "\(message) (while cropping coefficients)")
        }
        try check(tessera_jpeg_encoder_setup_coefficients(encoder, session.decoder, JDIMENSION(size.width),
                                                          JDIMENSION(size.height)))
        let target = tessera_jpeg_encoder_info(encoder)!.pointee
        var maxHorizontal = 1, maxVertical = 1
        for component in 0..<Int(target.num_components) {
            maxHorizontal = max(maxHorizontal, Int(target.comp_info[component].h_samp_factor))
            maxVertical = max(maxVertical, Int(target.comp_info[component].v_samp_factor))
        }
        // Whole MCUs of the corner: the arrays the new JPEG holds.
        let mcusAcross = (size.width + 8 * maxHorizontal - 1) / (8 * maxHorizontal)
        let mcusDown = (size.height + 8 * maxVertical - 1) / (8 * maxVertical)
        for component in 0..<Int(target.num_components) {
            let horizontal = Int(target.comp_info[component].h_samp_factor)
            let vertical = Int(target.comp_info[component].v_samp_factor)
            let sourceInfo = info.comp_info[component]
            // The source's arrays, in blocks (whole MCUs).
            let sourceColumns = roundUp(Int(sourceInfo.width_in_blocks), horizontal)
            let sourceRows = roundUp(Int(sourceInfo.height_in_blocks), vertical)
            // The new JPEG's tables are the source's (jpeg_copy_critical_parameters).
            let table = (session.quantization(component: component) ?? [Int](repeating: 1, count: 64)).map(Float.init)
            let edge = EdgeBlocks(content: content, size: size, sampling: (horizontal, vertical),
                                  maxSampling: (maxHorizontal, maxVertical), table: table) { column, row in
                guard let blocks = tessera_jpeg_decoder_block_row(session.decoder, Int32(component), JDIMENSION(row)) else {
                    try session.check(0, during: "reading coefficients")
                    throw TesseraError.corrupt(path: name, detail: "a block row cannot be read (while cropping coefficients)")
                }
                return UnsafeRawPointer(blocks + column).assumingMemoryBound(to: Int16.self)
            }
            for row in 0..<mcusDown * vertical {
                guard let to = tessera_jpeg_encoder_block_row(encoder, Int32(component), JDIMENSION(row)) else {
                    try check(0)
                    return []
                }
                let from = row < sourceRows ? tessera_jpeg_decoder_block_row(session.decoder, Int32(component), JDIMENSION(row)) : nil
                if row < sourceRows, from == nil { try session.check(0, during: "reading coefficients") }
                for column in 0..<mcusAcross * horizontal {
                    let block = UnsafeMutableRawPointer(to + column).assumingMemoryBound(to: JCOEF.self)
                    if edge.meetsEdge(column: column, row: row) {
                        try edge.extend(into: block, column: column, row: row)
                    } else if let from, column < sourceColumns {
                        block.update(from: UnsafeRawPointer(from + column).assumingMemoryBound(to: JCOEF.self), count: 64)
                    } else {
                        // Past the corner and past the source: never shown.
                        block.update(repeating: 0, count: 64)
                    }
                }
            }
        }
        try check(tessera_jpeg_finish_compress(encoder))
        var count: UInt = 0
        let output = tessera_jpeg_encoder_output(encoder, &count)
        return Array(UnsafeBufferPointer(start: output, count: Int(count)))
    }

    /// `jpeg` with its frame header saying `size`, when a JPEG of that size codes exactly the blocks it codes (the
    /// corner leaves out only samples of its last MCU column and row: a padded edge tile whose real pixels end in
    /// its last MCUs): decoders then crop those MCUs to the new size, so the corner is exact and nothing is decoded
    /// or encoded. Nil when the sizes' blocks differ (the MCUs, and each component's blocks where a scan codes a
    /// component alone), or the frame header is not found, is not the only one, or says no height (DNL).
    static func sameBlocks(_ jpeg: [UInt8], size: Size) -> [UInt8]? {
        guard size.width >= 1, size.height >= 1, size.width <= 0xFFFF, size.height <= 0xFFFF else { return nil }
        // The frame header, and whether every scan interleaves every component (then only whole MCUs are coded).
        let (frame, interleaved): (JPEGSegment?, Bool) = jpeg.withUnsafeBytes { bytes in
            var tokenizer = JPEGMarkerTokenizer()
            var frame: JPEGSegment?, interleaved = true, scans = 0
            while let token = tokenizer.next(in: bytes) {
                guard case let .segment(segment) = token else { continue }
                // SOF0-SOF15 but DHT (C4), JPG (C8) and DAC (CC). A second one (damage: decoders read the first,
                // or give up) leaves the size to what decodes the JPEG.
                if (0xC0...0xCF).contains(segment.marker), ![0xC4, 0xC8, 0xCC].contains(segment.marker) {
                    guard frame == nil else { return (nil, false) }
                    frame = segment
                } else if segment.marker == 0xDA, let frame, frame.payload.count >= 6, segment.payload.count >= 1,
                          segment.payload.upperBound <= bytes.count {
                    scans += 1
                    interleaved = interleaved && bytes[segment.payload.lowerBound] == bytes[frame.payload.lowerBound + 5]
                } else if segment.marker == 0xD9 {
                    break
                }
            }
            return (frame, interleaved && scans > 0)
        }
        guard let frame, frame.payload.upperBound <= jpeg.count, frame.payload.count >= 6 else { return nil }
        let start = frame.payload.lowerBound
        let height = Int(jpeg[start + 1]) << 8 | Int(jpeg[start + 2])
        let width = Int(jpeg[start + 3]) << 8 | Int(jpeg[start + 4])
        let components = Int(jpeg[start + 5])
        guard height > 0, width > 0, components >= 1, frame.payload.count >= 6 + 3 * components else { return nil }
        let factors = (0..<components).map { (Int(jpeg[start + 7 + 3 * $0] >> 4), Int(jpeg[start + 7 + 3 * $0] & 15)) }
        let maxHorizontal = factors.map(\.0).max()!, maxVertical = factors.map(\.1).max()!
        guard factors.allSatisfy({ $0.0 >= 1 && $0.1 >= 1 }) else { return nil }
        /// MCUs across and down (what interleaved scans code, blocks past a component's edge included) and each
        /// component's blocks (what a scan of that component alone codes), T.81 A.1.1 and A.2.
        func blocks(_ size: Size) -> [Int] {
            var counts = [roundUp(size.width, 8 * maxHorizontal), roundUp(size.height, 8 * maxVertical)]
            for (horizontal, vertical) in factors where !interleaved || components == 1 {
                let samplesAcross = (size.width * horizontal + maxHorizontal - 1) / maxHorizontal
                let samplesDown = (size.height * vertical + maxVertical - 1) / maxVertical
                counts += [(samplesAcross + 7) / 8, (samplesDown + 7) / 8]
            }
            return counts
        }
        guard blocks(size) == blocks(Size(width: width, height: height)) else { return nil }
        var relabelled = jpeg
        relabelled[start + 1] = UInt8(size.height >> 8)
        relabelled[start + 2] = UInt8(size.height & 0xFF)
        relabelled[start + 3] = UInt8(size.width >> 8)
        relabelled[start + 4] = UInt8(size.width & 0xFF)
        return relabelled
    }

    private static func roundUp(_ value: Int, _ multiple: Int) -> Int { (value + multiple - 1) / multiple * multiple }

    /// The blocks of one component that meet the new edge, made from the source's real samples: each sample past
    /// the last real one is that one repeated. Repeating samples is linear, so it is done on the coefficients: a
    /// block's dequantised coefficients times the matrix that does it to an 8-sample line's DCT (`Repetition`),
    /// across and down, then quantised again. Each such block reads one source block (`sourceBlock`: 64 quantised
    /// coefficients in natural order): its own, or the last real one in its row or column (where the edge is).
    struct EdgeBlocks {
        /// The component's real samples and those asked for.
        let real: Size, asked: Size
        /// The component's quantisation table, one row of 8 per SIMD8, natural order.
        let table: [SIMD8<Float>]
        let lastColumn: Int, lastRow: Int
        let sourceBlock: (_ column: Int, _ row: Int) throws -> UnsafePointer<Int16>

        /// The edge of a component sampled `sampling` of `maxSampling` (its samples per MCU across and down) in
        /// an image whose `content` pixels are real and `size` asked for, quantised with `table` (64 in natural
        /// order). A subsampled sample that mixes a real pixel with padding counts as padding.
        init(content: Size, size: Size, sampling: (Int, Int), maxSampling: (Int, Int), table: [Float],
             sourceBlock: @escaping (_ column: Int, _ row: Int) throws -> UnsafePointer<Int16>) {
            let real = Size(width: max(1, content.width * sampling.0 / maxSampling.0),
                            height: max(1, content.height * sampling.1 / maxSampling.1))
            self.real = real
            asked = Size(width: (size.width * sampling.0 + maxSampling.0 - 1) / maxSampling.0,
                         height: (size.height * sampling.1 + maxSampling.1 - 1) / maxSampling.1)
            self.table = (0..<8).map { row in SIMD8((0..<8).map { table[8 * row + $0] }) }
            self.sourceBlock = sourceBlock
            lastColumn = (real.width - 1) / 8
            lastRow = (real.height - 1) / 8
        }

        /// Whether the block at `column`, `row` holds samples past the real ones that are asked for.
        func meetsEdge(column: Int, row: Int) -> Bool { columnMeetsEdge(column) || rowMeetsEdge(row) }

        /// Whether samples past the real ones are asked for across, and down.
        var stretchesAcross: Bool { asked.width > real.width }
        var stretchesDown: Bool { asked.height > real.height }

        /// Whether the blocks of block column `column` hold samples past the real ones across that are asked for.
        func columnMeetsEdge(_ column: Int) -> Bool {
            stretchesAcross && 8 * column + 8 > real.width && 8 * column < asked.width
        }

        /// Whether the blocks of block row `row` hold samples past the real ones down that are asked for.
        func rowMeetsEdge(_ row: Int) -> Bool {
            stretchesDown && 8 * row + 8 > real.height && 8 * row < asked.height
        }

        /// Writes the block at `column`, `row` (one that meets the edge) as quantised coefficients.
        func extend(into block: UnsafeMutablePointer<Int16>, column: Int, row: Int) throws {
            let sourceColumn = min(column, lastColumn), sourceRow = min(row, lastRow)
            let source = try sourceBlock(sourceColumn, sourceRow)
            // The last real sample's lane and line in the source block; past them, it is repeated: past its lane in
            // the block holding the edge, in every lane of a block wholly past it (and likewise down).
            let across = Repetition.matrix(last: min(7, real.width - 1 - 8 * sourceColumn),
                                           wholly: column != sourceColumn)
            let down = Repetition.matrix(last: min(7, real.height - 1 - 8 * sourceRow), wholly: row != sourceRow)
            table.withUnsafeBufferPointer { table in
                Repetition.matrices.withUnsafeBufferPointer { matrices in
                    withUnsafeTemporaryAllocation(of: SIMD8<Float>.self, capacity: 16) { scratch in
                        let lines = scratch.baseAddress!, coefficients = lines + 8
                        // Each line of coefficients (vertical frequency v) dequantised, then repeated across: the
                        // across matrix's rows weighted by its coefficients. A line of zeros (most of a block's) stays
                        // zero, and is left out of the sums down.
                        var nonzero: UInt8 = 0
                        for v in 0..<8 {
                            let quantised = UnsafeRawPointer(source + 8 * v).loadUnaligned(as: SIMD8<Int16>.self)
                            guard quantised != .zero else {
                                lines[v] = .zero
                                continue
                            }
                            nonzero |= 1 << v
                            let line = SIMD8<Float>(quantised) * table[v]
                            guard let across else {
                                lines[v] = line
                                continue
                            }
                            var sum = SIMD8<Float>()
                            for u in 0..<8 { sum += line[u] * matrices[across + u] }
                            lines[v] = sum
                        }
                        // Repeated down: output line k is the lines weighted by column k of the down matrix.
                        if let down {
                            for k in 0..<8 { coefficients[k] = .zero }
                            for v in 0..<8 where nonzero & 1 << v != 0 {
                                let line = lines[v], weights = matrices[down + v]
                                for k in 0..<8 { coefficients[k] += line * weights[k] }
                            }
                        } else {
                            coefficients.update(from: lines, count: 8)
                        }
                        for v in 0..<8 {
                            // A quantiser of 0 (invalid, but libjpeg reads it) makes every coefficient it scales 0.
                            let quantised = (coefficients[v] / table[v]).replacing(with: 0, where: table[v] .== 0)
                            // Rounded half away from zero: the magnitude plus a half, rounded down (the sum is exact,
                            // or rounds up only to a power of two it reaches), at most 32767.
                            let magnitude = quantised.replacing(with: -quantised, where: quantised .< 0)
                            var halfUp = magnitude + 0.5
                            halfUp.replace(with: 32767, where: halfUp .> 32767)
                            var integers = SIMD8<Int32>()
                            for u in 0..<8 { integers[u] = Int32(bitPattern: halfUp[u].flooredFromBits) }
                            integers.replace(with: 0 &- integers, where: quantised .< 0)
                            UnsafeMutableRawPointer(block + 8 * v)
                                .storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: integers), as: SIMD8<Int16>.self)
                        }
                    }
                }
            }
        }
    }
}

/// What repeating an 8-sample line's samples past one of them does to the line's DCT (T.81 A.3.3, orthonormal), as
/// a matrix: row `u` is the DCT of the repeated line of basis function `u`, so a line's coefficients weighting the
/// rows give the repeated line's. Past lane `last` in a block holding the edge, or every lane (`wholly`) in a block
/// past it; down a block, the same matrices on its lines.
private enum Repetition {
    /// Every such matrix, 8 rows each: lane `last` (0-7) repeated past itself, then over every lane, for each `last`.
    static let matrices: [SIMD8<Float>] = {
        /// C(k) / 2 * cos((2n + 1) k pi / 16): the DCT's basis function `k` at sample `n`.
        func basis(_ k: Int, _ n: Int) -> Double {
            (k == 0 ? 0.5.squareRoot() / 2 : 0.5) * cos(Double((2 * n + 1) * k) * Double.pi / 16)
        }
        var rows: [SIMD8<Float>] = []
        for last in 0..<8 {
            for wholly in [false, true] {
                let source = (0..<8).map { wholly ? last : min($0, last) }
                for u in 0..<8 {
                    rows.append(SIMD8((0..<8).map { k in
                        Float((0..<8).reduce(0.0) { $0 + basis(u, source[$1]) * basis(k, $1) })
                    }))
                }
            }
        }
        return rows
    }()

    /// Where the matrix repeating lane `last` (past itself, or over every lane when `wholly`) starts in
    /// `matrices`; nil when it repeats nothing (the last lane, past itself).
    static func matrix(last: Int, wholly: Bool) -> Int? {
        last == 7 && !wholly ? nil : (2 * last + (wholly ? 1 : 0)) * 8
    }
}
