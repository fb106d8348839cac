import CZlib
import Foundation
import Synchronization

/// A pyramidal tiled TIFF, written without libtiff: tiles of every level arrive interleaved from the encoding
/// threads and are appended to one file as they come, and `finish` writes one directory per level pointing at
/// them. Level 0 is full resolution; the reduced levels follow as pages (as `vips tiffsave --pyramid` and
/// OpenSlide's generic TIFF expect) or hang off the first directory as SubIFDs. The file is classic TIFF when it
/// ends under 4 GiB and BigTIFF otherwise, decided at `finish` when the size is known; a 16-byte header is
/// reserved up front so either fits. It is written under a temporary name and renamed when complete.
///
///     encoding threads -> write (Mutex: append bytes, record offset and count) -> finish: IFDs, header, rename
public final class PyramidalTIFFSink: TileSink {
    /// Where the reduced levels go.
    public enum LevelStorage: String, Sendable, CaseIterable {
        /// One page (top-level directory) per level, full resolution first.
        case pages
        /// Directories listed in the first page's SubIFDs tag (330).
        case subIFDs = "subifd"
    }

    /// The final path of the TIFF file.
    public let path: String
    /// The levels and tile grid; tiles are `plan.tileSize` pixels square.
    public let plan: PyramidPlan
    /// Pages or SubIFDs.
    public let levelStorage: LevelStorage
    /// Tile sides are a multiple of this many pixels, as the TIFF specification asks and JPEG's chroma blocks need.
    public static let tileSizeMultiple = 16
    private let tiles: TileEncoding
    private let state: Mutex<State>
    /// The largest file written as classic TIFF; tests lower it to make BigTIFF without writing 4 GiB.
    private let classicLimit: UInt64

    /// Bytes reserved at the start of the file for the header: BigTIFF's 16 (classic TIFF uses 8).
    private static let headerSize: UInt64 = 16

    private struct State: @unchecked Sendable {
        var file: AtomicFile?
        /// The file's length so far: where the next tile goes.
        var end: UInt64 = 0
        /// Per level, per tile (row by row), the tile's offset and byte count; 0 bytes for a tile not yet written.
        var offsets: [[UInt64]]
        var byteCounts: [[UInt64]]
    }

    /// Creates the temporary file for a pyramid of `plan`, whose tiles come in `pixelFormat` (8 bits per sample),
    /// encoded as `options.tileFormat` says: JPEG tiles, PNG as deflate-compressed pixels. `options` must be the
    /// ones the builder is given. Tiles are a multiple of `tileSizeMultiple` pixels, without overlap.
    public convenience init(path: String, plan: PyramidPlan, pixelFormat: PixelFormat,
                            options: PyramidBuilder.Options, levelStorage: LevelStorage = .pages) throws {
        try self.init(path: path, plan: plan, pixelFormat: pixelFormat, options: options, levelStorage: levelStorage,
                      classicLimit: UInt64(UInt32.max))
    }

    init(path: String, plan: PyramidPlan, pixelFormat: PixelFormat, options: PyramidBuilder.Options,
         levelStorage: LevelStorage, classicLimit: UInt64) throws {
        guard plan.tileSize % Self.tileSizeMultiple == 0 else {
            throw TesseraError.invalidArgument(
                "\(path): TIFF tiles must be a multiple of \(Self.tileSizeMultiple) pixels a side, not \(plan.tileSize)")
        }
        guard plan.overlap == 0 else {
            throw TesseraError.invalidArgument("\(path): TIFF tiles cannot overlap")
        }
        guard !options.skipBlank, !options.resume else {
            throw TesseraError.invalidArgument(
                "\(path): a TIFF stores every tile in one file, so it cannot skip blank tiles or resume a build")
        }
        self.path = path
        self.plan = plan
        self.levelStorage = levelStorage
        self.classicLimit = classicLimit
        tiles = try TileEncoding(path: path, format: options.tileFormat, pixelFormat: pixelFormat,
                                 encoding: options.encoding)
        let file = try AtomicFile(path: path)
        var state = State(file: file, offsets: plan.levels.map { [UInt64](repeating: 0, count: $0.tileCount) },
                          byteCounts: plan.levels.map { [UInt64](repeating: 0, count: $0.tileCount) })
        try Self.write([UInt8](repeating: 0, count: Int(Self.headerSize)), to: &state, path: path)
        self.state = Mutex(state)
    }

