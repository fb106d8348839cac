import COpenJPEG
import Foundation
import Synchronization

/// A JPEG 2000 file opened for many reads, as its `ImageSource` keeps it: decompressors whose main header was read
/// once, lent to one read at a time and kept for the next (at most `idleLimit` idle, each holding its header and
/// where the tiles it passed start), and whole codestream tiles decoded through them into a `DecodedTileCache`.
final class JPEG2000Codestream: SharedDecoderState {
    /// What every read needs of the main header.
    struct Layout: Sendable {
        var container: JPEG2000Codec.Container
        /// The reference grid's image area, and component 0's sampling on it.
        var area: (x0: Int, y0: Int, x1: Int, y1: Int)
        var sampling: (dx: Int, dy: Int)
        var componentCount: Int
        /// The tile grid on the reference grid: its origin, tile size, columns and rows.
        var tileOrigin: (x: Int, y: Int)
        var tileSize: (width: Int, height: Int)
        var tileColumns: Int
        var tileRows: Int
        /// HTJ2K code-blocks: OpenJPEG 2.5.0 decodes them right only as a whole image (any smaller area, even a
        /// full-width band, comes out wrong), so such files are decoded whole, within the budget.
        var isHighThroughput: Bool

        var isTiled: Bool { tileColumns * tileRows > 1 }
    }

    let input: ImageInput
    /// Distinguishes this opened file's tiles from every other's in a shared `DecodedTileCache`.
    let identity: Int
    private let state = Mutex<(layout: Layout?, idle: [JPEG2000Codec])>((nil, []))
    /// Idle decompressors kept: two per core, as many as the server's request threads by default.
    static let idleLimit = 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// An idle decompressor's memory, estimated: its header's structures, about 24 KiB per codestream tile
    /// (measured with OpenJPEG 2.5: 2.7 MB for 108 tiles).
    let heldByteLimit: Int

    private static let identities = Atomic<Int>(0)
    private let failedWholeTile = Atomic<Bool>(false)

    /// Whether whole tiles decode through lent decompressors (until one failed to).
    var wholeTilesDecode: Bool { !failedWholeTile.load(ordering: .relaxed) }

    /// Notes that a whole tile failed to decode: reads decode areas from now on.
    func wholeTilesFail() { failedWholeTile.store(true, ordering: .relaxed) }

    /// Opens `input` (nothing is read until the first decompressor is needed), `properties` as read.
    init(input: ImageInput, properties: ImageProperties) {
        self.input = input
        identity = Self.identities.add(1, ordering: .relaxed).newValue
        let tiles = (properties.jpeg2000?.tileColumns ?? 1) * (properties.jpeg2000?.tileRows ?? 1)
        heldByteLimit = Self.idleLimit * ((256 << 10) + tiles * (24 << 10))
    }

    /// The main header's layout (read with the first decompressor).
    func layout() throws -> Layout {
        if let layout = state.withLock({ $0.layout }) { return layout }
        giveBack(try borrow())
        return state.withLock { $0.layout! }
    }

    /// A decompressor no other read is using, its header read: an idle one, or a new one.
    func borrow() throws -> JPEG2000Codec {
        if let codec = state.withLock({ $0.idle.popLast() }) { return codec }
        return try makeCodec(reduction: 0, readAhead: .tiles)
    }

    /// A new decompressor for areas decoded at `reduction`, reading ahead by `readAhead`, never lent before.
    func makeCodec(reduction: Int, readAhead: JPEG2000ByteSource.ReadAhead) throws -> JPEG2000Codec {
        let source = try JPEG2000ByteSource(input)
        guard let container = JPEG2000Codec.container(of: source.bytes(at: 0, count: 12)) else {
            throw TesseraError.unknownFormat(path: input.name)
        }
        let codec = try JPEG2000Codec(source: source, container: container, reduction: reduction, readAhead: readAhead)
        if state.withLock({ $0.layout == nil }) {
            let layout = try Self.layout(of: codec, container: container)
            state.withLock { $0.layout = layout }
        }
        return codec
    }

    /// Takes back a decompressor of `borrow` for the next read, unless it decoded an area (OpenJPEG decodes one
    /// area per decompressor) or enough are idle.
    func giveBack(_ codec: JPEG2000Codec) {
        guard !codec.hasDecoded else { return }
        state.withLock { state in
            if state.idle.count < Self.idleLimit { state.idle.append(codec) }
        }
    }

    /// Codestream tile `index` decoded whole at `reduction` into pixels of `format`, from `cache` or decoded now
    /// (once, however many reads ask for it at the same time). A decompressor that failed is dropped.
    func tile(_ index: Int, reduction: Int, format: PixelFormat, cache: DecodedTileCache) throws -> DecodedTileCache.Tile {
        try cache.tile(for: DecodedTileCache.Key(source: identity, tile: index, reduction: reduction)) {
            let codec = try borrow()
            try codec.decodeTile(index, reduction: reduction)
            let tile = try Self.pixels(of: codec, format: format, reduction: reduction)
            codec.releaseSamples()
            giveBack(codec)
            return tile
        }
    }

    /// The decoded tile in `codec.image` as pixels of `format`, placed in component 0's reduced coordinates.
    private static func pixels(of codec: JPEG2000Codec, format: PixelFormat, reduction: Int) throws
        -> DecodedTileCache.Tile {
        let image = codec.image.pointee
        let channels = JPEG2000Decoder.channels(of: image)
        guard channels.format == format else {
            throw TesseraError.corrupt(path: codec.source.name, detail: "the decoded components (\(channels.format))"
                                       + " differ from what the header describes (\(format))")
        }
        let reference = image.comps[0], scale = 1 << reduction
        let rect = Rect(x: ceilDivide(Int(reference.x0), scale), y: ceilDivide(Int(reference.y0), scale),
                        width: Int(reference.w), height: Int(reference.h))
        let rowBytes = rect.width * format.bytesPerPixel
        let samples = JPEG2000Samples(image: image, channels: channels, columns: rect.x, count: rect.width,
                                      referenceSampling: (Int(reference.dx), Int(reference.dy)))
        var pixels = [UInt8](repeating: 0, count: rect.height * rowBytes)
        pixels.withUnsafeMutableBytes { pixels in
            for row in 0..<rect.height {
                samples.convertRow(rect.y + row, into: pixels.baseAddress! + row * rowBytes)
            }
        }
        return DecodedTileCache.Tile(rect: rect, format: format, pixels: pixels)
    }

    private static func layout(of codec: JPEG2000Codec, container: JPEG2000Codec.Container) throws -> Layout {
        let image = codec.image.pointee
        let (info, style) = try codec.structure()
        return Layout(container: container,
                      area: (Int(image.x0), Int(image.y0), Int(image.x1), Int(image.y1)),
                      sampling: (Int(image.comps[0].dx), Int(image.comps[0].dy)), componentCount: Int(image.numcomps),
                      tileOrigin: (Int(info.tx0), Int(info.ty0)), tileSize: (Int(info.tdx), Int(info.tdy)),
                      tileColumns: Int(info.tw), tileRows: Int(info.th), isHighThroughput: style.cblksty & 0x40 != 0)
    }
}
