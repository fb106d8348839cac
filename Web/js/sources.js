// Where tiles come from: a IIIF Image API info.json (level 1 or more; a level 0 server for the sizes it lists) or a
// Deep Zoom .dzi. Either is a pyramid of levels halving from 1:1, which is the tiling engine's levels j = 0, -1,
// -2, ... at 2^j pixels per image pixel; a source says how many there are and where tile (j, column, row) is.
import { DEFAULT_TILE_SIZE, IIIFTileGeometry } from "./iiif.js";

/** Opens the info.json or .dzi at `url` (resolved against the page), rejecting with a one-line message. */
export async function openSource(url) {
  const address = new URL(url, document.baseURI).href;
  const response = await fetch(address);
  if (!response.ok) throw new Error(`${address}: HTTP ${response.status}`);
  const text = await response.text();
  if (/\.dzi(\?|$)/i.test(new URL(address).pathname) || text.trimStart().startsWith("<")) {
    return DeepZoomSource.parse(address, text);
  }
  return IIIFSource.parse(address, text);
}

/** A IIIF Image API 2 or 3 image service. */
export class IIIFSource {
  static parse(address, text) {
    let info;
    try {
      info = JSON.parse(text);
    } catch (error) {
      throw new Error(`${address}: not JSON (${error.message})`);
    }
    const id = (info.id ?? info["@id"] ?? address.replace(/\/info\.json$/, "")).replace(/\/$/, "");
    if (!(info.width > 0 && info.height > 0)) throw new Error(`${address}: no width and height`);
    const tiles = info.tiles?.[0] ?? {};
    const tileWidth = tiles.width ?? DEFAULT_TILE_SIZE;
    const scaleFactors = tiles.scaleFactors?.length ? tiles.scaleFactors : [1];
    return new IIIFSource(id, info, tileWidth, tiles.height ?? tileWidth, Math.max(...scaleFactors));
  }

  constructor(id, info, tileWidth, tileHeight, largestScaleFactor) {
    this.id = id;
    this.width = info.width;
    this.height = info.height;
    this.tileWidth = tileWidth;
    this.tileHeight = tileHeight;
    this.geometry = new IIIFTileGeometry(info.width, info.height, tileWidth, tileHeight);
    this.levelCount = Math.round(Math.log2(largestScaleFactor)) + 1;
    this.sizes = (info.sizes ?? []).map(({ width, height }) => `${width},${height}`);
  }

  /** The URL of tile (column, row) of level j, as IIIFTileGeometry names it: x,y,w,h/w,h/0/default.jpg, the
   * region `full` for the whole image (the first paint, which a level 0 server has at the sizes it lists). */
  tileURL(level, column, row) {
    return `${this.id}/${this.geometry.tilePath(2 ** -level, column, row)}`;
  }

  /** Where a tile's own pixels are in its decoded `bitmap`: all of it (no overlap), scaled to the tile's size
   * should a server send another. */
  tileContent(tile, bitmap) {
    return { x: 0, y: 0, scaleX: bitmap.width / tile.pixelSize.width, scaleY: bitmap.height / tile.pixelSize.height };
  }

  /** A small picture of the whole image for the overview map, at least `side` pixels on its long side if listed. */
  overviewURL(side) {
    const sizes = this.sizes.map((size) => size.split(",").map(Number)).sort((a, b) => a[0] - b[0]);
    const size = sizes.find(([w, h]) => Math.max(w, h) >= side) ?? sizes[sizes.length - 1];
    return size ? `${this.id}/full/${size[0]},${size[1]}/0/default.jpg`
      : `${this.id}/full/${Math.min(Math.ceil(side), this.width)},/0/default.jpg`;
  }
}

/** A Deep Zoom image: name.dzi and name_files/{level}/{column}_{row}.{format}, level 0 being 1x1. */
export class DeepZoomSource {
  static parse(address, text) {
    const xml = new DOMParser().parseFromString(text, "application/xml");
    const image = xml.getElementsByTagName("Image")[0];
    const size = xml.getElementsByTagName("Size")[0];
    if (!image || !size) throw new Error(`${address}: not a Deep Zoom descriptor (no Image and Size elements)`);
    const number = (element, name) => Number(element.getAttribute(name));
    return new DeepZoomSource(address.replace(/\.(dzi|xml)(\?.*)?$/i, "_files"), {
      width: number(size, "Width"), height: number(size, "Height"), tileSize: number(image, "TileSize"),
      overlap: number(image, "Overlap"), format: image.getAttribute("Format") });
  }

  constructor(base, { width, height, tileSize, overlap, format }) {
    Object.assign(this, { base, width, height, overlap, format });
    this.tileWidth = this.tileHeight = tileSize;
    this.topLevel = Math.ceil(Math.log2(Math.max(width, height)));
    this.levelCount = this.topLevel + 1;
  }

  tileURL(level, column, row) {
    return `${this.base}/${this.topLevel + level}/${column}_${row}.${this.format}`;
  }

  /** Interior edges carry `overlap` extra pixels: a tile's own pixels start after them, at their planned size. */
  tileContent(tile) {
    return { x: tile.column > 0 ? this.overlap : 0, y: tile.row > 0 ? this.overlap : 0, scaleX: 1, scaleY: 1 };
  }

  /** The level that fits in one tile: its only tile. */
  overviewURL() {
    const levels = Math.floor(Math.log2(this.tileWidth));
    return `${this.base}/${Math.min(levels, this.topLevel)}/0_0.${this.format}`;
  }
}
