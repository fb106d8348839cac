import COpenJPEG
import Foundation

/// Writes a JP2 through OpenJPEG, tiled, one row of tiles at a time (`opj_write_tile`), so memory is a band of
/// tiles over the width: lossless 5/3 with `lossless`, else the irreversible 9/7 at a compression ratio from
/// `quality`; RPCL progression, PLT and TLM markers, and resolution levels down to a level that fits one tile,
/// for random access by region and resolution. Gray, RGB (with the colour transform), with alpha, 8 or 16 bits.
/// Also in memory (`encode`), for the server's `.jp2` responses; a `.j2c` path gets the codestream without boxes.
final class JPEG2000Encoder: MemoryEncoder {
    /// Where the JP2 goes: a file under a temporary name until finished, or memory.
    private enum Output {
        case file(AtomicFile)
        case memory(MemoryFile)
    }

    private let target: EncodeTarget
    private let output: Output
    private let messages = OpenJPEGMessages()
    private let codec: UnsafeMutablePointer<opj_codec_t?>
    private let stream: UnsafeMutablePointer<opj_stream_t?>
    private let image: UnsafeMutablePointer<opj_image_t>
    private let grid: TileGrid
    /// The rows of the current row of tiles, interleaved as they arrive, and how many have arrived.
    private var band: [UInt8]
    private var bandRows = 0
    private var nextRow = 0
    private var nextTile: UInt32 = 0
    /// One tile's samples, component after component, as `opj_write_tile` takes them.
    private var tile: [UInt8]

    static func acceptedFormat(for format: PixelFormat, options: EncodeOptions) -> PixelFormat {
        format.with(bitDepth: options.bitDepth ?? format.bitDepth)
    }

    /// The compression ratio for a lossy `quality` (1-100): 8.5:1 at 85, 26:1 at 50, 50:1 at 1.
    static func compressionRatio(quality: Int) -> Float { 1 + Float(100 - quality) / 2 }

    /// Resolution levels for an image of `size` in tiles of `tile`: enough for the smallest level to fit in one
    /// tile, no more than a tile's side allows (each level halves it), at most OpenJPEG's 33.
    static func resolutionLevels(size: Size, tile: Int) -> Int {
        var levels = 1
        while levels < 33, max(size.width, size.height) >> (levels - 1) > tile, tile >> levels >= 1 { levels += 1 }
        return levels
    }

    convenience init(target: EncodeTarget) throws {
        try self.init(target: target, inMemory: false)
    }

    /// The whole `image` as JP2 bytes.
    static func encode(_ image: ImageBuffer, options: EncodeOptions) throws -> [UInt8] {
        let encoder = try JPEG2000Encoder(target: EncodeTarget(path: "image", size: image.size, format: image.format,
                                                               options: options), inMemory: true)
        try encoder.write(Strip(y: 0, pixels: image))
        try encoder.finish()
        guard case let .memory(file) = encoder.output else { return [] }
        return file.bytes()
    }

    private init(target: EncodeTarget, inMemory: Bool) throws {
        try CodecLibrary.openJPEG.require()
        let size = target.size, path = target.path, format = target.format, options = target.options
        guard size.width > 0, size.height > 0, size.width <= Int(Int32.max), size.height <= Int(Int32.max) else {
            throw TesseraError.unsupported(path: path, feature: "a \(size) JPEG 2000")
        }
        let side = max(16, min(options.tileSize, max(size.width, size.height)))
        grid = TileGrid(imageSize: size, tileSize: Size(width: side, height: side))
        let components = format.channelCount, sampleBytes = format.bytesPerSample
        // The band of rows, one tile's planar copy, and OpenJPEG's own 32-bit copy of a tile with its wavelet.
        try options.budget.checkRows(width: size.width, rows: side, format: format, for: "a row of JPEG 2000 tiles",
                                     path: path)
        try options.budget.check(side * side * components * (sampleBytes + 12), for: "encoding a JPEG 2000 tile",
                                 path: path)
        band = [UInt8](repeating: 0, count: size.width * side * format.bytesPerPixel)
        tile = [UInt8](repeating: 0, count: side * side * components * sampleBytes)
        self.target = target
        output = inMemory ? .memory(try MemoryFile(name: path)) : .file(try AtomicFile(path: path))

        var parameters = opj_cparameters_t()
        opj_set_default_encoder_parameters(&parameters)
        parameters.tile_size_on = 1
        parameters.cp_tdx = Int32(side)
        parameters.cp_tdy = Int32(side)
        parameters.numresolution = Int32(Self.resolutionLevels(size: size, tile: side))
        parameters.prog_order = OPJ_RPCL
        parameters.tcp_numlayers = 1
        parameters.cp_disto_alloc = 1
        parameters.irreversible = options.lossless ? 0 : 1
        parameters.tcp_rates.0 = options.lossless ? 0 : Self.compressionRatio(quality: options.quality)
        parameters.tcp_mct = format.isColor ? 1 : 0
        var parts = (0..<components).map { _ in
            opj_image_cmptparm_t(dx: 1, dy: 1, w: UInt32(size.width), h: UInt32(size.height), x0: 0, y0: 0,
                                 prec: UInt32(format.bitDepth), bpp: UInt32(format.bitDepth), sgnd: 0)
        }
        guard let image = opj_image_tile_create(UInt32(components), &parts,
                                                format.isColor ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY) else {
            throw TesseraError.io(path: path, detail: "OpenJPEG could not describe the image")
        }
        self.image = image
        image.pointee.x1 = UInt32(size.width)
        image.pointee.y1 = UInt32(size.height)
        if format.hasAlpha { image.pointee.comps[components - 1].alpha = 1 }
        // A `.j2c` is the bare codestream; anything else a JP2 file.
        guard let codec = opj_create_compress(path.lowercased().hasSuffix(".j2c") ? OPJ_CODEC_J2K : OPJ_CODEC_JP2) else {
            opj_image_destroy(image)
            throw TesseraError.io(path: path, detail: "OpenJPEG could not start an encoder")
        }
        self.codec = codec
        let handle: UnsafeMutablePointer<FILE>?
        switch output {
        case let .file(file): handle = file.handle
        case let .memory(file): handle = file.handle
        }
        guard let handle, let stream = Self.makeStream(writingTo: handle) else {
            opj_image_destroy(image)
            opj_destroy_codec(codec)
            throw TesseraError.io(path: path, detail: "OpenJPEG could not open its output")
        }
        self.stream = stream
        messages.attach(to: codec)
        let names: [String] = ["PLT=YES", "TLM=YES"]
        let extras: [UnsafeMutablePointer<CChar>?] = names.map { strdup($0) } + [nil]
        defer { extras.forEach { free($0) } }
        let started = extras.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { extraOptions in
            opj_setup_encoder(codec, &parameters, image) != 0
                && opj_encoder_set_extra_options(codec, extraOptions.baseAddress) != 0
                && opj_start_compress(codec, image, stream) != 0
        }
        guard started else { throw failure("starting") }
    }

