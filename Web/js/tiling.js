// The tiling engine's layout math, mirrored from Sources/TesseraTiling (same names, same rules, same order of
// floating-point operations) so that both pass Tests/Vectors/tiling.json exactly. Content is measured in points
// (one image pixel is one point at zoom 1); tiles in pixels.

/** Exact powers of two (PowerOfTwo.swift): the level rules compare against 2^j, never a rounded log2. */
export const PowerOfTwo = {
  /** 2^exponent, exact for integer exponents. */
  value(exponent) {
    return 2 ** exponent;
  },
  /** The smallest integer j with 2^j >= x: ceil(log2(x)), corrected against exact powers of two. */
  ceilLog2(x) {
    if (!(x > 0 && Number.isFinite(x))) throw new RangeError(`ceilLog2 needs a positive finite number, got ${x}`);
    let j = Math.ceil(Math.log2(x));
    while (2 ** (j - 1) >= x) j -= 1;
    while (2 ** j < x) j += 1;
    return j;
  },
};

/** A tile's identity, "level/column_row" as TileKey.description; strings make Map and Set keys. */
export function tileKey(level, column, row) {
  return `${level}/${column}_${row}`;
}

/** The key `levels` levels coarser covering (level, column, row): indices halve, rounding down. */
export function ancestorKey(level, column, row, levels) {
  return { level: level - levels, column: column >> levels, row: row >> levels };
}

/** How content is cut into levels and tiles, with CATiledLayer's meaning for every property. */
export class TiledLayerConfiguration {
  constructor({ tileWidth = 256, tileHeight = 256, levelsOfDetail = 1, levelsOfDetailBias = 0, contentsScale = 1,
    fadeDuration = 0.25 } = {}) {
    Object.assign(this, { tileWidth, tileHeight, levelsOfDetail, levelsOfDetailBias, contentsScale, fadeDuration });
  }

  /** [lowest, highest] available j for content of `contentSize` points, or null when there are none. Levels below
   * 1x are dropped while min(width, height) * contentsScale * 2^j < 1. */
  levelRange(contentSize) {
    const top = this.levelsOfDetailBias;
    let bottom = -(this.levelsOfDetail - 1);
    const shortSide = Math.min(contentSize.width, contentSize.height);
    while (bottom < 0 && bottom <= top && shortSide * this.contentsScale * PowerOfTwo.value(bottom) < 1) bottom += 1;
    return bottom <= top ? [bottom, top] : null;
  }

  /** The level drawn at `zoomScale`: the smallest j with 2^j >= zoomScale, clamped to the range; null if none. */
  levelForZoom(zoomScale, contentSize) {
    const range = this.levelRange(contentSize);
    if (!range) return null;
    const level = Math.min(Math.max(PowerOfTwo.ceilLog2(zoomScale), range[0]), range[1]);
    return new LevelOfDetail(level, this, contentSize);
  }

  /** contentsScale * 2^level pixels per point. */
  pixelsPerPoint(level) {
    return this.contentsScale * PowerOfTwo.value(level);
  }
}

/** One level over a content: its pixel density and grid, tile rectangles in content points clipped at the edges. */
export class LevelOfDetail {
  constructor(level, configuration, contentSize) {
    this.level = level;
    this.pixelsPerPoint = configuration.pixelsPerPoint(level);
    this.tileWidth = configuration.tileWidth;
    this.tileHeight = configuration.tileHeight;
    this.contentSize = contentSize;
  }

  /** A full tile's size in points. */
  get tileSizeInPoints() {
    return { width: this.tileWidth / this.pixelsPerPoint, height: this.tileHeight / this.pixelsPerPoint };
  }

  /** The whole content at this level, in pixels, rounded up. */
  get levelSizeInPixels() {
    return { width: Math.ceil(this.contentSize.width * this.pixelsPerPoint),
      height: Math.ceil(this.contentSize.height * this.pixelsPerPoint) };
  }

  /** Columns and rows of the grid. */
  get gridSize() {
    const pixels = this.levelSizeInPixels;
    return { columns: Math.ceil(pixels.width / this.tileWidth), rows: Math.ceil(pixels.height / this.tileHeight) };
  }

  /** Whether (column, row) is in this level's grid. */
  contains(column, row) {
    const grid = this.gridSize;
    return column >= 0 && column < grid.columns && row >= 0 && row < grid.rows;
  }

  /** The content tile (column, row) covers, in points, clipped at the content's edges. */
  rect(column, row) {
    const x = (column * this.tileWidth) / this.pixelsPerPoint;
    const y = (row * this.tileHeight) / this.pixelsPerPoint;
    const size = this.tileSizeInPoints;
    return { x, y, width: Math.min(size.width, this.contentSize.width - x),
      height: Math.min(size.height, this.contentSize.height - y) };
  }

