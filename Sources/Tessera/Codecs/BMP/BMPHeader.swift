/// The headers of a BMP file (Windows BITMAPINFOHEADER to V5, OS/2 1.x core and 2.x headers), parsed and
/// validated: every size taken from the file is checked here, so the decoder can trust what it gets.
struct BMPHeader {
    /// How the pixel array is stored.
    enum Compression: Equatable {
        /// Rows of packed pixels: palette indices, BGR, or 16/32-bit words split by `masks`.
        case none
        case rle8
        case rle4
    }

    /// One channel of a 16- or 32-bit pixel: `(pixel >> shift) & maximum`, scaled to 0-255.
    struct Channel: Equatable {
        var shift: Int
        var maximum: Int

        /// The channel of `mask`; an empty mask reads as 0.
        init(mask: Int) {
            shift = mask == 0 ? 0 : mask.trailingZeroBitCount
            maximum = mask >> shift
        }

        /// Significant bits of the channel, for `ImageProperties.bitDepth`.
        var bitCount: Int { Int.bitWidth - maximum.leadingZeroBitCount }

        /// The channel's value in `pixel`, scaled to 8 bits by truncation as Pillow unpacks 5- and 6-bit fields.
        @inline(__always) func value(in pixel: Int) -> UInt8 {
            guard maximum > 0 else { return 0 }
            let raw = (pixel >> shift) & maximum
            return maximum == 255 ? UInt8(truncatingIfNeeded: raw) : UInt8(truncatingIfNeeded: raw * 255 / maximum)
        }
    }

    var width: Int
    var height: Int
    /// Rows stored top row first (a negative height in the file); bottom row first otherwise.
    var isTopDown: Bool
    var bitsPerPixel: Int
    var compression: Compression
    /// Red, green, blue and alpha of 16- and 32-bit pixels; nil for palette and 24-bit BGR pixels.
    var channels: [Channel]?
    /// Whether the pixels carry alpha: 16/32-bit bitfields with a non-zero alpha mask, as Pillow reads them.
    /// The fourth byte of plain 32-bit pixels is padding (often garbage), so it is ignored.
    var hasAlpha: Bool
    /// 256 RGB triples for 1-, 4- and 8-bit images, missing entries black; empty otherwise.
    var palette: [UInt8]
    /// Whether every colour of the palette is gray, so that indices decode to gray 8-bit pixels.
    var paletteIsGray: Bool
    /// Where the pixel array starts in the file.
    var pixelOffset: Int
    /// Bytes per stored row of an uncompressed image, padded to 4 bytes.
    var bytesPerRow: Int

    /// The pixels the decoder produces: gray for gray palettes, RGBA when a real alpha mask is present.
    var outputFormat: PixelFormat {
        if bitsPerPixel <= 8 { return paletteIsGray ? .gray8 : .rgb8 }
        return hasAlpha ? .rgba8 : .rgb8
    }

    /// What `ImageProperties` reports: palette images have one channel of `bitsPerPixel` bits; bitfields report
    /// their widest field (5 for 555, 6 for 565, 8 for 888).
    func properties() -> ImageProperties {
        let isPalette = bitsPerPixel <= 8
        return ImageProperties(format: .bmp, width: width, height: height,
                               channels: isPalette ? 1 : (hasAlpha ? 4 : 3),
                               bitDepth: isPalette ? bitsPerPixel : channels?.map(\.bitCount).max() ?? 8,
                               colorModel: isPalette ? .palette : .rgb, hasAlpha: hasAlpha)
    }