    deinit {
        opj_stream_destroy(stream)
        opj_destroy_codec(codec)
        opj_image_destroy(image)
    }

    private func failure(_ doing: String) -> TesseraError {
        .io(path: target.path, detail: "OpenJPEG failed \(doing) the JPEG 2000\(messages.firstMessage)")
    }

    func write(_ strip: Strip) throws {
        try target.checkStrip(strip, nextRow: nextRow)
        let rowBytes = target.size.width * target.format.bytesPerPixel
        var done = 0
        while done < strip.height {
            let bandHeight = grid.pixelRows(ofRow: nextRow / grid.tileSize.height).count
            let rows = min(strip.height - done, bandHeight - bandRows)
            strip.pixels.bytes.withUnsafeBytes { source in
                band.withUnsafeMutableBytes { band in
                    for row in 0..<rows {
                        (band.baseAddress! + (bandRows + row) * rowBytes)
                            .copyMemory(from: source.baseAddress! + (done + row) * strip.pixels.bytesPerRow,
                                        byteCount: rowBytes)
                    }
                }
            }
            done += rows
            bandRows += rows
            nextRow += rows
            if bandRows == bandHeight {
                try writeBand()
                bandRows = 0
            }
        }
    }

    /// Writes the band's tiles, left to right, each as its components' planes.
    private func writeBand() throws {
        let format = target.format, components = format.channelCount, sampleBytes = format.bytesPerSample
        let pixelBytes = format.bytesPerPixel, rowBytes = target.size.width * pixelBytes
        for column in 0..<grid.columns {
            let columns = grid.pixelColumns(ofColumn: column), width = columns.count
            let planeBytes = width * bandRows * sampleBytes
            band.withUnsafeBytes { band in
                tile.withUnsafeMutableBytes { tile in
                    for component in 0..<components {
                        for row in 0..<bandRows {
                            let source = band.baseAddress! + row * rowBytes + columns.lowerBound * pixelBytes
                                + component * sampleBytes
                            let destination = tile.baseAddress! + component * planeBytes + row * width * sampleBytes
                            for x in 0..<width {
                                (destination + x * sampleBytes).copyMemory(from: source + x * pixelBytes,
                                                                           byteCount: sampleBytes)
                            }
                        }
                    }
                }
            }
            let written = tile.withUnsafeMutableBytes { tile in
                opj_write_tile(codec, nextTile, tile.baseAddress!.assumingMemoryBound(to: UInt8.self),
                               UInt32(planeBytes * components), stream)
            }
            guard written != 0 else { throw failure("writing tile \(nextTile) of") }
            nextTile += 1
        }
    }

    func finish() throws {
        try target.checkComplete(rowsWritten: nextRow)
        guard opj_end_compress(codec, stream) != 0 else { throw failure("finishing") }
        if case let .file(file) = output { try file.commit() }
    }

    /// An OpenJPEG output stream over `file`: writes, skips and seeks go to the C file.
    private static func makeStream(writingTo file: UnsafeMutablePointer<FILE>) -> UnsafeMutablePointer<opj_stream_t?>? {
        guard let stream = opj_stream_create(1 << 20, 0) else { return nil }
        opj_stream_set_user_data(stream, UnsafeMutableRawPointer(file), nil)
        opj_stream_set_write_function(stream) { buffer, count, context in
            let file = context!.assumingMemoryBound(to: FILE.self)
            return fwrite(buffer, 1, count, file) == count ? count : -1
        }
        opj_stream_set_skip_function(stream) { count, context in
            fseeko(context!.assumingMemoryBound(to: FILE.self), off_t(count), SEEK_CUR) == 0 ? count : -1
        }
        opj_stream_set_seek_function(stream) { offset, context in
            fseeko(context!.assumingMemoryBound(to: FILE.self), off_t(offset), SEEK_SET) == 0 ? 1 : 0
        }
        return stream
    }
}