  /** The same area as edges computed from grid indices alone, so that neighbours share their edge exactly. */
  edges(column, row) {
    const edge = (index, extent, content) => Math.min((index * extent) / this.pixelsPerPoint, content);
    return { x0: edge(column, this.tileWidth, this.contentSize.width), y0: edge(row, this.tileHeight, this.contentSize.height),
      x1: edge(column + 1, this.tileWidth, this.contentSize.width),
      y1: edge(row + 1, this.tileHeight, this.contentSize.height) };
  }

  /** The pixels tile (column, row) holds, cut short at the right and bottom edges. */
  pixelSize(column, row) {
    const pixels = this.levelSizeInPixels;
    return { width: Math.min(this.tileWidth, pixels.width - column * this.tileWidth),
      height: Math.min(this.tileHeight, pixels.height - row * this.tileHeight) };
  }

  /** { columns: [first, last], rows: [first, last] } of the tiles meeting `rect`, or null when it misses. */
  tileRange(rect) {
    const x0 = Math.max(rect.x, 0), y0 = Math.max(rect.y, 0);
    const x1 = Math.min(rect.x + rect.width, this.contentSize.width);
    const y1 = Math.min(rect.y + rect.height, this.contentSize.height);
    if (!(x1 > x0 && y1 > y0)) return null;
    const grid = this.gridSize;
    const indices = (start, end, extent, count) => {
      const first = Math.floor((start * this.pixelsPerPoint) / extent);
      const last = Math.ceil((end * this.pixelsPerPoint) / extent) - 1;
      return [Math.max(0, first), Math.min(count - 1, Math.max(first, last))];
    };
    return { columns: indices(x0, x1, this.tileWidth, grid.columns), rows: indices(y0, y1, this.tileHeight, grid.rows) };
  }

  /** A planned tile: key, clipped rect in points, pixel size. */
  planned(column, row) {
    return { key: tileKey(this.level, column, row), level: this.level, column, row, rect: this.rect(column, row),
      pixelSize: this.pixelSize(column, row) };
  }
}

/** Decides what a frame draws: the level for the zoom, its tiles meeting the view centre-out, a prefetch ring one
 * tile wide and the coarsest level's tiles under the view as a backstop (TiledLayout.swift, TilePlan.swift). */
export class TiledLayout {
  constructor(configuration, contentSize) {
    this.configuration = configuration;
    this.contentSize = contentSize;
  }

  /** Level `level` of this layout, whether or not the configuration makes it available. */
  level(level) {
    return new LevelOfDetail(level, this.configuration, this.contentSize);
  }

  /** The plan for `visibleRect` (content points) at `zoomScale`: { level, visible, prefetch, backstop }. */
  plan(visibleRect, zoomScale) {
    const level = this.configuration.levelForZoom(zoomScale, this.contentSize);
    if (!level) return { level: null, visible: [], prefetch: [], backstop: [] };
    const range = level.tileRange(visibleRect);
    if (!range) return { level, visible: [], prefetch: [], backstop: [] };
    const grid = level.gridSize;
    const ring = {
      columns: [Math.max(0, range.columns[0] - 1), Math.min(grid.columns - 1, range.columns[1] + 1)],
      rows: [Math.max(0, range.rows[0] - 1), Math.min(grid.rows - 1, range.rows[1] + 1)],
    };
    const inside = (value, [low, high]) => value >= low && value <= high;
    const visible = [], prefetch = [];
    for (let row = ring.rows[0]; row <= ring.rows[1]; row += 1) {
      for (let column = ring.columns[0]; column <= ring.columns[1]; column += 1) {
        (inside(column, range.columns) && inside(row, range.rows) ? visible : prefetch).push([column, row]);
      }
    }
    const centre = { x: visibleRect.x + visibleRect.width / 2, y: visibleRect.y + visibleRect.height / 2 };
    return { level, visible: centreOut(visible, centre, level), prefetch: centreOut(prefetch, centre, level),
      backstop: this.backstop(visibleRect, centre, level) };
  }

  /** The coarsest level's tiles meeting the view and one tile around, centre-out; none when it is the level drawn. */
  backstop(visibleRect, centre, drawn) {
    const range = this.configuration.levelRange(this.contentSize);
    if (!range || range[0] >= drawn.level) return [];
    const level = this.level(range[0]);
    const covered = level.tileRange(visibleRect);
    if (!covered) return [];
    const grid = level.gridSize;
    const cells = [];
    for (let row = Math.max(0, covered.rows[0] - 1); row <= Math.min(grid.rows - 1, covered.rows[1] + 1); row += 1) {
      for (let column = Math.max(0, covered.columns[0] - 1);
        column <= Math.min(grid.columns - 1, covered.columns[1] + 1); column += 1) cells.push([column, row]);
    }
    return centreOut(cells, centre, level);
  }
}

