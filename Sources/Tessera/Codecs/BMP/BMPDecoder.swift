/// Decodes BMP files in pure Swift, streaming from the file.
///
/// Uncompressed rows are read straight from their place in the pixel array (back to front for the usual
/// bottom-up files), only the columns asked for, so memory is one chunk of rows and skipping rows reads
/// nothing. RLE8/RLE4 runs cannot be located without decoding them, and bottom-up files store the top row
/// last, so RLE images are first decoded into one byte per pixel (checked against the memory budget).
///
/// Output: gray 8-bit when every palette colour is gray (smaller, and what the file means), otherwise RGB 8-bit;
/// RGBA 8-bit only for 16/32-bit bitfields with an alpha mask. A truncated file throws when the first missing
/// row is asked for; with `allowPartial` missing rows come out zero (RLE: pixels never reached are index 0,
/// like pixels skipped by a delta, as Pillow decodes them).
final class BMPDecoder: ImageDecoder {
    private let header: BMPHeader
    private let input: BufferedInput
    private let allowPartial: Bool
    private let budget: MemoryBudget
    let size: Size
    let format: PixelFormat
    /// The next output row (0 is the top row).
    private var row = 0
    /// The columns decoded, set by `restrictColumns` before the first row.
    private var columns: Range<Int>
    /// Whole rows present in the file for uncompressed images, in storage order.
    private let storedRows: Int
    /// Raw bytes of one chunk of uncompressed rows.
    private var chunk: [UInt8] = []
    /// The palette indices of an RLE image, one byte per pixel in storage order; decoded on first use.
    private var indices: [UInt8]?

    /// Bytes of stored rows read at once: one read per chunk rather than per row, a bounded buffer.
    private static let chunkBytes = 256 << 10

    static func readProperties(of input: ImageInput) throws -> ImageProperties {
        try BMPHeader(reading: BufferedInput(input)).properties()
    }

    init(input: ImageInput, properties: ImageProperties, request: DecodeRequest) throws {
        self.input = try BufferedInput(input)
        header = try BMPHeader(reading: self.input)
        size = Size(width: header.width, height: header.height)
        format = header.outputFormat
        allowPartial = request.allowPartial
        budget = request.budget
        columns = 0..<header.width
        storedRows = max(0, self.input.count - header.pixelOffset) / header.bytesPerRow
    }

    func restrictColumns(to columns: Range<Int>) throws -> Range<Int> {
        if header.compression == .none { self.columns = columns }
        return self.columns
    }

    /// Rows are located by arithmetic (uncompressed) or in the indices decoded on first use (RLE), so skipping
    /// reads nothing.
    func skipRows(_ count: Int) throws {
        row = min(size.height, row + max(0, count))
    }

    func decodeRows(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        guard count > 0 else { return }
        guard row + count <= size.height else {
            throw TesseraError.invalidArgument("\(input.name): rows \(row)..<\(row + count) are past the image")
        }
        if header.compression == .none {
            try decodeStored(into: rows, bytesPerRow: bytesPerRow, count: count)
        } else {
            let indices = try rleIndices()
            indices.withUnsafeBytes { source in
                for index in 0..<count {
                    let start = storageRow(of: row + index) * header.width + columns.lowerBound
                    unpack(source.baseAddress! + start, bitsPerPixel: 8, bitOffset: 0,
                           into: rows + index * bytesPerRow)
                }
            }
            row += count
        }
    }

    // MARK: - Uncompressed

    /// Reads `count` uncompressed rows, in chunks of rows adjacent in the file.
    private func decodeStored(into rows: UnsafeMutableRawPointer, bytesPerRow: Int, count: Int) throws {
        let bits = header.bitsPerPixel
        let firstByte = columns.lowerBound * bits / 8
        let spanBytes = (columns.upperBound * bits + 7) / 8 - firstByte
        let bitOffset = columns.lowerBound * bits - firstByte * 8
        let rowsPerChunk = max(1, min(count, Self.chunkBytes / header.bytesPerRow))
        var done = 0
        while done < count {
            let first = row + done
            let rowsNow = min(rowsPerChunk, count - done)
            // The chunk's rows in storage order: output rows first..<first + rowsNow, reversed when bottom-up.
            let lowest = header.isTopDown ? first : size.height - first - rowsNow
            let present = max(0, min(rowsNow, storedRows - lowest))
            if present < rowsNow && !allowPartial { throw truncated(after: storedRows) }
            if present > 0 {
                // Allocated only once a row is known to be there, so a hostile width in a tiny file is
                // reported as truncated rather than as an allocation over budget. Only one row counts against
                // the budget: more rows are read at once only while they fit in `chunkBytes`.
                if chunk.count < rowsPerChunk * header.bytesPerRow {
                    try budget.check(header.bytesPerRow, for: "a BMP row", path: input.name)
                    chunk = [UInt8](repeating: 0, count: rowsPerChunk * header.bytesPerRow)
                }
                input.seek(to: header.pixelOffset + lowest * header.bytesPerRow + firstByte)
                let wanted = (present - 1) * header.bytesPerRow + spanBytes
                let got = try chunk.withUnsafeMutableBytes {
                    try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
                }
                guard got == wanted else { throw TesseraError.io(path: input.name, detail: "the file shrank") }
            }
            chunk.withUnsafeBytes { source in
                for index in 0..<rowsNow {
                    let stored = header.isTopDown ? index : rowsNow - 1 - index
                    let target = rows + (done + index) * bytesPerRow
                    if stored < present {
                        unpack(source.baseAddress! + stored * header.bytesPerRow, bitsPerPixel: bits,
                               bitOffset: bitOffset, into: target)
                    } else {
                        target.initializeMemory(as: UInt8.self, repeating: 0,
                                                count: columns.count * format.bytesPerPixel)
                    }
                }
            }
            done += rowsNow
        }
        row += count
    }

