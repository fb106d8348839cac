#!/usr/bin/env python3
"""Requests per second and latency of `tessera serve` against iipsrv on the requests IIIF viewers send, under wrk.

    Benchmarks/viewer_traffic_benchmark.py [--megapixels 40] [--duration 20] [--connections 64] [--markdown]
                                           [--tessera PATH] [--before PATH] [--alone-runs N] [--alone-passes K]

Six images whose sizes are no power of two (crops of the benchmark sample), each as a pyramidal TIFF of 256-pixel
JPEG tiles made by libvips (`tiffsave --tile --pyramid --compression jpeg`, levels halved rounding down) and by
Tessera (`tile --layout tiff`, levels halved rounding up). Each image's sequence is what a viewer such as Mirador
or the Universal Viewer sends: its info.json, the `full/90,` and `full/125,` thumbnails, the tiles of the level that
fits a 1024 x 768 view, then 1024 x 768 views zoomed in on the middle, the right edge, the bottom edge and the
bottom-right corner at every level down to full resolution, and a pan of one tile at the deepest. Tiles are asked
for as the viewers do, `x,y,w,h/ceil(w/scale),/0/default.jpg`, so edge tiles are a pixel off libvips' levels.

First, on a freshly started server, every URL once, one at a time ("alone", first pass: what each request costs the
first time, nothing cached), then every URL once more ("again": what it costs once cached); then wrk cycles the
sequences of all images on every connection. `--alone-runs N` (for a loaded machine) then repeats the first pass on
N more freshly started servers of each build, interleaved, and keeps each URL's fastest time ("first, fastest of N"):
what a request costs alone the first time, with the other processes' noise taken out, by class; `--alone-passes K`
measures that K times and says which requests were over 3x the stored tile's median in how many of them, and which
five came nearest (their median ratio over the K passes, and their highest). The same
is then measured for a gallery: what a viewer showing a collection asks first, each image's info.json and
thumbnails one image after another, against the line of the images' own sequences. iipsrv (Debian's iipimage-server)
runs as 4 FastCGI processes behind lighttpd, as its documentation suggests. Needs wrk, lighttpd, spawn-fcgi,
iipimage-server and libvips (Debian packages). `--before PATH` adds another tessera binary (an earlier build) to
compare with."""
import argparse
import collections
import http.client
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import make_sample
from tables import print_table
from serve_benchmark import LIGHTTPD_PORT, TESSERA, TESSERA_PORT, WORK_DIR, run_wrk, start_iipsrv, wait_for

TILE = 256
VIEW = (1024, 768)
# Widths and heights no power of two, and none a multiple of the tile size.
CROPS = [(7583, 5273), (7001, 5003), (6553, 4111), (5999, 5111), (7513, 3001), (4099, 5255)]


def pyramids(megapixels):
    """The libvips and Tessera pyramidal TIFFs of every crop, made once and kept in the work folder."""
    sample = make_sample.cached_sample(WORK_DIR, megapixels)
    sample_width, sample_height = make_sample.dimensions(megapixels)
    folder = os.path.join(WORK_DIR, f"viewer-traffic-{megapixels}mp")
    os.makedirs(folder, exist_ok=True)
    made = {"libvips": [], "tessera": []}
    for width, height in CROPS:
        width, height = min(width, sample_width - 1), min(height, sample_height - 1)
        crop = os.path.join(folder, f"crop-{width}x{height}.jpg")
        if not os.path.exists(crop):
            subprocess.run(["vips", "extract_area", sample, crop + "[Q=90]", "0", "0", str(width), str(height)],
                           check=True)
        vips = os.path.join(folder, f"vips-{width}x{height}.tif")
        if not os.path.exists(vips):
            subprocess.run(["vips", "tiffsave", crop, vips, "--tile", "--pyramid", "--compression", "jpeg", "--Q", "75",
                            "--tile-width", str(TILE), "--tile-height", str(TILE)], check=True)
        tessera = os.path.join(folder, f"tessera-{width}x{height}.tif")
        if not os.path.exists(tessera):
            subprocess.run([TESSERA, "tile", crop, tessera, "--layout", "tiff", "--tile-size", str(TILE),
                            "--quality", "75"], check=True, stdout=subprocess.DEVNULL)
        made["libvips"].append((vips, width, height))
        made["tessera"].append((tessera, width, height))
    # Read once, so that no server is the first to fetch a file from the disk.
    for path, _, _ in made["libvips"] + made["tessera"]:
        with open(path, "rb") as file:
            while file.read(1 << 24):
                pass
    return folder, made


