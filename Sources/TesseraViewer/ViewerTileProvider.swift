import Synchronization
import Tessera
import TesseraTiling

/// The engine's `TileProvider` over a `TileSource`: finds the source pixels of each engine tile (`SourceTile`),
/// reads them on the scheduler's background task, converts them to RGBA and magnifies them when the level is
/// finer than full resolution.
public final class ViewerTileProvider: TileProvider {
    /// Where the pixels come from.
    public let source: any TileSource
    /// `log2(contentsScale)`: engine level `j` is `2^(j + scaleShift)` pixels per image pixel.
    public let scaleShift: Int
    /// Where the tiles' textures are accounted for.
    public let ledger: TextureLedger
    private let lastFailure = Mutex<String?>(nil)

    /// A provider of tiles from `source` for a layer whose contents scale is `2^scaleShift`.
    public init(source: any TileSource, scaleShift: Int, ledger: TextureLedger) {
        self.source = source
        self.scaleShift = scaleShift
        self.ledger = ledger
    }

    /// The engine configuration matching the source: its tile size, one level per depth it can read, none
    /// magnified beyond the contents scale, and the display's `contentsScale` (`2^scaleShift`).
    public var configuration: TiledLayerConfiguration {
        TiledLayerConfiguration(
            tileSize: source.tileSize, levelsOfDetail: source.depthCount + scaleShift, levelsOfDetailBias: 0,
            contentsScale: Double(1 << scaleShift))
    }

    /// The message of the last tile that could not be made, if any.
    public var failure: String? { lastFailure.withLock { $0 } }

    public func makeTile(for request: TileRequest) async throws -> TileImage {
        try Task.checkCancellation()
        let part = SourceTile(key: request.key, pixelSize: request.pixelSize, tileSize: source.tileSize,
                              shift: request.key.level + scaleShift)
        do {
            var reader: any ImageReader = BufferReader(try source.pixels(depth: part.depth, region: part.region))
            let isOpaque = !reader.format.hasAlpha
            if reader.format != .rgba8 {
                reader = FormatConvertingReader(source: reader, format: .rgba8)
            }
            let size = Size(width: request.pixelSize.width, height: request.pixelSize.height)
            if reader.size != size {
                reader = try ResamplingReader(source: reader, size: size, options: .init(kernel: .bilinear))
            }
            return TileImage(pixels: try reader.readAll(name: source.name), isOpaque: isOpaque, ledger: ledger)
        } catch {
            lastFailure.withLock { $0 = "\(error)" }
            throw error
        }
    }

    public func cost(of tile: TileImage) -> Int { tile.bytes }

    /// The tile's RGBA pixels plus the source pixels they are made from.
    public func estimatedCost(of request: TileRequest) -> Int {
        request.pixelSize.width * request.pixelSize.height * 4 * 2
    }
}
