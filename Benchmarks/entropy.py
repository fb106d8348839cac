#!/usr/bin/env python3
"""Tessera's own sequential entropy decoding and the entropy index, on the 100 MP baseline sample, interleaved:

- the whole file's entropy decoding on one core (`taskset -c 0`), through `.build/release/EntropyDecode`, which
  times each decode in-process (the thread's CPU time, process start excluded): Tessera's `SequentialCoefficientDecoder`
  (building the index serially: every MCU decoded, a state kept every few) against libjpeg-turbo decoding at 1/8
  (`djpeg -scale 1/8`'s work: every MCU entropy-decoded, then a DC-only IDCT of 1/64 of the pixels; the fair floor)
  and against `jpeg_read_coefficients` (most of whose time is filling its whole-image buffer);
- `tessera index` (a fresh cache folder each run) against `djpeg -scale 1/8`, and the index's size;
- a 1024 x 1024 region near the bottom: `tessera region` with the index, without it, and `djpeg -crop`;
- a 256 px thumbnail against `djpeg -scale 1/8`: with the index (decoded on every core), on first contact (a fresh
  cache folder each run: the index built by speculative decoding on every core, then used), and with the index on
  1 and 2 cores (`taskset`; on one core Tessera leaves the decode to libjpeg);
- the whole image decoded (`tessera info --verify`, nothing written) against `djpeg`, with the index and on first
  contact.

Each row gives the median wall and CPU time and the highest peak RSS (GNU time).

    Benchmarks/entropy.py [--sample PATH] [--runs 5] [--tessera PATH]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_sample import cached_sample  # noqa: E402
from timing import measure  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "Benchmarks", "work")
ENTROPY = os.path.join(ROOT, ".build", "release", "EntropyDecode")


def decode_cpu_seconds(sample, mode):
    """The thread CPU seconds of one whole entropy decode by `EntropyDecode` in `mode`, on core 0."""
    result = subprocess.run(["taskset", "-c", "0", ENTROPY, sample, mode], capture_output=True, text=True, check=True)
    return float(result.stdout.split()[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", help="the JPEG (default: the 100 MP sample, made on first use)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tessera", default=os.path.join(ROOT, ".build", "release", "tessera"))
    options = parser.parse_args()
    if not os.path.exists(ENTROPY):
        subprocess.run(["swift", "build", "-c", "release", "--product", "EntropyDecode"], cwd=ROOT, check=True)
    if not os.path.exists(options.tessera):
        subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "tessera"],
                       cwd=ROOT, check=True)
    sample = options.sample or cached_sample(WORK, 100)
    work = tempfile.mkdtemp(prefix="tessera-entropy-")
    fresh, kept = os.path.join(work, "fresh"), os.path.join(work, "kept")
    subprocess.run([options.tessera, "index", sample, "--cache", kept], check=True, capture_output=True)
    index_file = [name for name in os.listdir(kept) if name.endswith(".jpegindex")][0]
    index_bytes = os.path.getsize(os.path.join(kept, index_file))
    out = os.path.join(work, "region.jpg")
    size = subprocess.run(["identify", "-format", "%w %h", sample], capture_output=True, text=True).stdout.split()
    width, height = (int(size[0]), int(size[1])) if len(size) == 2 else (12000, 8333)
    x, y = width // 2 - 512, height - 1024 - 100
    rect = f"{x},{y},1024,1024"
    thumbnail = [options.tessera, "thumbnail", sample, "-s", "256", "-o", os.path.join(work, "thumbnail.jpg")]
    entropy_modes = ["tessera", "libjpeg-scale8", "libjpeg"]
    entropy = {mode: [] for mode in entropy_modes}
    cases = [
        ("index", "tessera index (fresh)", [options.tessera, "index", sample, "--cache", fresh],
         lambda: shutil.rmtree(fresh, ignore_errors=True)),
        ("index", "djpeg -scale 1/8", ["djpeg", "-scale", "1/8", "-outfile", os.devnull, sample], None),
        ("region 1024", "tessera region, with the index",
         [options.tessera, "region", sample, out, "--rect", rect, "--cache", kept], None),
        ("region 1024", "tessera region, without", [options.tessera, "region", sample, out, "--rect", rect, "--cache", fresh],
         lambda: shutil.rmtree(fresh, ignore_errors=True)),
        ("region 1024", "djpeg -crop", ["djpeg", "-crop", f"1024x1024+{x}+{y}", "-outfile", os.devnull, sample], None),
        ("thumbnail 256", "tessera thumbnail, with the index", thumbnail + ["--cache", kept], None),
        ("thumbnail 256", "tessera thumbnail, first contact", thumbnail + ["--cache", fresh],
         lambda: shutil.rmtree(fresh, ignore_errors=True)),
        ("thumbnail 256", "djpeg -scale 1/8 (again)", ["djpeg", "-scale", "1/8", "-outfile", os.devnull, sample], None),
        ("thumbnail 256", "tessera thumbnail, with the index, taskset 1 core",
         ["taskset", "-c", "0"] + thumbnail + ["--cache", kept], None),
        ("thumbnail 256", "tessera thumbnail, with the index, taskset 2 cores",
         ["taskset", "-c", "0,1"] + thumbnail + ["--cache", kept], None),
        ("full decode", "tessera info --verify, with the index", [options.tessera, "info", "--verify", sample,
                                                                  "--cache", kept], None),
        ("full decode", "tessera info --verify, first contact", [options.tessera, "info", "--verify", sample,
                                                                 "--cache", fresh],
         lambda: shutil.rmtree(fresh, ignore_errors=True)),
        ("full decode", "djpeg", ["djpeg", "-outfile", os.devnull, sample], None),
    ]
    results = {label: [] for _, label, _, _ in cases}
    for _ in range(options.runs):
        for mode in entropy_modes:
            entropy[mode].append(decode_cpu_seconds(sample, mode))
        for _, label, argv, before in cases:
            results[label].append(measure(argv, before))
    print(f"{os.path.basename(sample)}: {width} x {height}, {os.path.getsize(sample)} bytes; index {index_bytes} bytes"
          f" ({100 * index_bytes / os.path.getsize(sample):.3f}% of the file); region at {rect}; {options.runs} runs")
    floor = statistics.median(entropy["libjpeg-scale8"])
    print("| entropy decoding, 1 core | CPU s, median | fastest | speed against libjpeg-turbo at 1/8 |")
    print("|---|---:|---:|---:|")
    for mode in entropy_modes:
        median = statistics.median(entropy[mode])
        print(f"| {mode} | {median:.3f} | {min(entropy[mode]):.3f} | {floor / median:.2f}x |")
    print()
    print("| case | run | wall s | CPU s | peak RSS MiB |")
    print("|---|---|---:|---:|---:|")
    for group, label, _, _ in cases:
        runs = results[label]
        print(f"| {group} | {label} | {statistics.median(r[0] for r in runs):.3f} | "
              f"{statistics.median(r[1] for r in runs):.3f} | {max(r[2] for r in runs):.1f} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
