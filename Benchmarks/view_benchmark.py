#!/usr/bin/env python3
"""Frame times and memory of `tessera view` over a 2,000-frame pan-and-zoom trace, under Xvfb.

    Benchmarks/view_benchmark.py [--size 100mp|quick] [--fps 60] [--memory-cache 64M] [--markdown]

The image is the benchmark sample (a 100-megapixel JPEG), viewed as the pyramidal TIFF `tessera tile --layout tiff`
makes of it (what `tessera view` builds in its pyramid cache for a large plain image), in a 1024 x 768 window.
The trace dives from fit to 2x and back about moving focal points, with slow, medium and fast pans between dives,
paced at --fps like a display's refresh. Each renderer Xvfb offers is run: SDL's OpenGL renderer (on Mesa's
llvmpipe, in software) and SDL's own software renderer. No peer viewer exists to run side by side.
Frame time is the work of one frame (plan, compose, upload new tiles, draw, present), pacing sleeps excluded."""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import make_sample
from tables import print_table

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCHMARKS_DIR)
WORK_DIR = os.path.join(BENCHMARKS_DIR, "work")
TESSERA = os.path.join(REPO_DIR, ".build", "release", "tessera")
VIEW = (1024, 768)


def trace(frames, view, content):
    """A deterministic session of `frames` steps: zooms by 6% a frame from fit to 2x and back, about focal
    points that move across the view from dive to dive, with 60 frames each of 12-, 40- and 3-point pans
    between the dives."""
    fit = min(view[0] / content[0], view[1] / content[1])
    steps, zoom, dive = [], fit, 0
    while len(steps) < frames:
        focal = [view[0] * (0.2 + 0.6 * ((dive * 37) % 11) / 10), view[1] * (0.2 + 0.6 * ((dive * 53) % 7) / 6)]
        target = 2.0 if dive % 2 == 0 else fit
        while abs(math.log(zoom / target)) > 0.05 and len(steps) < frames:
            factor = 1.06 if target > zoom else 1 / 1.06
            zoom *= factor
            steps.append({"zoom": factor, "at": focal})
        for speed, direction in [(12, (1, 0.3)), (40, (-0.5, 1)), (3, (0, -1))]:
            steps += [{"pan": [direction[0] * speed, direction[1] * speed]}] * 60
        dive += 1
    return steps[:frames]


def pyramid(size):
    jpeg = make_sample.cached_sample(WORK_DIR, {"quick": 4, "100mp": 100}[size])
    tiff = jpeg.replace(".jpg", "-tessera-pyramid.tif")
    if not os.path.exists(tiff):
        subprocess.run([TESSERA, "tile", jpeg, tiff, "--layout", "tiff"], check=True)
    width, height = make_sample.dimensions({"quick": 4, "100mp": 100}[size])
    return tiff, (width, height)


def run(tiff, content, renderer, fps, memory_cache, frames):
    with tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "trace.json")
        with open(script, "w") as file:
            json.dump({"fps": fps, "steps": trace(frames, VIEW, content)}, file)
        report = os.path.join(folder, "report.json")
        command = ["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", TESSERA, "view", tiff, "--script", script,
                   "--report", report, "--size", f"{VIEW[0]}x{VIEW[1]}", "--memory-cache", memory_cache,
                   "--no-cache"] + (["--software"] if renderer == "software" else [])
        subprocess.run(command, check=True)
        with open(report) as file:
            return json.load(file)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=["100mp", "quick"], default="100mp")
    parser.add_argument("--fps", type=float, default=60)
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--memory-cache", default="64M")
    parser.add_argument("--markdown", action="store_true")
    arguments = parser.parse_args()
    tiff, content = pyramid(arguments.size)
    rows = []
    for renderer in ["default", "software"]:
        report = run(tiff, content, renderer, arguments.fps, arguments.memory_cache, arguments.frames)
        rows.append([report["renderer"], f"{report['frames']}", f"{report['frameTimeP50Milliseconds']:.2f}",
                     f"{report['frameTimeP99Milliseconds']:.2f}", f"{report['frameTimeMaxMilliseconds']:.1f}",
                     f"{report['peakCacheBytes'] / 2**20:.1f}", f"{report['peakTextureBytes'] / 2**20:.1f}",
                     f"{report['cacheBudgetBytes'] / 2**20:.0f}", f"{report['peakRSSBytes'] / 2**20:.1f}",
                     f"{report['tilesMade']}", f"{report['seconds']:.1f}"])
    header = ["renderer", "frames", "frame p50 ms", "frame p99 ms", "max ms", "peak cache MiB",
              "peak textures MiB", "budget MiB", "peak RSS MiB", "tiles made", "seconds"]
    print_table(header, rows, arguments.markdown)


if __name__ == "__main__":
    sys.exit(main())