    public var padsEdgeTiles: Bool { true }

    public func hasTile(_ tile: TileAddress) -> Bool { false }

    public func encode(_ tile: ImageBuffer, options: PyramidBuilder.Options) throws -> [UInt8] {
        try tiles.encode(tile, options: options.encoding)
    }

    public func write(_ bytes: [UInt8], for tile: TileAddress) throws {
        let index = tile.row * plan.levels[tile.depth].columns + tile.column
        try state.withLock { state in
            let offset = state.end
            try Self.write(bytes, to: &state, path: path)
            state.offsets[tile.depth][index] = offset
            state.byteCounts[tile.depth][index] = UInt64(bytes.count)
        }
    }

    public func finish(blankTiles: [TileAddress]) throws {
        try state.withLock { state in
            for (depth, counts) in state.byteCounts.enumerated() {
                if let missing = counts.firstIndex(of: 0) {
                    let columns = plan.levels[depth].columns
                    let tile = TileAddress(depth: depth, column: missing % columns, row: missing / columns)
                    throw TesseraError.io(path: path, detail: "\(tile) was never written")
                }
            }
            if state.end % 2 == 1 { try Self.write([0], to: &state, path: path) }
            // Directory sizes do not depend on the values, so lay them out with placeholder links first.
            let reduced = levelStorage == .subIFDs ? plan.levels.count - 1 : 0
            let sizing = plan.levels.indices.map {
                directory(depth: $0, state: state, subIFDs: [UInt64](repeating: 0, count: $0 == 0 ? reduced : 0))
            }
            let variant: TIFFDirectory.Variant =
                state.end + UInt64(sizing.reduce(0) { $0 + $1.byteCount(.classic) }) <= classicLimit
                ? .classic : .big
            var starts: [UInt64] = [], offset = state.end
            for directory in sizing {
                starts.append(offset)
                offset += UInt64(directory.byteCount(variant))
            }
            for depth in plan.levels.indices {
                let directory = directory(depth: depth, state: state,
                                          subIFDs: depth == 0 ? Array(starts.dropFirst().prefix(reduced)) : [])
                let next = levelStorage == .pages && depth + 1 < starts.count ? starts[depth + 1] : 0
                try Self.write(directory.serialized(at: starts[depth], next: next, variant), to: &state, path: path)
            }
            let header = Self.header(variant, firstDirectory: starts[0])
            guard let file = state.file, let handle = file.handle, fseeko(handle, 0, SEEK_SET) == 0,
                  fwrite(header, 1, header.count, handle) == header.count else {
                throw TesseraError.io(path: path)
            }
            try file.commit()
            state.file = nil
        }
    }

    /// Level `depth`'s directory, listing `subIFDs` (offsets of the reduced levels' directories) if any.
    private func directory(depth: Int, state: State, subIFDs: [UInt64]) -> TIFFDirectory {
        let level = plan.levels[depth]
        var directory = TIFFDirectory()
        directory.add(.newSubfileType, .long, [depth == 0 ? 0 : 1])  // 1: a reduced-resolution version
        directory.add(.imageWidth, .long, [UInt64(level.size.width)])
        directory.add(.imageLength, .long, [UInt64(level.size.height)])
        directory.add(.bitsPerSample, .short, Array(repeating: 8, count: tiles.samplesPerPixel))
        directory.add(.compression, .short, [tiles.compression])
        directory.add(.photometric, .short, [tiles.photometric])
        directory.add(.samplesPerPixel, .short, [UInt64(tiles.samplesPerPixel)])
        directory.add(.planarConfiguration, .short, [1])  // samples interleaved
        if tiles.usesPredictor { directory.add(.predictor, .short, [2]) }  // horizontal differencing
        directory.add(.tileWidth, .long, [UInt64(plan.tileSize)])
        directory.add(.tileLength, .long, [UInt64(plan.tileSize)])
        directory.add(.tileOffsets, .offset, state.offsets[depth])
        directory.add(.tileByteCounts, .offset, state.byteCounts[depth])
        if !subIFDs.isEmpty { directory.add(.subIFDs, .directory, subIFDs) }
        if tiles.hasAlpha { directory.add(.extraSamples, .short, [2]) }  // unassociated alpha
        if let subsampling = tiles.chromaSubsampling { directory.add(.yCbCrSubsampling, .short, [subsampling, subsampling]) }
        return directory
    }

