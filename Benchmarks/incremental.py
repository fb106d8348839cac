#!/usr/bin/env python3
"""What incremental decoding costs: a JPEG fed to IncrementalImageSource in 64 KiB chunks (each update given all
the data so far, as a network client would) against a one-shot ImageSource decode of the same file, for the 100 MP
baseline sample and a progressive copy of it (made losslessly with `jpegtran -progressive`). Runs are interleaved;
each row gives the median wall and CPU time and the highest peak RSS (GNU time), and the ratio to one-shot.

    Benchmarks/incremental.py [--megapixels 100] [--runs 3] [--chunk 65536] [--look-every 0]

--look-every N also makes a partial image every N updates (a viewer refreshing its display).
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_sample import cached_sample  # noqa: E402
from timing import measure  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "Benchmarks", "work")
BINARY = os.path.join(ROOT, ".build", "release", "IncrementalFeed")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megapixels", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=64 * 1024)
    parser.add_argument("--look-every", type=int, default=0)
    options = parser.parse_args()
    if not os.path.exists(BINARY):
        subprocess.run(["swift", "build", "-c", "release", "--product", "IncrementalFeed"], cwd=ROOT, check=True)
    baseline = cached_sample(WORK, options.megapixels)
    progressive = baseline.replace(".jpg", "-progressive.jpg")
    if not os.path.exists(progressive):
        subprocess.run(["jpegtran", "-progressive", "-outfile", progressive, baseline], check=True)
    incremental = ["incremental", "--chunk", str(options.chunk)]
    if options.look_every:
        incremental += ["--look-every", str(options.look_every)]
    print(f"| file | decode | wall s | CPU s | peak RSS MiB | time / one-shot | RSS / one-shot |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, path in [("baseline", baseline), ("progressive", progressive)]:
        results = {"one-shot": [], "incremental": []}
        for _ in range(options.runs):
            results["one-shot"].append(measure([BINARY, path, "oneshot"]))
            results["incremental"].append(measure([BINARY, path] + incremental))
        summary = {name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
                          max(r[2] for r in runs)) for name, runs in results.items()}
        for name, (wall, cpu, rss) in summary.items():
            base = summary["one-shot"]
            print(f"| {label} {os.path.getsize(path) / 1e6:.1f} MB | {name} | {wall:.2f} | {cpu:.2f} | {rss:.0f} |"
                  f" {wall / base[0]:.2f}x | {rss / base[2]:.2f}x |")


if __name__ == "__main__":
    main()
