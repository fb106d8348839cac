#!/usr/bin/env python3
"""Writes iiif.json: shared test vectors for IIIF tile addressing, which the Swift IIIFTileGeometry (used by the
IIIF level-0 layout, the tile-folder reader, the server and the native viewer) and the web viewer's iiif.js must
both reproduce. A second implementation, written from the rule as OpenSeadragon and static IIIF tilers apply it
(see README.md), not from either of the other two. Run: python3 make_iiif_vectors.py > iiif.json
"""
import json

DEFAULT_TILE_SIZE = 512  # what a viewer assumes when info.json lists no tiles


def ceil_div(a, b):
    return -(-a // b)


def request(width, height, scale, rect):
    """The request for `rect` = (x, y, w, h) of the level at reduction `scale`."""
    x, y, w, h = rect
    full_x, full_y = x * scale, y * scale
    full_w, full_h = min(w * scale, width - full_x), min(h * scale, height - full_y)
    region = "full" if (full_x, full_y, full_w, full_h) == (0, 0, width, height) \
        else f"{full_x},{full_y},{full_w},{full_h}"
    size = "max" if (w, h) == (width, height) else f"{w},{h}"
    return f"{region}/{size}/0/default.jpg", [full_x, full_y, full_w, full_h]


def cases():
    for width, height, tile_width, tile_height in [(1000, 600, 512, 512), (1000, 600, 256, 256), (1, 1, 256, 256),
                                                   (4097, 3001, 256, 256), (254, 1000, 254, 254),
                                                   (6000, 4000, 300, 200), (513, 512, 512, 512)]:
        scale = 1
        while True:
            level_w, level_h = ceil_div(width, scale), ceil_div(height, scale)
            columns, rows = ceil_div(level_w, tile_width), ceil_div(level_h, tile_height)
            cells = {(c, r) for c in {0, columns // 2, columns - 1} for r in {0, rows // 2, rows - 1}}
            for column, row in sorted(cells):
                x, y = column * tile_width, row * tile_height
                rect = [x, y, min(tile_width, level_w - x), min(tile_height, level_h - y)]
                path, region = request(width, height, scale, rect)
                yield {"image": [width, height], "tile": [tile_width, tile_height], "scale": scale,
                       "column": column, "row": row, "levelRect": rect, "region": region, "path": path}
            if level_w <= tile_width and level_h <= tile_height:
                break
            scale *= 2


def partial_rects():
    """Parts of tiles, as a viewer on a 2x display asks for the quarter of a full-resolution tile."""
    for width, height, scale, rect in [(1000, 600, 1, [256, 0, 128, 128]), (1000, 600, 2, [0, 0, 500, 300]),
                                       (4097, 3001, 1, [4096, 3000, 1, 1]), (4097, 3001, 4, [768, 512, 257, 239])]:
        path, region = request(width, height, scale, rect)
        yield {"image": [width, height], "scale": scale, "levelRect": rect, "region": region, "path": path}


print(json.dumps({"schema": "tessera-iiif-vectors/1", "defaultTileSize": DEFAULT_TILE_SIZE,
                  "tiles": list(cases()), "rects": list(partial_rects())}, indent=1))
