/// How a tiled layer cuts its content into levels and tiles, with CATiledLayer's meaning for every property
/// (docs/ARCHITECTURE.md, section 3).
///
/// Level `j` runs from `-(levelsOfDetail - 1)` to `levelsOfDetailBias` and draws at `contentsScale * 2^j` pixels
/// per point, so one tile of `tileSize` pixels covers `tileSize / (contentsScale * 2^j)` points. A `TileKey`'s
/// `level` is this `j`: 0 is 1x, 1 is 2x, -1 is 1/2x.
public struct TiledLayerConfiguration: Hashable, Sendable {
    /// The size of every tile, in pixels (edge tiles are cut short, never stretched).
    public var tileSize: PixelSize
    /// How many levels exist at 1x and below (1x, 1/2x, 1/4x, ...); 0 leaves only the magnified ones.
    public var levelsOfDetail: Int
    /// How many magnified levels exist above 1x (2x, 4x, ...).
    public var levelsOfDetailBias: Int
    /// Pixels per point of the screen at 1x (2 on a 2x display).
    public var contentsScale: Double
    /// How long a newly arrived tile takes to fade in, in seconds.
    public var fadeDuration: Double

    /// Makes a configuration; every default is CATiledLayer's.
    public init(
        tileSize: PixelSize = PixelSize(width: 256, height: 256),
        levelsOfDetail: Int = 1,
        levelsOfDetailBias: Int = 0,
        contentsScale: Double = 1,
        fadeDuration: Double = 0.25
    ) {
        precondition(tileSize.width > 0 && tileSize.height > 0, "tileSize must be positive, got \(tileSize)")
        precondition(levelsOfDetail >= 0 && levelsOfDetailBias >= 0, "levelsOfDetail and its bias cannot be negative")
        precondition(contentsScale > 0 && contentsScale.isFinite, "contentsScale must be positive, got \(contentsScale)")
        precondition(fadeDuration >= 0, "fadeDuration cannot be negative, got \(fadeDuration)")
        self.tileSize = tileSize
        self.levelsOfDetail = levelsOfDetail
        self.levelsOfDetailBias = levelsOfDetailBias
        self.contentsScale = contentsScale
        self.fadeDuration = fadeDuration
    }

    /// The levels available for content of `contentSize` points, coarsest to finest, or nil when there are none
    /// (levelsOfDetail 0 and bias 0, or content so small that every level would be under one pixel).
    ///
    /// Levels below 1x are dropped while the layer would be under one pixel there:
    /// `min(width, height) * contentsScale * 2^j < 1`.
    public func levelRange(for contentSize: PixelSize) -> ClosedRange<Int>? {
        let top = levelsOfDetailBias
        var bottom = -(levelsOfDetail - 1)
        let shortSide = Double(min(contentSize.width, contentSize.height))
        while bottom < 0, bottom <= top, shortSide * contentsScale * PowerOfTwo.value(bottom) < 1 {
            bottom += 1
        }
        return bottom <= top ? bottom...top : nil
    }

    /// The levels available for content of `contentSize` points, finest first (LOD 4 / bias 1: 2x, 1x, 1/2x, 1/4x,
    /// 1/8x); empty when there are none.
    public func levels(for contentSize: PixelSize) -> [LevelOfDetail] {
        guard let range = levelRange(for: contentSize) else { return [] }
        return range.reversed().map { LevelOfDetail(level: $0, configuration: self, contentSize: contentSize) }
    }

    /// The level drawn at `zoomScale` (screen points per content point) for content of `contentSize` points: the
    /// smallest `j` with `2^j >= zoomScale`, clamped to `levelRange(for:)`; nil when there are no levels.
    ///
    /// Beyond the top level the top one is magnified, below the bottom one the bottom one is minified.
    public func level(forZoom zoomScale: Double, contentSize: PixelSize) -> LevelOfDetail? {
        precondition(zoomScale > 0 && zoomScale.isFinite, "zoomScale must be positive, got \(zoomScale)")
        guard let range = levelRange(for: contentSize) else { return nil }
        let wanted = PowerOfTwo.ceilLog2(zoomScale)
        let level = min(max(wanted, range.lowerBound), range.upperBound)
        return LevelOfDetail(level: level, configuration: self, contentSize: contentSize)
    }

    /// The pixel density of level `level`: `contentsScale * 2^level` pixels per point.
    public func pixelsPerPoint(atLevel level: Int) -> Double {
        contentsScale * PowerOfTwo.value(level)
    }
}
