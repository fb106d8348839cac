#!/usr/bin/env python3
"""Writes tiling.json: shared test vectors for TesseraTiling (Swift) and the browser viewer (JS).

A second implementation of docs/ARCHITECTURE.md, section 3, written from the spec rather than from the Swift code,
so that the Swift test checks two readings of the spec against each other; the cases marked in README.md were also checked by
hand. Geometry uses IEEE doubles in the same order of operations as the Swift code, so tie-breaks in the centre-out
order agree bit for bit. Run: python3 make_tiling_vectors.py > tiling.json
"""
import json
import math
import re


def level_range(cfg, width, height):
    top = cfg["levelsOfDetailBias"]
    bottom = -(cfg["levelsOfDetail"] - 1)
    short_side = min(width, height)
    # Levels below 1x go while the layer would be under one pixel there.
    while bottom < 0 and bottom <= top and short_side * cfg["contentsScale"] * 2.0 ** bottom < 1:
        bottom += 1
    return (bottom, top) if bottom <= top else None


def level_for_zoom(zoom, levels):
    # The smallest j with 2^j >= zoom, found by exact comparison with powers of two rather than by log2.
    j = 0
    while 2.0 ** j < zoom:
        j += 1
    while 2.0 ** (j - 1) >= zoom:
        j -= 1
    return min(max(j, levels[0]), levels[1])


def tile_span(start, end, tile, scale, count):
    first = math.floor(start * scale / tile)
    last = math.ceil(end * scale / tile) - 1
    return max(0, first), min(count - 1, max(first, last))


def plan(case):
    cfg, (width, height) = case["configuration"], (case["contentSize"]["width"], case["contentSize"]["height"])
    levels = level_range(cfg, width, height)
    if levels is None:
        return {"level": None, "levelIndex": None, "pixelsPerPoint": None, "levelRange": None,
                "visible": [], "prefetch": []}
    level = level_for_zoom(case["zoomScale"], levels)
    scale = cfg["contentsScale"] * 2.0 ** level
    tile_w, tile_h = cfg["tileWidth"], cfg["tileHeight"]
    columns = math.ceil(math.ceil(width * scale) / tile_w)
    rows = math.ceil(math.ceil(height * scale) / tile_h)
    v = case["visibleRect"]
    x0, y0 = max(v["x"], 0.0), max(v["y"], 0.0)
    x1, y1 = min(v["x"] + v["width"], float(width)), min(v["y"] + v["height"], float(height))
    result = {"level": level, "levelIndex": level - levels[0], "pixelsPerPoint": scale,
              "levelRange": [levels[0], levels[1]], "visible": [], "prefetch": []}
    if x1 <= x0 or y1 <= y0:
        return result
    c0, c1 = tile_span(x0, x1, tile_w, scale, columns)
    r0, r1 = tile_span(y0, y1, tile_h, scale, rows)
    tile_pw, tile_ph = tile_w / scale, tile_h / scale
    cx, cy = v["x"] + v["width"] / 2, v["y"] + v["height"] / 2

    def order(cells):
        def key(cell):
            dx = (cell[0] + 0.5) * tile_pw - cx
            dy = (cell[1] + 0.5) * tile_ph - cy
            return (dx * dx + dy * dy, cell[1], cell[0])
        return [list(cell) for cell in sorted(cells, key=key)]

    ring = [(c, r) for r in range(max(0, r0 - 1), min(rows - 1, r1 + 1) + 1)
            for c in range(max(0, c0 - 1), min(columns - 1, c1 + 1) + 1)]
    result["visible"] = order([cell for cell in ring if c0 <= cell[0] <= c1 and r0 <= cell[1] <= r1])
    result["prefetch"] = order([cell for cell in ring if not (c0 <= cell[0] <= c1 and r0 <= cell[1] <= r1)])
    return result


def configuration(lod=1, bias=0, scale=1.0, tile=(256, 256)):
    return {"tileWidth": tile[0], "tileHeight": tile[1], "levelsOfDetail": lod, "levelsOfDetailBias": bias,
            "contentsScale": scale}