    /// The file header, little-endian, pointing at the first directory.
    private static func header(_ variant: TIFFDirectory.Variant, firstDirectory: UInt64) -> [UInt8] {
        var header = ByteWriter()
        header.bytes += Array("II".utf8)
        switch variant {
        case .classic:
            header.u16(42)
            header.u32(UInt32(firstDirectory))
        case .big:
            header.u16(43)
            header.u16(8)  // bytes per offset
            header.u16(0)
            header.u64(firstDirectory)
        }
        return header.bytes
    }

    /// Appends `bytes` at the end of the file.
    private static func write(_ bytes: [UInt8], to state: inout State, path: String) throws {
        guard let handle = state.file?.handle, fwrite(bytes, 1, bytes.count, handle) == bytes.count else {
            throw TesseraError.io(path: path)
        }
        state.end += UInt64(bytes.count)
    }
}

/// How a pyramidal TIFF's tiles are encoded and the tags that describe them: JPEG tiles as complete JPEG streams
/// (libjpeg codes colour as YCbCr, so the photometric is YCbCr with the JPEG's chroma subsampling, which libtiff
/// insists match), WebP tiles as complete WebP files, or raw pixels deflated with horizontal differencing, alpha kept.
private struct TileEncoding: Sendable {
    let compression: UInt64
    let photometric: UInt64
    let samplesPerPixel: Int
    let hasAlpha: Bool
    let usesPredictor: Bool
    /// YCbCrSubsampling (the same across and down), for JPEG colour tiles.
    let chromaSubsampling: UInt64?

    init(path: String, format: TileFormat, pixelFormat: PixelFormat, encoding: EncodeOptions) throws {
        precondition(pixelFormat.bitDepth == 8, "pyramid tiles are 8 bits per sample")
        switch format {
        case .jpeg:
            compression = 7
            photometric = pixelFormat.isColor ? 6 : 1
            samplesPerPixel = pixelFormat.isColor ? 3 : 1
            hasAlpha = false
            usesPredictor = false
            chromaSubsampling = pixelFormat.isColor ? (encoding.subsampling == .s420 ? 2 : 1) : nil
        case .png:
            compression = 8
            photometric = pixelFormat.isColor ? 2 : 1
            samplesPerPixel = pixelFormat.channelCount
            hasAlpha = pixelFormat.hasAlpha
            usesPredictor = true
            chromaSubsampling = nil
        case .webp:
            // libtiff's WebP codec (as libvips writes it): each tile a whole WebP, always RGB or RGBA.
            compression = 50001
            photometric = 2
            samplesPerPixel = pixelFormat.hasAlpha ? 4 : 3
            hasAlpha = pixelFormat.hasAlpha
            usesPredictor = false
            chromaSubsampling = nil
        }
    }

    func encode(_ tile: ImageBuffer, options: EncodeOptions) throws -> [UInt8] {
        if compression == 7 { return try ImageWriter.encode(tile, as: .jpeg, options: options) }
        if compression == 50001 { return try ImageWriter.encode(tile, as: .webp, options: options) }
        var pixels = tile.bytes
        let samples = tile.format.channelCount
        pixels.withUnsafeMutableBufferPointer { buffer in
            // Predictor 2: each sample minus the same sample of the pixel to its left, right to left in place.
            for row in 0..<tile.height {
                let start = row * tile.bytesPerRow
                for index in stride(from: start + tile.width * samples - 1, through: start + samples, by: -1) {
                    buffer[index] &-= buffer[index - samples]
                }
            }
        }
        var size = compressBound(uLong(pixels.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = output.withUnsafeMutableBufferPointer { target in
            pixels.withUnsafeBufferPointer { source in
                compress2(target.baseAddress, &size, source.baseAddress, uLong(source.count),
                          Int32(min(9, max(0, options.compressionLevel))))
            }
        }
        guard status == Z_OK else {
            throw TesseraError.io(path: "tile", detail: "deflate failed with zlib status \(status)")
        }
        output.removeLast(output.count - Int(size))
        return output
    }
}
