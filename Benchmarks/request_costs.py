#!/usr/bin/env python3
"""What single requests cost `tessera serve`, build against build: the per-change figures of BENCHMARKS.md.

    Benchmarks/request_costs.py [--tessera PATH ...] [--warm N] [--first RUNS] [--folder DIR] URL ...

URLs are paths on the server (`/iiif/vips-7001x5003.tif/full/125,/0/default.jpg`); the folder is the viewer-traffic
benchmark's (`viewer_traffic_benchmark.py` makes it), unless `--folder` names another. Two measures, each printed per
URL and per build (the builds interleaved, so that a machine's drift falls on all of them):

- warm (`--warm N`, default 300): on one server per build, each URL asked 20 times, then N times more over one
  kept-alive connection; the server's CPU per request (all its threads, from /proc's schedstat, in nanoseconds)
  and the client's wall time. Renders are not kept (`--response-cache 1K`), so each is made again.
- first (`--first RUNS`, default 0): each URL's fastest time over RUNS freshly started servers per build, asked once
  in the order given: what a request costs the first time (an image opened, a level decoded for the first time).
"""
import argparse
import glob
import http.client
import os
import subprocess
import sys
import time

import viewer_traffic_benchmark as viewer
from serve_benchmark import TESSERA, TESSERA_PORT, wait_for


def server_cpu_ms(pid):
    """The CPU time of every thread of process `pid` so far, in milliseconds."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as file:
                total += int(file.read().split()[0])
        except (OSError, ValueError):
            pass  # a thread that ended while being read
    return total / 1e6


def warm_costs(binary, folder, urls, count):
    """Per URL: (server CPU ms, client wall ms) per request, after 20 unmeasured ones."""
    process = subprocess.Popen([binary, "serve", folder, "--port", str(TESSERA_PORT), "--quiet", "--no-cache",
                                "--response-cache", "1K"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(f"http://127.0.0.1:{TESSERA_PORT}/health")
        connection = http.client.HTTPConnection("127.0.0.1", TESSERA_PORT, timeout=60)
        costs = []
        for url in urls:
            for _ in range(20):
                connection.request("GET", url)
                connection.getresponse().read()
            cpu, start = server_cpu_ms(process.pid), time.perf_counter()
            for _ in range(count):
                connection.request("GET", url)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    sys.exit(f"{url}: HTTP {response.status}")
            wall = (time.perf_counter() - start) * 1000
            costs.append(((server_cpu_ms(process.pid) - cpu) / count, wall / count))
        return costs
    finally:
        process.terminate()
        process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("urls", nargs="+", metavar="URL")
    parser.add_argument("--tessera", action="append", metavar="PATH",
                        help="a tessera binary (repeat to compare builds; default .build/release/tessera)")
    parser.add_argument("--warm", type=int, default=300, metavar="N", help="measured requests per URL (0: none)")
    parser.add_argument("--first", type=int, default=0, metavar="RUNS", help="fresh servers per build (0: none)")
    parser.add_argument("--folder", help="the images served (default: the viewer-traffic benchmark's)")
    args = parser.parse_args()
    binaries = args.tessera or [TESSERA]
    for binary in binaries:
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary}: not an executable")
    folder = args.folder or viewer.pyramids(40)[0]
    names = [os.path.basename(binary) for binary in binaries]
    width = max(21, *map(len, names))
    if args.warm:
        costs = {binary: warm_costs(binary, folder, args.urls, args.warm) for binary in binaries}
        print(f"warm, {args.warm} requests each: server CPU / client wall, ms per request")
        print("  ".join(name.rjust(width) for name in names) + "  URL")
        for index, url in enumerate(args.urls):
            cells = (f"{costs[b][index][0]:.3f} / {costs[b][index][1]:.3f}" for b in binaries)
            print("  ".join(cell.rjust(width) for cell in cells) + f"  {url}")
    if args.first:
        best = viewer.fastest_first_pass(binaries, folder, args.urls, args.first)
        print(f"first, fastest of {args.first} fresh servers: client wall, ms per request")
        print("  ".join(name.rjust(width) for name in names) + "  URL")
        for index, url in enumerate(args.urls):
            print("  ".join(f"{best[b][index]:.3f}".rjust(width) for b in binaries) + f"  {url}")


if __name__ == "__main__":
    main()
