import Foundation
import Synchronization

/// Builds a tile pyramid in one pass over a source's strips, top to bottom:
///
///     ImageReader -> level 0 window -> cut tiles -> encoding queue (all cores) -> TileSink
///                         | 2x2 mean
///                         v
///                    level 1 window -> cut tiles -> ...
///
/// Each level keeps one tile row plus overlap; tiles are encoded in parallel through a bounded queue (a slow disk
/// slows the build down instead of growing memory). Every tile is encoded on its own, so the output is the same
/// byte for byte whatever the number of threads.
public final class PyramidBuilder: Sendable {
    /// How tiles are made.
    public struct Options: Sendable {
        public var tileFormat: TileFormat = .jpeg
        /// Quality, subsampling and so on for the tiles, and the background colour for padding and flattening.
        public var encoding = EncodeOptions()
        /// Leave out tiles that are all background colour (within `blankTolerance` per channel).
        public var skipBlank = false
        public var blankTolerance = 5
        /// Encoding threads; the default is one per core.
        public var threads = ProcessInfo.processInfo.activeProcessorCount
        /// Reuse complete tiles an interrupted build left (the sink must hold them).
        public var resume = false

        public init() {}
    }

    /// What a build did.
    public struct Report: Sendable {
        public var tilesWritten = 0
        /// Tiles left out by `skipBlank`.
        public var blankTiles: [TileAddress] = []
        /// Tiles an interrupted build had already written (`resume`).
        public var tilesReused = 0
    }

    public let plan: PyramidPlan
    private let sink: any TileSink
    private let options: Options
    private let state = Mutex(Report())

    public init(plan: PyramidPlan, sink: any TileSink, options: Options = Options()) {
        self.plan = plan
        self.sink = sink
        self.options = options
    }

    /// Reads every row of `reader` (whose size must be the plan's image size) and writes every tile;
    /// `progress` is told tiles done and the total, from the reading thread.
    public func build(from reader: any ImageReader,
                      progress: ((_ tilesDone: Int, _ tiles: Int) -> Void)? = nil) throws -> Report {
        precondition(reader.size == plan.imageSize, "the reader's size differs from the plan's")
        let eightBit = reader.format.bitDepth == 8
            ? reader : FormatConvertingReader(source: reader, format: reader.format.with(bitDepth: 8))
        // Decoding runs ahead on threads of its own, so the reading thread only averages and cuts tiles.
        let source = eightBit.readingAhead()
        let levels = plan.levels.indices.map { PyramidLevel(plan: plan, depth: $0, format: source.format) }
        let queue = EncodingQueue(threads: options.threads, capacity: 4 * max(1, options.threads) + 8)
        let total = plan.tileCount

        func push(_ row: UnsafeRawBufferPointer, into depth: Int) throws {
            let level = levels[depth]
            try level.append(row, cut: { tileRow in
                for column in 0..<plan.levels[depth].columns {
                    let tile = level.tile(column: column, row: tileRow, padded: sink.padsEdgeTiles,
                                          background: options.encoding.background)
                    let address = TileAddress(depth: depth, column: column, row: tileRow)
                    try queue.submit { [self] in try self.store(tile, at: address) }
                }
                progress?(state.withLock { $0.tilesWritten + $0.blankTiles.count + $0.tilesReused }, total)
            }, forward: { half in try push(half, into: depth + 1) })
        }

        var strip = source.makeStrip()
        do {
            while try source.read(into: &strip, maxRows: 16) {
                let bytesPerRow = strip.pixels.bytesPerRow
                try strip.pixels.bytes.withUnsafeBytes { raw in
                    for line in 0..<strip.height {
                        try push(UnsafeRawBufferPointer(rebasing: raw[line * bytesPerRow..<(line + 1) * bytesPerRow]),
                                 into: 0)
                    }
                }
            }
            for depth in levels.indices { try levels[depth].finish { half in try push(half, into: depth + 1) } }
        } catch {
            try? queue.waitUntilDone()
            throw error
        }
        try queue.waitUntilDone()
        let report = state.withLock { $0 }
        try sink.finish(blankTiles: report.blankTiles)
        progress?(total, total)
        return report
    }

    /// Encodes and stores one tile, on an encoding thread.
    private func store(_ tile: ImageBuffer, at address: TileAddress) throws {
        if options.skipBlank && isBlank(tile) {
            state.withLock { $0.blankTiles.append(address) }
            return
        }
        if options.resume && sink.hasTile(address) {
            state.withLock { $0.tilesReused += 1 }
            return
        }
        let bytes = try sink.encode(tile, options: options)
        try sink.write(bytes, for: address)
        state.withLock { $0.tilesWritten += 1 }
    }

    /// Whether every pixel is the background colour within the tolerance (or fully transparent).
    private func isBlank(_ tile: ImageBuffer) -> Bool {
        let background = tile.format.pixel(fromRGB: options.encoding.background)
        let colors = tile.format.hasAlpha ? background.count - 1 : background.count
        let tolerance = options.blankTolerance
        return tile.bytes.withUnsafeBytes { raw in
            var index = 0
            while index < tile.height * tile.bytesPerRow {
                let transparent = tile.format.hasAlpha && raw[index + colors] == 0
                if !transparent {
                    for channel in 0..<colors where abs(Int(raw[index + channel]) - Int(background[channel])) > tolerance {
                        return false
                    }
                }
                index += background.count
            }
            return true
        }
    }
}

/// A bounded queue of jobs run on a fixed number of threads: `submit` blocks while `capacity` jobs wait, so the
/// producer never runs far ahead of the encoders. The first job error stops further submissions.
final class EncodingQueue: Sendable {
    private let operations: OperationQueue
    private let slots: DispatchSemaphore
    private let firstError = Mutex<(any Error)?>(nil)

    init(threads: Int, capacity: Int) {
        operations = OperationQueue()
        operations.maxConcurrentOperationCount = max(1, threads)
        operations.qualityOfService = .userInitiated
        slots = DispatchSemaphore(value: capacity)
    }

    func submit(_ job: @escaping @Sendable () throws -> Void) throws {
        if let error = firstError.withLock({ $0 }) { throw error }
        slots.wait()
        operations.addOperation { [self] in
            defer { slots.signal() }
            guard firstError.withLock({ $0 == nil }) else { return }
            do { try job() } catch { firstError.withLock { if $0 == nil { $0 = error } } }
        }
    }

    /// Waits for every submitted job; rethrows the first error one of them threw.
    func waitUntilDone() throws {
        operations.waitUntilAllOperationsAreFinished()
        if let error = firstError.withLock({ $0 }) { throw error }
    }
}
