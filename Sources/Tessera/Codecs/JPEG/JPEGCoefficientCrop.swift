import CCodecShims
import CJPEG
import Foundation

/// Cuts a JPEG down to its top-left corner, or stretches it by a pixel or two past its real pixels, in its
/// coefficients, as `jpegtran -crop WxH+0+0` does: the quantised coefficients of the blocks inside the corner are
/// copied into a new JPEG with the same tables, so their pixels are those stored. Where the corner reaches past
/// `content` (the real pixels of a padded edge tile, or the whole JPEG), only the blocks that meet the new edge are
/// made again: decoded, their last real column and row repeated, transformed and quantised with the same tables.
/// This is how a pyramid's padded edge tile is sent at its real size, or at the pixel more a viewer asks for, with
/// no decode of the whole tile and no encode. A corner that codes the same blocks as the whole JPEG (its real
/// pixels end in the last MCU column and row) is the JPEG itself with the new size in its frame header.
enum JPEGCoefficientCrop {
    /// How far past its real pixels, on each axis, a corner may reach.
    static let maxExtension = 2

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
        let session = try JPEGSession(input: .bytes(jpeg, name: name))
        let info = session.info.pointee
        let whole = Size(width: Int(info.image_width), height: Int(info.image_height))
        let content = content ?? whole
        guard size.width >= 1, size.height >= 1, content.width >= 1, content.height >= 1,
              content.width <= whole.width, content.height <= whole.height,
              size.width <= content.width + maxExtension, size.height <= content.height + maxExtension else {
            throw TesseraError.invalidArgument("\(name): cannot crop a \(whole.width)x\(whole.height) JPEG to \(size)")
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
            // The source's arrays, in blocks (whole MCUs), and the component's samples: real, and asked for. A
            // subsampled sample that mixes a real pixel with padding counts as padding.
            let sourceColumns = roundUp(Int(sourceInfo.width_in_blocks), horizontal)
            let sourceRows = roundUp(Int(sourceInfo.height_in_blocks), vertical)
            let real = Size(width: max(1, content.width * horizontal / maxHorizontal),
                            height: max(1, content.height * vertical / maxVertical))
            let asked = Size(width: (size.width * horizontal + maxHorizontal - 1) / maxHorizontal,
                             height: (size.height * vertical + maxVertical - 1) / maxVertical)
            // The new JPEG's tables are the source's (jpeg_copy_critical_parameters).
            let table = (session.quantization(component: component) ?? [Int](repeating: 1, count: 64)).map(Float.init)
            var edge = EdgeBlocks(session: session, component: component, real: real, table: table,
                                  sourceColumns: sourceColumns, sourceRows: sourceRows)
            for row in 0..<mcusDown * vertical {
                guard let to = tessera_jpeg_encoder_block_row(encoder, Int32(component), JDIMENSION(row)) else {
                    try check(0)
                    return []
                }
                let from = row < sourceRows ? tessera_jpeg_decoder_block_row(session.decoder, Int32(component), JDIMENSION(row)) : nil
                if row < sourceRows, from == nil { try session.check(0, during: "reading coefficients") }
                let rowMeetsEdge = asked.height > real.height && 8 * row + 8 > real.height && 8 * row < asked.height
                for column in 0..<mcusAcross * horizontal {
                    let columnMeetsEdge = asked.width > real.width && 8 * column + 8 > real.width && 8 * column < asked.width
                    let block = UnsafeMutableRawPointer(to + column).assumingMemoryBound(to: JCOEF.self)
                    if rowMeetsEdge || columnMeetsEdge {
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
    /// component alone), or the frame header is not found or says no height (DNL).
    static func sameBlocks(_ jpeg: [UInt8], size: Size) -> [UInt8]? {
        guard size.width >= 1, size.height >= 1, size.width <= 0xFFFF, size.height <= 0xFFFF else { return nil }
        // The frame header, and whether every scan interleaves every component (then only whole MCUs are coded).
        let (frame, interleaved): (JPEGSegment?, Bool) = jpeg.withUnsafeBytes { bytes in
            var tokenizer = JPEGMarkerTokenizer()
            var frame: JPEGSegment?, interleaved = true, scans = 0
            while let token = tokenizer.next(in: bytes) {
                guard case let .segment(segment) = token else { continue }
                // SOF0-SOF15 but DHT (C4), JPG (C8) and DAC (CC).
                if (0xC0...0xCF).contains(segment.marker), ![0xC4, 0xC8, 0xCC].contains(segment.marker) {
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
    /// the last real one is that one repeated. Each such block reads one source block: its own, or the last real
    /// one in its row or column (where the edge is), so the decoded ones are kept along those two lines.
    private struct EdgeBlocks {
        let session: JPEGSession
        let component: Int
        let real: Size
        let table: [Float]
        let lastColumn: Int, lastRow: Int
        /// Source blocks decoded (64 samples less 128): the last real column's by row, the last real row's by column.
        var inLastColumn: [[Float]?], inLastRow: [[Float]?]
        var samples = [Float](repeating: 0, count: 64), coefficients = [Float](repeating: 0, count: 64)

        init(session: JPEGSession, component: Int, real: Size, table: [Float], sourceColumns: Int, sourceRows: Int) {
            self.session = session
            self.component = component
            self.real = real
            self.table = table
            lastColumn = (real.width - 1) / 8
            lastRow = (real.height - 1) / 8
            inLastColumn = [[Float]?](repeating: nil, count: sourceRows)
            inLastRow = [[Float]?](repeating: nil, count: sourceColumns)
        }

        mutating func extend(into block: UnsafeMutablePointer<JCOEF>, column: Int, row: Int) throws {
            let sourceColumn = min(column, lastColumn), sourceRow = min(row, lastRow)
            let source = try decoded(column: sourceColumn, row: sourceRow)
            let real = real
            samples.withUnsafeMutableBufferPointer { samples in
                for y in 0..<8 {
                    let sourceY = min(8 * row + y, real.height - 1) - 8 * sourceRow
                    for x in 0..<8 {
                        samples[8 * y + x] = source[8 * sourceY + min(8 * column + x, real.width - 1) - 8 * sourceColumn]
                    }
                }
            }
            DCT8.forward(samples, into: &coefficients)
            for index in 0..<64 {
                block[index] = JCOEF(clamping: Int((coefficients[index] / table[index]).rounded()))
            }
        }

        private mutating func decoded(column: Int, row: Int) throws -> [Float] {
            if column == lastColumn, let samples = inLastColumn[row] { return samples }
            if column != lastColumn, let samples = inLastRow[column] { return samples }
            guard let blocks = tessera_jpeg_decoder_block_row(session.decoder, Int32(component), JDIMENSION(row)) else {
                try session.check(0, during: "reading coefficients")
                return [Float](repeating: 0, count: 64)
            }
            let block = UnsafeRawPointer(blocks + column).assumingMemoryBound(to: JCOEF.self)
            var output = [Float](repeating: 0, count: 64)
            DCT8.inverse((0..<64).map { Float(block[$0]) * table[$0] }, into: &output)
            if column == lastColumn { inLastColumn[row] = output } else { inLastRow[column] = output }
            return output
        }
    }
}

/// The 8 x 8 DCT of JPEG (T.81 A.3.3), orthonormal and separable, on samples less 128, in natural order.
private enum DCT8 {
    /// `forwardBasis[8 * k + n]`: C(k) / 2 * cos((2n + 1) k pi / 16); the inverse is its transpose.
    private static let forwardBasis: [Float] = (0..<64).map { index in
        let k = index / 8, n = index % 8
        return Float((k == 0 ? 0.5.squareRoot() : 1) / 2 * cos(Double((2 * n + 1) * k) * Double.pi / 16))
    }
    private static let inverseBasis: [Float] = (0..<64).map { forwardBasis[8 * ($0 % 8) + $0 / 8] }

    /// The coefficients (`8 * v + u`, v vertical) of 64 samples (`8 * y + x`).
    static func forward(_ samples: [Float], into output: inout [Float]) { transform(samples, forwardBasis, into: &output) }

    /// The samples of 64 dequantised coefficients.
    static func inverse(_ coefficients: [Float], into output: inout [Float]) {
        transform(coefficients, inverseBasis, into: &output)
    }

    /// Rows then columns: `B x M x B^T` for the basis `B`.
    private static func transform(_ input: [Float], _ basis: [Float], into output: inout [Float]) {
        withUnsafeTemporaryAllocation(of: Float.self, capacity: 64) { rows in
            input.withUnsafeBufferPointer { input in
                basis.withUnsafeBufferPointer { basis in
                    for y in 0..<8 {
                        for k in 0..<8 {
                            var sum: Float = 0
                            for n in 0..<8 { sum += basis[8 * k + n] * input[8 * y + n] }
                            rows[8 * y + k] = sum
                        }
                    }
                    output.withUnsafeMutableBufferPointer { output in
                        for x in 0..<8 {
                            for k in 0..<8 {
                                var sum: Float = 0
                                for n in 0..<8 { sum += basis[8 * k + n] * rows[8 * n + x] }
                                output[8 * k + x] = sum
                            }
                        }
                    }
                }
            }
        }
    }
}