def fit_rect(width, height, view_width, view_height):
    """The visible rect of a scroll view fitting the image and centring it (ScrollViewport's first frame)."""
    zoom = min(view_width / width, view_height / height)
    def axis(content, view):
        zoomed = content * zoom
        return -(view - zoomed) / 2 if zoomed <= view else 0.0
    return zoom, {"x": axis(width, view_width) / zoom, "y": axis(height, view_height) / zoom,
                  "width": view_width / zoom, "height": view_height / zoom}


def rect(x, y, w, h):
    return {"x": float(x), "y": float(y), "width": float(w), "height": float(h)}


SEED = (11935, 8554)
seed_fit_zoom, seed_fit_rect = fit_rect(*SEED, 375.0, 268.0)
CASES = [
    ("default configuration, top-left corner at 1x", configuration(), (1000, 700), rect(0, 0, 375, 268), 1.0),
    ("default configuration, bottom-right corner: edge tiles cut short", configuration(), (1000, 700),
     rect(625, 432, 375, 268), 1.0),
    ("a view ending on a tile edge does not take the next tile", configuration(), (1000, 700), rect(256, 0, 256, 256), 1.0),
    ("content smaller than the view, centred", configuration(), (300, 200), rect(-50, -50, 400, 300), 1.0),
    ("2x screen, zoom 1.5 asks for 3 px/pt and gets level 1 at 4", configuration(bias=2, scale=2.0), (1000, 700),
     rect(100, 100, 100, 100), 1.5),
    ("3x screen, zoom 0.75 draws 1x at 3 px/pt: tiles of 85.33 points", configuration(lod=2, scale=3.0), (1000, 700),
     rect(200, 150, 500, 357), 0.75),
    ("seed image fitted in a 375x268 view, LOD 1 bias 6: every 1x tile", configuration(bias=6), SEED, seed_fit_rect,
     seed_fit_zoom),
    ("seed image at zoom 3: level 2 (4x), 64-point tiles", configuration(bias=6), SEED, rect(5000, 4000, 125, 268 / 3), 3.0),
    ("seed image at zoom 64: level 6", configuration(bias=6), SEED, rect(6000, 4000, 375 / 64, 268 / 64), 64.0),
    ("seed image at zoom 0.3 with LOD 4: level -1 (1/2x)", configuration(lod=4, bias=6), SEED,
     rect(1000, 1000, 1250, 268 / 0.3), 0.3),
    ("zoom 0.5 is exactly 1/2x", configuration(lod=4), (4000, 3000), rect(0, 0, 750, 536), 0.5),
    ("zoom 0.75 rounds up to 1x", configuration(lod=4), (4000, 3000), rect(100, 100, 500, 357), 0.75),
    ("zoom 2 is exactly 2x", configuration(bias=3), (4000, 3000), rect(1000, 1000, 187.5, 134), 2.0),
    ("zoom 3 rounds up to 4x", configuration(bias=3), (4000, 3000), rect(1000, 1000, 125, 268 / 3), 3.0),
    ("zoom beyond the top level magnifies the top level", configuration(lod=2, bias=1), (4000, 3000),
     rect(2000, 1500, 37.5, 26.8), 10.0),
    ("zoom below the bottom level minifies the bottom level", configuration(lod=2, bias=1), (4000, 3000),
     rect(0, 0, 4000, 3000), 0.05),
    ("levels under one pixel are dropped: a 4-point-high strip stops at 1/4x", configuration(lod=5), (1000, 4),
     rect(0, -100, 1000, 204), 0.01),
    ("non-square tiles of 512x256 at 2x", configuration(bias=1, tile=(512, 256)), (2000, 1000), rect(300, 300, 400, 300),
     2.0),
    ("no levels at all: levelsOfDetail 0 and bias 0", configuration(lod=0), (1000, 700), rect(0, 0, 375, 268), 1.0),
]


def main():
    cases = []
    for name, cfg, (width, height), visible, zoom in CASES:
        case = {"name": name, "configuration": cfg, "contentSize": {"width": width, "height": height},
                "visibleRect": visible, "zoomScale": zoom}
        case["expected"] = plan(case)
        cases.append(case)
    text = json.dumps({"schema": "tessera-tiling-vectors/1", "cases": cases}, indent=1)
    # One [column, row] pair per line would make the seed's 1,598 tiles 6,000 lines: keep pairs on one line.
    print(re.sub(r"\[\s+(-?\d+),\s+(-?\d+)\s+\]", r"[\1, \2]", text))


if __name__ == "__main__":
    main()