    // MARK: - RLE

    /// The storage row holding output row `y`.
    private func storageRow(of y: Int) -> Int { header.isTopDown ? y : size.height - 1 - y }

    /// The RLE image's indices, decoding the whole pixel array on first use.
    private func rleIndices() throws -> [UInt8] {
        if let indices { return indices }
        let (area, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        try budget.check(overflow ? Int.max : area, for: "the RLE-compressed bitmap's indices", path: input.name)
        var buffer = [UInt8](repeating: 0, count: area)
        try buffer.withUnsafeMutableBufferPointer { try decodeRLE(into: $0) }
        indices = buffer
        return buffer
    }

    /// Runs the RLE8/RLE4 codes into `pixels`, rows in storage order; runs past a row's end are clipped, as
    /// Pillow and Windows clip them. Throws `.truncated` when the data ends first, unless `allowPartial`.
    private func decodeRLE(into pixels: UnsafeMutableBufferPointer<UInt8>) throws {
        let width = size.width, height = size.height, isRLE4 = header.compression == .rle4
        var x = 0, y = 0
        input.seek(to: header.pixelOffset)
        /// Stores one index at (x, y) if it is inside the image, and moves right.
        @inline(__always) func put(_ index: UInt8) {
            if x < width && y < height { pixels[y * width + x] = index }
            x += 1
        }
        while y < height {
            guard let count = try input.readByte(), let code = try input.readByte() else {
                // A last row filled without its end-of-line marker is complete all the same.
                if y == height - 1 && x >= width { return }
                if allowPartial { return }
                throw truncated(after: y)
            }
            if count > 0 {
                for index in 0..<min(Int(count), max(0, width - x)) {
                    put(isRLE4 ? (index % 2 == 0 ? code >> 4 : code & 0x0F) : code)
                }
                continue
            }
            switch code {
            case 0:
                y += 1
                x = 0
            case 1:
                return
            case 2:
                guard let right = try input.readByte(), let down = try input.readByte() else {
                    if allowPartial { return }
                    throw truncated(after: y)
                }
                x = min(width, x + Int(right))
                y += Int(down)
            default:
                // Absolute mode: `code` literal indices, padded to an even number of bytes.
                let byteCount = isRLE4 ? (Int(code) + 1) / 2 : Int(code)
                for index in 0..<byteCount {
                    guard let byte = try input.readByte() else {
                        if allowPartial { return }
                        throw truncated(after: y)
                    }
                    if isRLE4 {
                        put(byte >> 4)
                        if 2 * index + 1 < Int(code) { put(byte & 0x0F) }
                    } else {
                        put(byte)
                    }
                }
                x = min(width, x)
                if byteCount % 2 == 1 { input.skip(1) }
            }
        }
    }

    // MARK: - Pixels

    /// Unpacks `columns.count` stored pixels starting `bitOffset` bits into `source` to output pixels.
    private func unpack(_ source: UnsafeRawPointer, bitsPerPixel bits: Int, bitOffset: Int,
                        into target: UnsafeMutableRawPointer) {
        let count = columns.count
        let out = target.assumingMemoryBound(to: UInt8.self)
        let bytes = source.assumingMemoryBound(to: UInt8.self)
        if bits <= 8 {
            let isGray = header.paletteIsGray, mask = (1 << bits) - 1
            header.palette.withUnsafeBufferPointer { palette in
                for x in 0..<count {
                    let bit = bitOffset + x * bits
                    // Pixels are packed from the most significant bit of each byte.
                    let index = Int(bytes[bit >> 3]) >> (8 - bits - bit & 7) & mask
                    if isGray {
                        out[x] = palette[3 * index]
                    } else {
                        out[3 * x] = palette[3 * index]
                        out[3 * x + 1] = palette[3 * index + 1]
                        out[3 * x + 2] = palette[3 * index + 2]
                    }
                }
            }
        } else if let channels = header.channels {
            let bytesPerPixel = bits / 8, outChannels = format.channelCount
            let red = channels[0], green = channels[1], blue = channels[2], alpha = channels[3]
            for x in 0..<count {
                var pixel = 0
                for index in (0..<bytesPerPixel).reversed() { pixel = pixel << 8 | Int(bytes[x * bytesPerPixel + index]) }
                out[outChannels * x] = red.value(in: pixel)
                out[outChannels * x + 1] = green.value(in: pixel)
                out[outChannels * x + 2] = blue.value(in: pixel)
                if outChannels == 4 { out[4 * x + 3] = alpha.value(in: pixel) }
            }
        } else {
            for x in 0..<count {
                out[3 * x] = bytes[3 * x + 2]
                out[3 * x + 1] = bytes[3 * x + 1]
                out[3 * x + 2] = bytes[3 * x]
            }
        }
    }

    /// The error for a pixel array that ends after `rows` complete rows (counted in storage order).
    private func truncated(after rows: Int) -> TesseraError {
        let order = header.isTopDown ? "" : " (stored bottom to top, so the top rows are missing)"
        return .truncated(path: input.name, detail: "after row \(rows.grouped) of \(size.height.grouped)\(order)")
    }
}
