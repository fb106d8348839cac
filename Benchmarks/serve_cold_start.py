#!/usr/bin/env python3
"""How soon `tessera serve` shows a large plain JPEG that it has never seen, against pre-building with libvips.

    Benchmarks/serve_cold_start.py [--size 100mp|1gp] [--markdown]

A viewer's first screen is the tiles of the level at which the whole image fits 1024 x 1024 pixels, asked for in
the IIIF form OpenSeadragon uses, four at a time. With an empty pyramid cache the server builds, in the background,
first a preview pyramid at 1/8 scale, then the full pyramid; the first screen is timed cold (its coarse requests
wait for the preview), again once the preview exists, and again once the full pyramid does. The peer is the usual
way to serve such an image: `vips dzsave` it first (timed), then serve the static tiles."""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import make_sample
from tables import print_table

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
WORK_DIR = os.path.join(BENCHMARKS_DIR, "work")
TESSERA = os.path.join(os.path.dirname(BENCHMARKS_DIR), ".build", "release", "tessera")
TILE = 256
PORT = 18090


def first_screen_urls(base, width, height, fit=1024):
    scale = 1
    while (width + scale - 1) // scale > fit or (height + scale - 1) // scale > fit:
        scale *= 2
    span = TILE * scale
    urls = []
    for y in range(0, height, span):
        for x in range(0, width, span):
            w, h = min(span, width - x), min(span, height - y)
            urls.append(f"{base}/{x},{y},{w},{h}/{(w + scale - 1) // scale},/0/default.jpg")
    return urls


def fetch_all(urls):
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for body in pool.map(lambda url: urllib.request.urlopen(url, timeout=600).read(), urls):
            assert body[:2] == b"\xff\xd8"
    return time.perf_counter() - start


def wait_for(predicate, timeout=1800):
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            sys.exit("timed out")
        time.sleep(0.05)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["100mp", "1gp"], default="100mp")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    jpeg = make_sample.cached_sample(WORK_DIR, {"100mp": 100, "1gp": 1000}[args.size])
    width, height = map(int, os.path.basename(jpeg).split("-")[1].split("x"))
    rows = []
    with tempfile.TemporaryDirectory(dir=WORK_DIR) as scratch:
        cache = os.path.join(scratch, "cache")
        server = subprocess.Popen([TESSERA, "serve", jpeg, "--port", str(PORT), "--cache", cache, "--quiet"],
                                  stdout=subprocess.PIPE, text=True)
        try:
            server.stdout.readline()
            base = f"http://127.0.0.1:{PORT}/iiif/{os.path.basename(jpeg)}"
            started = time.perf_counter()
            urllib.request.urlopen(base + "/info.json").read()
            urls = first_screen_urls(base, width, height)
            rows.append(("tessera, cold cache", fetch_all(urls)))
            built = lambda suffix: any(name.endswith(suffix) for name in os.listdir(cache))
            wait_for(lambda: built(".preview.tif"))
            preview_ready = time.perf_counter() - started
            rows.append((f"tessera, preview ready after {preview_ready:.1f} s", fetch_all(urls)))
            wait_for(lambda: any(name.endswith(".tif") and not name.endswith(".preview.tif")
                                 for name in os.listdir(cache)))
            full_ready = time.perf_counter() - started
            rows.append((f"tessera, full pyramid ready after {full_ready:.1f} s", fetch_all(urls)))
        finally:
            server.terminate()
            server.wait()
        start = time.perf_counter()
        subprocess.run(["vips", "dzsave", jpeg, os.path.join(scratch, "vips"), "--tile-size", "256", "--overlap",
                        "0"], check=True)
        dzsave = time.perf_counter() - start
    print(f"first screen of {os.path.basename(jpeg)} ({len(urls)} tiles at the level that fits 1024 px)")
    print_table(["server state", "first screen (s)"],
                [(name, f"{seconds:.2f}") for name, seconds in rows + [("vips dzsave before serving anything", dzsave)]],
                args.markdown)
    print(f"cold first screen / dzsave: {rows[0][1] / dzsave:.2f}x")


if __name__ == "__main__":
    main()
