/// Builds a frame's draw list from a plan and what the cache holds, so the screen is never blank where anything
/// is known: each visible tile itself if cached; else the nearest coarser cached ancestor, cropped to the tile
/// and magnified; else, if the next finer level holds every tile covering it, those tiles minified.
///
/// The list is in painting order: coarser placeholders, then finer ones, then the exact tiles, so a tile fading
/// in is laid over its ancestor rather than over nothing. Time is passed in, in seconds on the clock that stamped
/// the arrivals, so composition is a pure function of its inputs.
public struct TileComposer: Hashable, Sendable {
    /// How the content is cut into levels and tiles.
    public let layout: TiledLayout

    /// A composer for the tiles of `layout`.
    public init(layout: TiledLayout) {
        self.layout = layout
    }

    /// The draw list for `plan` at time `now` (seconds), from the tiles in `cache`. Looking up a visible tile
    /// counts as a cache hit or miss; looking for placeholders does not.
    public func drawList<Tile>(for plan: TilePlan, cache: TileCache<Tile>, now: Double) -> [TileDrawCommand<Tile>] {
        guard let level = plan.level,
            let levels = layout.configuration.levelRange(for: layout.contentSize)
        else { return [] }
        var coarser: [TileDrawCommand<Tile>] = []
        var finer: [TileDrawCommand<Tile>] = []
        var exact: [TileDrawCommand<Tile>] = []
        for planned in plan.visible {
            if let cached = cache.tile(for: planned.key) {
                let alpha = fade(cached, now: now)
                if alpha < 1, let placeholder = ancestor(of: planned, in: level, levels: levels, cache: cache, now: now) {
                    coarser.append(placeholder)
                }
                exact.append(whole(
                    cached, key: planned.key, pixels: planned.pixelSize, rect: planned.rect, alpha: alpha, role: .exact))
            } else if let placeholder = ancestor(of: planned, in: level, levels: levels, cache: cache, now: now) {
                coarser.append(placeholder)
            } else {
                finer += descendants(of: planned, in: level, levels: levels, cache: cache, now: now)
            }
        }
        // Coarsest first, so a finer placeholder paints over a coarser one; the index keeps the order stable.
        let coarsestFirst = coarser.enumerated()
            .sorted { ($0.element.key.level, $0.offset) < ($1.element.key.level, $1.offset) }
            .map(\.element)
        return coarsestFirst + finer + exact
    }

    /// The nearest coarser cached tile covering `planned`, cropped to it.
    private func ancestor<Tile>(
        of planned: PlannedTile, in level: LevelOfDetail, levels: ClosedRange<Int>, cache: TileCache<Tile>, now: Double
    ) -> TileDrawCommand<Tile>? {
        let depth = level.level - levels.lowerBound
        guard depth > 0 else { return nil }
        for up in 1...depth {
            let key = planned.key.ancestor(levelsUp: up)
            guard let cached = cache.probe(key) else { continue }
            let coarse = layout.level(key.level)
            let origin = coarse.rect(column: key.column, row: key.row).origin
            let scale = coarse.pixelsPerPoint
            let source = Rect2D(
                x: (planned.rect.minX - origin.x) * scale, y: (planned.rect.minY - origin.y) * scale,
                width: planned.rect.size.width * scale, height: planned.rect.size.height * scale
            )
            return TileDrawCommand(
                key: key, tile: cached.tile, sourceRect: source, destinationRect: planned.rect,
                alpha: fade(cached, now: now), role: .coarserPlaceholder
            )
        }
        return nil
    }

    /// The tiles of the next finer level covering `planned`, if the cache holds every one of them.
    private func descendants<Tile>(
        of planned: PlannedTile, in level: LevelOfDetail, levels: ClosedRange<Int>, cache: TileCache<Tile>, now: Double
    ) -> [TileDrawCommand<Tile>] {
        guard level.level < levels.upperBound else { return [] }
        let fine = layout.level(level.level + 1)
        var commands: [TileDrawCommand<Tile>] = []
        for key in planned.key.children where fine.contains(key) {
            guard let cached = cache.probe(key) else { return [] }
            commands.append(whole(
                cached, key: key, pixels: fine.pixelSize(column: key.column, row: key.row),
                rect: fine.rect(column: key.column, row: key.row), alpha: fade(cached, now: now), role: .finerPlaceholder))
        }
        return commands
    }

    private func whole<Tile>(
        _ cached: CachedTile<Tile>, key: TileKey, pixels: PixelSize, rect: Rect2D, alpha: Double,
        role: TileDrawCommand<Tile>.Role
    ) -> TileDrawCommand<Tile> {
        TileDrawCommand(
            key: key, tile: cached.tile,
            sourceRect: Rect2D(x: 0, y: 0, width: Double(pixels.width), height: Double(pixels.height)),
            destinationRect: rect, alpha: alpha, role: role
        )
    }

    /// How far `cached` has faded in at `now`: 0 on arrival, 1 after `fadeDuration` seconds (at once when it is 0).
    private func fade<Tile>(_ cached: CachedTile<Tile>, now: Double) -> Double {
        let duration = layout.configuration.fadeDuration
        guard duration > 0 else { return 1 }
        return min(max((now - cached.arrivalTime) / duration, 0), 1)
    }
}
