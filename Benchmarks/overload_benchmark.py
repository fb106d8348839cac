#!/usr/bin/env python3
"""`tessera serve` under overload: 64 concurrent `full/max` renders of the 100 MP sample with and without a render
budget. (Many connections over tiles: `serve_benchmark.py --connections 1000 --duration 30`, beside iipsrv.)

    Benchmarks/overload_benchmark.py [--render-memory 256M] [--markdown] [--tessera PATH]

64 concurrent `full/max` requests, each on a connection of its own, over 64 hard links to the 100 MP sample JPEG
(distinct paths: the response cache cannot coalesce them; `--no-cache --response-cache 1K --threads 64`), once with
`--render-memory` and once with a budget too large to bind (16G): images and 503s answered, wall time, and the
server's peak RSS (VmHWM); a request whose connection closed without an answer counts as dropped."""
import argparse
import http.client
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import make_sample
from tables import print_table
from serve_benchmark import TESSERA, WORK_DIR, wait_for

PORT = 18090


def serve(tessera, path, *options):
    process = subprocess.Popen([tessera, "serve", path, "--port", str(PORT), "--quiet", *options],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(f"http://127.0.0.1:{PORT}/metrics")
    return process


def stop(process):
    process.terminate()
    process.wait(timeout=60)


def peak_rss(process):
    status = open(f"/proc/{process.pid}/status").read()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024


def full_max(tessera, folder, render_memory, count=64):
    sample = make_sample.cached_sample(WORK_DIR, 100)
    links = os.path.join(folder, "links")
    if not os.path.isdir(links):
        os.makedirs(links)
        for index in range(count):
            os.link(sample, os.path.join(links, f"big_{index:02}.jpg"))
    process = serve(tessera, links, "--no-cache", "--response-cache", "1K", "--threads", str(count),
                    "--render-memory", render_memory)
    statuses = [None] * count

    def fetch(index):
        connection = http.client.HTTPConnection("127.0.0.1", PORT, timeout=300)
        try:
            connection.request("GET", f"/iiif/big_{index:02}.jpg/full/max/0/default.jpg")
            response = connection.getresponse()
            response.read()
            statuses[index] = response.status
        except (OSError, http.client.HTTPException):
            statuses[index] = "dropped"
        finally:
            connection.close()

    try:
        idle = peak_rss(process)
        start = time.monotonic()
        threads = [threading.Thread(target=fetch, args=(index,)) for index in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return (statuses.count(200), statuses.count(503), statuses.count("dropped"), time.monotonic() - start,
                peak_rss(process), idle)
    finally:
        stop(process)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--render-memory", default="256M")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--tessera", metavar="PATH", default=TESSERA)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="tessera-overload-bench-")
    rows = []
    for label, memory in [(f"--render-memory {args.render_memory}", args.render_memory), ("--render-memory 16G", "16G")]:
        images, busy, dropped, seconds, peak, idle = full_max(args.tessera, folder, memory)
        rows.append((label, images, busy, dropped, seconds, peak >> 20, idle >> 20))
        print(f"  64 x full/max, {label}: {images} images, {busy} 503s, {dropped} dropped, {seconds:.1f} s, "
              f"peak RSS {peak >> 20} MiB", file=sys.stderr)
    header = ["budget", "images", "503 + Retry-After", "dropped", "wall s", "peak RSS MiB", "idle RSS MiB"]
    print_table(header, [(*row[:4], f"{row[4]:.1f}", *row[5:]) for row in rows], args.markdown)


if __name__ == "__main__":
    main()
