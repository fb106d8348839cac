import CTIFF
import Foundation

/// Writes a TIFF through libtiff, in strips or tiles, fed strips top to bottom: it buffers one strip (or one row
/// of tiles) at a time, so memory grows with the width only.
final class TIFFEncoder: FormatEncoder {
    private let target: EncodeTarget
    private let output: AtomicFile
    private var file: TIFFFile?
    private let tiled: Bool
    /// A tile's size, or the image width and rows per strip, in pixels.
    private let blockWidth: Int
    private let blockHeight: Int
    /// Rows of one strip or row of tiles; tiled rows are padded to whole tiles.
    private var band: [UInt8]
    private let bandRowBytes: Int
    private var bandRows = 0
    private var tile: [UInt8] = []
    private var nextRow = 0

    /// Bytes of raw pixels above which the file is written as BigTIFF (classic TIFF offsets are 32-bit),
    /// leaving headroom for tags and for compression that does not shrink.
    private static let bigTIFFThreshold = (1 << 32) - (1 << 28)
    /// The uncompressed size a strip aims for, in bytes.
    private static let stripBytes = 512 * 1024

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        switch options.tiffCompression {
        // libtiff's JPEG codec is built for 8-bit samples; alpha is flattened (JPEG-in-TIFF readers expect
        // YCbCr or gray without extra samples).
        case .jpeg: return PixelFormat(format.isColor ? .rgb : .gray, bitDepth: 8)
        // libtiff's WebP codec takes 8-bit RGB or RGBA only.
        case .webp: return PixelFormat(format.hasAlpha ? .rgba : .rgb, bitDepth: 8)
        case .none, .deflate, .lzw:
            let depth = options.bitDepth.flatMap { $0 == 8 || $0 == 16 ? $0 : nil } ?? format.bitDepth
            return format.with(bitDepth: depth)
        }
    }

    init(target: EncodeTarget) throws {
        let options = target.options, format = target.format, size = target.size, path = target.path
        guard size.width > 0, size.height > 0, size.width <= Int(UInt32.max), size.height <= Int(UInt32.max) else {
            throw TesseraError.unsupported(path: path, feature: "a \(size) TIFF")
        }
        guard !options.tiled || (options.tileSize >= 16 && options.tileSize % 16 == 0 && options.tileSize <= 65536) else {
            throw TesseraError.invalidArgument("\(path): TIFF tile size \(options.tileSize) must be a multiple of 16"
                                               + " from 16 to 65,536")
        }
        if options.tiffCompression == .webp && TIFFIsCODECConfigured(UInt16(COMPRESSION_WEBP)) == 0 {
            throw TesseraError.unsupported(path: path, feature: "WebP compression in TIFF (libtiff is built without it)")
        }
        guard let rowBytes = MemoryBudget.bytes(width: size.width, rows: 1, format: format),
              let imageBytes = MemoryBudget.bytes(width: size.width, rows: size.height, format: format) else {
            throw TesseraError.unsupported(path: path, feature: "a \(size) TIFF (too large)")
        }
        tiled = options.tiled
        if tiled {
            blockWidth = options.tileSize
            blockHeight = options.tileSize
        } else {
            // JPEG strips must hold whole MCU rows (16 rows with 2x2 subsampling).
            let multiple = options.tiffCompression == .jpeg ? 16 : 1
            let rows = max(1, Self.stripBytes / rowBytes) / multiple * multiple
            blockWidth = size.width
            blockHeight = min(size.height, max(multiple, rows))
        }
        let paddedWidth = (size.width + blockWidth - 1) / blockWidth * blockWidth
        try options.budget.checkRows(width: paddedWidth, rows: blockHeight, format: format,
                                     for: tiled ? "one row of TIFF tiles" : "one TIFF strip", path: path)
        bandRowBytes = paddedWidth * format.bytesPerPixel
        band = [UInt8](repeating: 0, count: bandRowBytes * blockHeight)
        if tiled { tile = [UInt8](repeating: 0, count: blockWidth * blockHeight * format.bytesPerPixel) }
        self.target = target

        output = try AtomicFile(path: path)
        guard let handle = output.handle else { throw TesseraError.io(path: path, detail: "the file is closed") }
        // libtiff closes the descriptor it is given; a duplicate leaves AtomicFile's own stream to AtomicFile.
        let descriptor = dup(fileno(handle))
        guard descriptor >= 0 else {
            throw TesseraError.io(path: path)
        }
        let file: TIFFFile
        do {
            file = try TIFFFile(writing: descriptor, name: path, bigTIFF: imageBytes > Self.bigTIFFThreshold)
        } catch {
            // libtiff closes the descriptor only once it has opened it.
            close(descriptor)
            throw error
        }
        self.file = file
        try writeTags(file, rowsPerStrip: blockHeight)
    }

    /// Describes the image and its compression in the directory.
    private func writeTags(_ file: TIFFFile, rowsPerStrip: Int) throws {
        let options = target.options, format = target.format
        try file.set(TIFFTAG_IMAGEWIDTH, UInt32(target.size.width))
        try file.set(TIFFTAG_IMAGELENGTH, UInt32(target.size.height))
        try file.set(TIFFTAG_BITSPERSAMPLE, format.bitDepth)
        try file.set(TIFFTAG_SAMPLESPERPIXEL, format.channelCount)
        try file.set(TIFFTAG_PLANARCONFIG, Int(PLANARCONFIG_CONTIG))
        let ycbcr = options.tiffCompression == .jpeg && format.isColor
        try file.set(TIFFTAG_PHOTOMETRIC, Int(ycbcr ? PHOTOMETRIC_YCBCR
                                                : format.isColor ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK))
        if format.hasAlpha { try file.setExtraSamples([UInt16(EXTRASAMPLE_UNASSALPHA)]) }
        if tiled {
            try file.set(TIFFTAG_TILEWIDTH, UInt32(blockWidth))
            try file.set(TIFFTAG_TILELENGTH, UInt32(blockHeight))
        } else {
            try file.set(TIFFTAG_ROWSPERSTRIP, UInt32(rowsPerStrip))
        }
        switch options.tiffCompression {
        case .none:
            try file.set(TIFFTAG_COMPRESSION, Int(COMPRESSION_NONE))
        case .deflate, .lzw:
            try file.set(TIFFTAG_COMPRESSION, Int(options.tiffCompression == .lzw ? COMPRESSION_LZW : COMPRESSION_ADOBE_DEFLATE))
            if options.tiffCompression == .deflate {
                // libtiff's levels run 1-9 (with libdeflate, 0 is not a level).
                try file.set(TIFFTAG_ZIPQUALITY, min(9, max(1, options.compressionLevel)))
            }
            // Horizontal differencing makes smooth images compress much better; it works on 8- and 16-bit samples.
            try file.set(TIFFTAG_PREDICTOR, Int(PREDICTOR_HORIZONTAL))
        case .jpeg:
            try file.set(TIFFTAG_COMPRESSION, Int(COMPRESSION_JPEG))
            try file.set(TIFFTAG_JPEGQUALITY, min(100, max(1, options.quality)))
            if ycbcr {
                let factor: UInt16 = options.subsampling == .s444 ? 1 : 2
                try file.set(TIFFTAG_YCBCRSUBSAMPLING, factor, factor)
                // libtiff converts the RGB rows it is given to YCbCr.
                try file.set(TIFFTAG_JPEGCOLORMODE, Int(JPEGCOLORMODE_RGB))
            }
        case .webp:
            try file.set(TIFFTAG_COMPRESSION, Int(COMPRESSION_WEBP))
            try file.set(TIFFTAG_WEBP_LOSSLESS, options.lossless ? 1 : 0)
            try file.set(TIFFTAG_WEBP_LEVEL, min(100, max(1, options.quality)))
        }
    }

    func write(_ strip: Strip) throws {
        try target.checkStrip(strip, nextRow: nextRow)
        let rowBytes = strip.pixels.bytesPerRow
        var row = 0
        while row < strip.height {
            let rows = min(strip.height - row, blockHeight - bandRows)
            band.withUnsafeMutableBytes { band in
                strip.pixels.bytes.withUnsafeBytes { source in
                    for index in 0..<rows {
                        (band.baseAddress! + (bandRows + index) * bandRowBytes)
                            .copyMemory(from: source.baseAddress! + (row + index) * rowBytes, byteCount: rowBytes)
                    }
                }
            }
            bandRows += rows
            row += rows
            nextRow += rows
            if bandRows == blockHeight || nextRow == target.size.height { try flushBand() }
        }
    }

    /// Encodes the buffered rows as one strip or one row of tiles.
    private func flushBand() throws {
        guard let file else { throw TesseraError.invalidArgument("\(target.path): the TIFF is already finished") }
        let top = nextRow - bandRows
        file.clearMessage()
        if !tiled {
            let strip = TIFFComputeStrip(file.handle, UInt32(top), 0), count = tmsize_t(bandRows * bandRowBytes)
            let written = band.withUnsafeMutableBytes { TIFFWriteEncodedStrip(file.handle, strip, $0.baseAddress, count) }
            guard written >= 0 else { throw file.writeFailure("cannot write the strip at row \(top.grouped)") }
        } else {
            let pixelBytes = target.format.bytesPerPixel, tileRowBytes = blockWidth * pixelBytes
            for left in stride(from: 0, to: target.size.width, by: blockWidth) {
                // Rows below the image's last are left as they were: readers ignore the padding.
                tile.withUnsafeMutableBytes { tile in
                    band.withUnsafeBytes { band in
                        for row in 0..<bandRows {
                            (tile.baseAddress! + row * tileRowBytes).copyMemory(
                                from: band.baseAddress! + row * bandRowBytes + left * pixelBytes, byteCount: tileRowBytes)
                        }
                    }
                }
                let number = TIFFComputeTile(file.handle, UInt32(left), UInt32(top), 0, 0)
                let count = tmsize_t(tile.count)
                let written = tile.withUnsafeMutableBytes { TIFFWriteEncodedTile(file.handle, number, $0.baseAddress, count) }
                guard written >= 0 else {
                    throw file.writeFailure("cannot write the tile at column \(left.grouped), row \(top.grouped)")
                }
            }
        }
        bandRows = 0
    }

    func finish() throws {
        guard let file else { return }
        try target.checkComplete(rowsWritten: nextRow)
        try file.flush()
        // Releasing the handle closes libtiff's descriptor before the file is renamed into place.
        self.file = nil
        try output.commit()
    }
}