def tile_path(width, height, scale, column, row):
    span = TILE * scale
    x, y = column * span, row * span
    w, h = min(span, width - x), min(span, height - y)
    return f"{x},{y},{w},{h}/{-(-w // scale)},/0/default.jpg"


def view_tiles(width, height, scale, centre):
    """The tiles of the level at `scale` that a 1024 x 768 view centred on `centre` (full-resolution) shows."""
    span = TILE * scale
    columns, rows = -(-width // span), -(-height // span)
    half_w, half_h = VIEW[0] * scale // 2, VIEW[1] * scale // 2
    cx = min(max(centre[0], half_w), max(half_w, width - half_w))
    cy = min(max(centre[1], half_h), max(half_h, height - half_h))
    first_column, last_column = max(0, (cx - half_w) // span), min(columns - 1, (cx + half_w) // span)
    first_row, last_row = max(0, (cy - half_h) // span), min(rows - 1, (cy + half_h) // span)
    return [(scale, column, row) for row in range(first_row, last_row + 1)
            for column in range(first_column, last_column + 1)]


def sequence(width, height):
    """What a viewer asks of one image, in order, below its base URI."""
    paths = ["info.json", "full/90,/0/default.jpg", "full/125,/0/default.jpg"]
    home = 1
    while -(-width // home) > VIEW[0] or -(-height // home) > VIEW[1]:
        home *= 2
    tiles = view_tiles(width, height, home, (width // 2, height // 2))
    for centre in [(width // 2, height // 2), (width, height // 2), (width // 2, height), (width, height)]:
        scale = home // 2
        while scale >= 1:
            tiles += view_tiles(width, height, scale, centre)
            scale //= 2
    # A pan by one tile leftwards from the bottom-right corner at full resolution.
    tiles += view_tiles(width, height, 1, (width - TILE, height))
    seen = set()
    for tile in tiles:
        if tile not in seen:
            seen.add(tile)
            paths.append(tile_path(width, height, *tile))
    return paths


def gallery(images):
    """The URLs a viewer showing a collection of `images` asks first: each one's info.json and thumbnails (the first
    three requests of its sequence), one image after another."""
    return [f"/iiif/{os.path.basename(file)}/{path}" for file, width, height in images
            for path in sequence(width, height)[:3]]


def requests_over(counter):
    """The requests in `counter` (how many passes each was over the line), most often first, or "none"."""
    return ", ".join(f"`{url}` ({count})" for url, count in counter.most_common()) or "none"


def nearest_the_line(ratios, count=5):
    """The `count` requests whose times were the most times the stored tile's median (`ratios`: each request's
    ratio in every pass), by their median ratio: what a pass's "over" comes from, and how near the rest are."""
    nearest = sorted(ratios.items(), key=lambda item: -statistics.median(item[1]))[:count]
    return ", ".join(f"`{url}` {statistics.median(r):.2f}x (at most {max(r):.2f}x)" for url, r in nearest)


def is_stored_tile(path):
    """Whether a tile path asks for a whole 256 x 256 tile, which both servers send as stored."""
    parts = path.split("/")
    if len(parts) < 2 or parts[0] == "full" or parts[0] == "info.json":
        return False
    w, h = map(int, parts[0].split(",")[2:])
    return w == h and parts[1] == f"{TILE},"


def alone(host, port, urls):
    """Milliseconds of each URL, asked once, one at a time, over one kept-alive connection (opened before the
    first is timed: the first URL's time is its request's, not the TCP handshake's)."""
    connection = http.client.HTTPConnection(host, port, timeout=60)
    connection.connect()
    times = []
    for url in urls:
        start = time.perf_counter()
        connection.request("GET", url)
        response = connection.getresponse()
        response.read()
        times.append((time.perf_counter() - start) * 1000)
        if response.status != 200:
            sys.exit(f"{url}: HTTP {response.status}")
    connection.close()
    return times


def request_class(path):
    """What kind of request a path is: info.json, a thumbnail, a whole stored tile, or an edge or odd tile."""
    if path == "info.json":
        return "info.json"
    if path.startswith("full/"):
        return "thumbnail"
    return "whole tile" if is_stored_tile(path) else "edge or odd tile"


def by_class(paths, times, median_stored):
    """Each class's median, slowest and how many took over 3x the stored median, as one line."""
    parts = []
    for name in ["whole tile", "edge or odd tile", "thumbnail", "info.json"]:
        ts = [t for path, t in zip(paths, times) if request_class(path) == name]
        parts.append(f"{name} {len(ts)}: median {statistics.median(ts):.2f} ms, slowest {max(ts):.1f} ms,"
                     f" {sum(t > 3 * median_stored for t in ts)} over 3x")
    return "; ".join(parts)


def fastest_first_pass(server_binaries, folder, urls, runs):
    """Each URL's fastest first-pass time over `runs` freshly started servers of each binary, interleaved."""
    best = {binary: [float("inf")] * len(urls) for binary in server_binaries}
    for _ in range(runs):
        for binary in server_binaries:
            process = subprocess.Popen([binary, "serve", folder, "--port", str(TESSERA_PORT), "--quiet", "--no-cache"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                # /health, not an image's info.json: nothing of the images is opened before the pass.
                wait_for(f"http://127.0.0.1:{TESSERA_PORT}/health")
                process_times = alone("127.0.0.1", TESSERA_PORT, urls)
                best[binary] = [min(a, b) for a, b in zip(best[binary], process_times)]
            finally:
                process.terminate()
                process.wait()
    return best


def summary(paths, times):
    """The median of the whole stored tiles, the median of all, the slowest and how many took over 3x the first."""
    median_stored = statistics.median(t for path, t in zip(paths, times) if is_stored_tile(path))
    worst = max(range(len(times)), key=lambda index: times[index])
    over = sum(1 for t in times if t > 3 * median_stored)
    return median_stored, statistics.median(times), times[worst], paths[worst], over


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megapixels", type=int, default=40)
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--connections", default="64")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--tessera", metavar="PATH", default=TESSERA, help="the tessera binary to serve with")
    parser.add_argument("--before", metavar="PATH", help="an earlier tessera binary to compare with")
    parser.add_argument("--alone-runs", type=int, default=0, metavar="N",
                        help="repeat the first alone pass on N fresh servers per build and keep each URL's fastest")
    parser.add_argument("--alone-passes", type=int, default=1, metavar="K",
                        help="measure that fastest first pass K times, and say which requests were over in how many")
    args = parser.parse_args()
    servers = [("tessera serve", args.tessera)] + ([("tessera serve, before", args.before)] if args.before else []) \
        + [("iipsrv (4 FastCGI processes, lighttpd)", None)]
    folder, made = pyramids(args.megapixels)
    temporary = tempfile.mkdtemp(prefix="tessera-viewer-bench-")
    rows, alone_rows = [], []
    for kind, images in made.items():
        for server, binary in servers:
            if binary:
                process = subprocess.Popen([binary, "serve", folder, "--port", str(TESSERA_PORT), "--quiet",
                                            "--no-cache"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

                def stop(process=process):
                    process.terminate()
                    process.wait()
                bases = [f"/iiif/{os.path.basename(path)}/" for path, _, _ in images]
                port = TESSERA_PORT
            else:
                lighttpd, pid_file = start_iipsrv(temporary)

                def stop(lighttpd=lighttpd, pid_file=pid_file):
                    lighttpd.terminate()
                    with open(pid_file) as file:
                        for pid in file.read().split():
                            os.kill(int(pid), signal.SIGTERM)
                    lighttpd.wait()
                bases = [f"/fcgi-bin/iipsrv.fcgi?IIIF={path}/" for path, _, _ in images]
                port = LIGHTTPD_PORT
            try:
                wait_for(f"http://127.0.0.1:{port}{bases[0]}info.json")
                paths = [path for _, width, height in images for path in sequence(width, height)]
                urls = [base + path for base, (_, width, height) in zip(bases, images) for path in sequence(width, height)]
                for attempt in ["first", "again"]:
                    times = alone("127.0.0.1", port, urls)
                    median_stored, median, worst, worst_path, over = summary(paths, times)
                    alone_rows.append((kind, server, attempt, median_stored, median, worst, worst_path, over))
                    print(f"  {kind}, {server}, alone, {attempt}: stored tile median {median_stored:.2f} ms, all median"
                          f" {median:.2f} ms, worst {worst:.1f} ms ({worst_path}), {over} over 3x the stored median",
                          file=sys.stderr)
                    print(f"    by class: {by_class(paths, times, median_stored)}", file=sys.stderr)
                for connections in map(int, args.connections.split(",")):
                    rate, p50, p99, errors, socket_errors = run_wrk(f"http://127.0.0.1:{port}/", [url.lstrip("/") for url in urls],
                                                                    connections, args.duration, temporary)
                    rows.append((kind, server, connections, rate, p50, p99, errors, socket_errors))
                    print(f"  {kind}, {server}, {connections} connections: {rate:.0f} requests/s, p50 {p50}, p99 {p99},"
                          f" {errors} errors, socket errors {socket_errors}", file=sys.stderr)
            finally:
                stop()
                time.sleep(0.5)
    class_rows, gallery_rows = [], []
    if args.alone_runs:
        binaries = [(server, binary) for server, binary in servers if binary]
        for kind, images in made.items():
            paths = [path for _, width, height in images for path in sequence(width, height)]
            urls = [f"/iiif/{os.path.basename(file)}/" + path for file, width, height in images
                    for path in sequence(width, height)]
            overs = {binary: [] for _, binary in binaries}
            over_urls = {binary: collections.Counter() for _, binary in binaries}
            ratios = {binary: collections.defaultdict(list) for _, binary in binaries}
            medians = {binary: [] for _, binary in binaries}
            for _ in range(args.alone_passes):
                best = fastest_first_pass([binary for _, binary in binaries], folder, urls, args.alone_runs)
                for server, binary in binaries:
                    median_stored, _, _, _, over = summary(paths, best[binary])
                    medians[binary].append(median_stored)
                    overs[binary].append(over)
                    over_urls[binary].update(url.split("/", 2)[2] for url, t in zip(urls, best[binary])
                                             if t > 3 * median_stored)
                    for url, t in zip(urls, best[binary]):
                        ratios[binary][url.split("/", 2)[2]].append(t / median_stored)
                    line = by_class(paths, best[binary], median_stored)
                    print(f"  {kind}, {server}, first, fastest of {args.alone_runs}: stored tile median"
                          f" {median_stored:.2f} ms, {over} over 3x; {line}", file=sys.stderr)
            for server, binary in binaries:
                class_rows.append((kind, server, ", ".join(map(str, overs[binary])), requests_over(over_urls[binary]),
                                   nearest_the_line(ratios[binary])))
            gallery_urls = gallery(images)
            gallery_overs = {binary: [] for _, binary in binaries}
            gallery_over_urls = {binary: collections.Counter() for _, binary in binaries}
            for _ in range(args.alone_passes):
                best = fastest_first_pass([binary for _, binary in binaries], folder, gallery_urls, args.alone_runs)
                for server, binary in binaries:
                    line = 3 * statistics.median(medians[binary])
                    over = [url.split("/", 2)[2] for url, t in zip(gallery_urls, best[binary]) if t > line]
                    gallery_overs[binary].append(len(over))
                    gallery_over_urls[binary].update(over)
                    print(f"  {kind}, {server}, gallery, fastest of {args.alone_runs}: slowest {max(best[binary]):.2f} ms"
                          f" against the line of {line:.2f} ms, {len(over)} over", file=sys.stderr)
            for server, binary in binaries:
                gallery_rows.append((kind, server, ", ".join(map(str, gallery_overs[binary])),
                                     requests_over(gallery_over_urls[binary])))
    count = sum(len(sequence(width, height)) for _, width, height in made["libvips"])
    print(f"{len(CROPS)} images ({', '.join(f'{w}x{h}' for _, w, h in made['libvips'])}), {count} requests per pass, "
          f"{args.duration} s per run, wrk with 2 threads on the same 2-core machine")
    print()
    print_table(["pyramid", "server", "connections", "requests/s", "p50", "p99", "non-2xx", "socket errors"],
                [(*row[:3], f"{row[3]:,.0f}", *row[4:]) for row in rows], args.markdown)
    print()
    print_table(["pyramid", "server", "pass", "stored tile, median", "all, median", "slowest", "its request", "over 3x"],
                [(*row[:3], f"{row[3]:.2f} ms", f"{row[4]:.2f} ms", f"{row[5]:.1f} ms", f"`{row[6]}`", row[7])
                 for row in alone_rows], args.markdown)
    if class_rows:
        print()
        print_table(["pyramid", "server", f"first pass, fastest of {args.alone_runs}: over 3x, each of"
                     f" {args.alone_passes} passes", "the requests over (in how many passes)",
                     "nearest the line: times the stored tile's median, median of the passes"],
                    class_rows, args.markdown)
        print()
        print_table(["pyramid", "server", f"gallery, fastest of {args.alone_runs}: over 3x, each of"
                     f" {args.alone_passes} passes", "the requests over (in how many passes)"],
                    gallery_rows, args.markdown)


if __name__ == "__main__":
    main()
