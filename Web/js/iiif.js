// How IIIF Image API clients address an image's tiles: the mirror of the engine's IIIFTileGeometry
// (Sources/Tessera/Pyramid/Layouts/IIIFTileGeometry.swift), checked against the same vectors (Tests/Vectors/iiif.json).
// The level at reduction `scale` (a power of two) is the image divided by `scale`, rounded up; pixels `rect` of it
// are the full-resolution region from (rect.x * scale, rect.y * scale), cut by the image's edge, asked for at
// rect's size: {region}/{size}/0/default.jpg, region `full` for the whole image, size `max` at its full size.

/** The tile side to assume when an info.json lists no tiles, in pixels. */
export const DEFAULT_TILE_SIZE = 512;

/** The IIIF tile geometry of a `width` x `height` image in `tileWidth` x `tileHeight` tiles. */
export class IIIFTileGeometry {
  constructor(width, height, tileWidth, tileHeight) {
    Object.assign(this, { width, height, tileWidth, tileHeight });
  }

  /** The size of the level at reduction `scale`. */
  levelSize(scale) {
    return { width: Math.ceil(this.width / scale), height: Math.ceil(this.height / scale) };
  }

  /** The pixels of the level at reduction `scale` that tile (column, row) holds. */
  tileRect(scale, column, row) {
    const level = this.levelSize(scale), x = column * this.tileWidth, y = row * this.tileHeight;
    return { x, y, width: Math.min(this.tileWidth, level.width - x), height: Math.min(this.tileHeight, level.height - y) };
  }

  /** The request for `rect` of the level at reduction `scale`, below the image's base URI. */
  path(scale, rect, format = "jpg") {
    const x = rect.x * scale, y = rect.y * scale;
    const w = Math.min(rect.width * scale, this.width - x), h = Math.min(rect.height * scale, this.height - y);
    const region = x === 0 && y === 0 && w === this.width && h === this.height ? "full" : `${x},${y},${w},${h}`;
    const size = rect.width === this.width && rect.height === this.height ? "max" : `${rect.width},${rect.height}`;
    return `${region}/${size}/0/default.${format}`;
  }

  /** The request for tile (column, row) at reduction `scale`. */
  tilePath(scale, column, row, format = "jpg") {
    return this.path(scale, this.tileRect(scale, column, row), format);
  }
}