/** Cells ordered by squared distance of their unclipped centre to `centre`, ties by row then column. */
function centreOut(cells, centre, level) {
  const tile = level.tileSizeInPoints;
  return cells
    .map(([column, row]) => {
      const dx = (column + 0.5) * tile.width - centre.x;
      const dy = (row + 0.5) * tile.height - centre.y;
      return { column, row, distance: dx * dx + dy * dy };
    })
    .sort((a, b) => a.distance - b.distance || a.row - b.row || a.column - b.column)
    .map(({ column, row }) => level.planned(column, row));
}

/** The zoom range: the minimum fits the content in the view, the maximum is one power of two past 1:1,
 * 2^(ceil(log2(1 / imageScale)) + 1) * imageScale with imageScale = viewWidth / contentWidth (ZoomLimits.swift). */
export class ZoomLimits {
  constructor(contentSize, viewSize) {
    const fit = Math.min(viewSize.width / contentSize.width, viewSize.height / contentSize.height);
    const imageScale = viewSize.width / contentSize.width;
    const maximum = PowerOfTwo.value(PowerOfTwo.ceilLog2(1 / imageScale) + 1) * imageScale;
    this.minimum = fit;
    this.maximum = Math.max(fit, maximum);
  }

  /** `zoomScale` clamped to the limits. */
  clamp(zoomScale) {
    return Math.min(Math.max(zoomScale, this.minimum), this.maximum);
  }
}

/** The scroll-view model (ScrollViewport.swift): `contentOffset` is the view's top-left corner in zoomed content;
 * content smaller than the view is centred; every change keeps the zoom in its limits and the offset in bounds. */
export class ScrollViewport {
  constructor(contentSize, viewSize) {
    this.contentSize = contentSize;
    this.viewSize = viewSize;
    this.zoomLimits = new ZoomLimits(contentSize, viewSize);
    this.zoomScale = this.zoomLimits.minimum;
    this.contentOffset = this.boundedOffset({ x: 0, y: 0 });
  }

  /** What the view shows, in content points (reaching past the content where it is centred). */
  get visibleRect() {
    return { x: this.contentOffset.x / this.zoomScale, y: this.contentOffset.y / this.zoomScale,
      width: this.viewSize.width / this.zoomScale, height: this.viewSize.height / this.zoomScale };
  }

  /** Zooms to `zoomScale` (clamped) keeping the content under `focalPoint` (view points) fixed, within bounds. */
  zoom(zoomScale, focalPoint = { x: this.viewSize.width / 2, y: this.viewSize.height / 2 }) {
    const anchor = this.contentPoint(focalPoint);
    this.zoomScale = this.zoomLimits.clamp(zoomScale);
    this.contentOffset = this.boundedOffset({ x: anchor.x * this.zoomScale - focalPoint.x,
      y: anchor.y * this.zoomScale - focalPoint.y });
  }

  /** Scrolls the view's top-left corner to `offset` in zoomed content, within bounds. */
  scroll(offset) {
    this.contentOffset = this.boundedOffset(offset);
  }

  /** A new view size, keeping the content at the centre and the zoom as far as the new limits allow. */
  resize(viewSize) {
    const centre = this.contentPoint({ x: this.viewSize.width / 2, y: this.viewSize.height / 2 });
    this.viewSize = viewSize;
    this.zoomLimits = new ZoomLimits(this.contentSize, viewSize);
    this.zoomScale = this.zoomLimits.clamp(this.zoomScale);
    this.contentOffset = this.boundedOffset({ x: centre.x * this.zoomScale - viewSize.width / 2,
      y: centre.y * this.zoomScale - viewSize.height / 2 });
  }

  /** The content point under `viewPoint`. */
  contentPoint(viewPoint) {
    return { x: (this.contentOffset.x + viewPoint.x) / this.zoomScale,
      y: (this.contentOffset.y + viewPoint.y) / this.zoomScale };
  }

  /** `offset` held within the content along each axis, or centring the content where it is smaller. */
  boundedOffset(offset) {
    const axis = (value, content, view) => {
      const zoomed = content * this.zoomScale;
      if (zoomed <= view) return -(view - zoomed) / 2;
      return Math.min(Math.max(value, 0), zoomed - view);
    };
    return { x: axis(offset.x, this.contentSize.width, this.viewSize.width),
      y: axis(offset.y, this.contentSize.height, this.viewSize.height) };
  }
}