    /// Parses the headers and the palette from the start of `input`.
    init(reading input: BufferedInput) throws {
        let name = input.name
        func truncated(_ part: String) -> TesseraError { .truncated(path: name, detail: "in the \(part)") }
        func corrupt(_ detail: String) -> TesseraError { .corrupt(path: name, detail: detail) }

        input.seek(to: 0)
        var fileHeader = [UInt8](repeating: 0, count: 18)
        guard try fileHeader.withUnsafeMutableBytes({ try input.read(into: $0) }) == 18 else {
            throw truncated("file header")
        }
        guard fileHeader[0] == 0x42, fileHeader[1] == 0x4D else { throw corrupt("no BM signature") }
        var pixelOffset = Self.littleEndian(fileHeader, at: 10, size: 4)
        let headerSize = Self.littleEndian(fileHeader, at: 14, size: 4)
        let isCore = headerSize == 12
        let isOS2 = (16..<40).contains(headerSize) || headerSize == 64
        guard isCore || isOS2 || (40...124).contains(headerSize) else {
            throw corrupt("a bitmap header of \(headerSize.grouped) bytes is not one of the known kinds")
        }
        var info = [UInt8](repeating: 0, count: headerSize - 4)
        guard try info.withUnsafeMutableBytes({ try input.read(into: $0) }) == info.count else {
            throw truncated("bitmap header")
        }
        // Fields past a short OS/2 2.x header read as zero, which is what such headers mean.
        func field(_ offset: Int, _ size: Int) -> Int {
            offset - 4 + size <= info.count ? Self.littleEndian(info, at: offset - 4, size: size) : 0
        }
        func signed32(_ offset: Int) -> Int { Int(Int32(truncatingIfNeeded: field(offset, 4))) }

        let rawHeight: Int
        if isCore {
            width = field(4, 2)
            rawHeight = field(6, 2)
            bitsPerPixel = field(10, 2)
        } else {
            width = signed32(4)
            rawHeight = signed32(8)
            bitsPerPixel = field(14, 2)
        }
        guard width > 0 else { throw corrupt("width \(width.grouped) is not positive") }
        guard rawHeight != 0 else { throw corrupt("height is zero") }
        isTopDown = rawHeight < 0
        height = abs(rawHeight)
        guard [1, 4, 8, 16, 24, 32].contains(bitsPerPixel) && !(isCore && bitsPerPixel > 24) else {
            if bitsPerPixel == 0 { throw TesseraError.unsupported(path: name, feature: "BMP with embedded JPEG or PNG") }
            throw corrupt("\(bitsPerPixel) bits per pixel")
        }

        // Compression 3 and 4 mean Huffman 1D and RLE24 in OS/2 2.x headers, bitfields and JPEG in Windows ones.
        let compressionCode = isCore ? 0 : field(16, 4)
        var maskBytesAfterHeader = 0
        var masks: [Int]?
        var compression = Compression.none
        switch (compressionCode, bitsPerPixel) {
        case (0, 16): masks = [0x7C00, 0x3E0, 0x1F, 0]
        case (0, 32): masks = [0xFF0000, 0xFF00, 0xFF, 0]
        case (0, _): break
        case (1, 8): compression = .rle8
        case (2, 4): compression = .rle4
        case (3, 16), (3, 32), (6, 16), (6, 32):
            guard !isOS2 else { throw TesseraError.unsupported(path: name, feature: "OS/2 Huffman 1D compression") }
            let count = compressionCode == 6 ? 4 : 3
            if headerSize >= 40 + 4 * count {
                masks = (0..<count).map { field(40 + 4 * $0, 4) }
            } else {
                // A BITMAPINFOHEADER is followed by the masks (BI_BITFIELDS: red, green, blue; alpha only with
                // BI_ALPHABITFIELDS: like Pillow, the reserved fourth RGBQUAD is not taken for alpha).
                var bytes = [UInt8](repeating: 0, count: 4 * count)
                guard try bytes.withUnsafeMutableBytes({ try input.read(into: $0) }) == bytes.count else {
                    throw truncated("colour masks")
                }
                masks = (0..<count).map { Self.littleEndian(bytes, at: 4 * $0, size: 4) }
                maskBytesAfterHeader = bytes.count
            }
            if count == 3 { masks?.append(headerSize >= 56 ? field(52, 4) : 0) }
        case (4, _), (5, _):
            throw TesseraError.unsupported(path: name, feature: isOS2 ? "OS/2 RLE24 compression"
                                           : "BMP with embedded \(compressionCode == 4 ? "JPEG" : "PNG")")
        default:
            throw corrupt("compression \(compressionCode) with \(bitsPerPixel) bits per pixel")
        }
        self.compression = compression
        if let masks {
            // Bits above the pixel's width cannot be set, so a mask claiming them only breaks the scaling.
            let pixelMask = 1 << bitsPerPixel - 1
            var fitting = masks.map { $0 & pixelMask }
            // Writers that leave every mask zero mean the usual layout; Pillow reads 32-bit ones as BGRA.
            if fitting.allSatisfy({ $0 == 0 }) {
                fitting = bitsPerPixel == 16 ? [0x7C00, 0x3E0, 0x1F, 0] : [0xFF0000, 0xFF00, 0xFF, 0xFF00_0000]
            }
            channels = fitting.map(Channel.init(mask:))
            hasAlpha = fitting[3] != 0
        } else {
            channels = nil
            hasAlpha = false
        }

        palette = []
        paletteIsGray = false
        let paletteStart = 14 + headerSize + maskBytesAfterHeader
        if bitsPerPixel <= 8 {
            let entrySize = isCore ? 3 : 4
            let used = isCore ? 0 : field(32, 4)
            var colours = used > 0 && used < 1 << bitsPerPixel ? used : 1 << bitsPerPixel
            // Writers that leave no room for the palette mean it sits before the pixels (as Pillow reads them);
            // otherwise a palette never overlaps the pixels, whatever its header count says.
            if pixelOffset <= paletteStart {
                pixelOffset = paletteStart + colours * entrySize
            } else {
                colours = min(colours, (pixelOffset - paletteStart) / entrySize)
            }
            var stored = [UInt8](repeating: 0, count: colours * entrySize)
            input.seek(to: paletteStart)
            guard try stored.withUnsafeMutableBytes({ try input.read(into: $0) }) == stored.count else {
                throw truncated("colour table")
            }
            palette = [UInt8](repeating: 0, count: 768)
            paletteIsGray = true
            for index in 0..<colours {
                let blue = stored[index * entrySize], green = stored[index * entrySize + 1]
                let red = stored[index * entrySize + 2]
                palette[3 * index] = red
                palette[3 * index + 1] = green
                palette[3 * index + 2] = blue
                if red != green || green != blue { paletteIsGray = false }
            }
        } else if pixelOffset < paletteStart {
            throw corrupt("pixel data at byte \(pixelOffset.grouped) inside the headers")
        }
        self.pixelOffset = pixelOffset
        // width < 2^31 and bitsPerPixel <= 32, so this cannot overflow.
        bytesPerRow = (width * bitsPerPixel + 31) / 32 * 4
    }

    /// The little-endian unsigned integer of `size` bytes at `offset` of `bytes`, which must hold them.
    private static func littleEndian(_ bytes: [UInt8], at offset: Int, size: Int) -> Int {
        var value = 0
        for index in (0..<size).reversed() { value = value << 8 | Int(bytes[offset + index]) }
        return value
    }
}
