#!/usr/bin/env python3
"""A collection tiled as Slurm would run it, on this machine: 12 JPEGs (synthetic photographs, make_sample.py)
tiled into Deep Zoom pyramids at quality 75 by

  - `tessera tile --from LIST` serially (one image after another, every core),
  - as a 2-task array: two `--shard K/2` processes at once, each with half the cores (what two array tasks on one
    node run),
  - `tessera tile --from LIST --jobs 2` (one process, two images at once),

against `vips dzsave` over the same list run by GNU parallel, with -j 1 (vips on every core) and -j 2 (two at
once, VIPS_CONCURRENCY at half the cores). Every task runs under GNU time; the table gives the run's wall time,
its CPU time (user + system, over every task) and the highest peak RSS of any one task. Runs are interleaved and
the median run (by wall time) of each configuration is shown.

    Benchmarks/batch_benchmark.py                 # 12 x 6 MP, 3 runs
    Benchmarks/batch_benchmark.py --megapixels 2 --runs 1
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import make_sample

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCHMARKS_DIR)
WORK_DIR = os.path.join(BENCHMARKS_DIR, "work", "batch")
TIME_FORMAT = "%e %U %S %M"


def timed(argv, times_file, env=None):
    """argv under GNU time, appending 'wall user sys maxrss_kib' to times_file."""
    return ["/usr/bin/time", "-a", "-o", times_file, "-f", TIME_FORMAT, *argv]


def configurations(tessera, listing, out, cores):
    """Each configuration: a name and the processes it starts at once (each an argv and its environment)."""
    half = str(max(1, cores // 2))
    tile = [tessera, "tile", "--from", listing, "-o", f"{out}/%s", "--force"]
    vips = ["parallel", "--quote", "--halt", "now,fail=1", "-j"]
    dzsave = ["/usr/bin/time", "-a", "-o", "{times}", "-f", TIME_FORMAT,
              "vips", "dzsave", "{}", f"{out}/{{/.}}", "--suffix", ".jpeg[Q=75]"]
    return [
        ("tessera tile --from LIST (serial)", [(tile, {})]),
        ("tessera tile --shard 0/2 and 1/2 at once", [(tile + ["--shard", f"{k}/2", "--threads", half], {})
                                                      for k in range(2)]),
        ("tessera tile --from LIST --jobs 2", [(tile + ["--jobs", "2"], {})]),
        ("vips dzsave, parallel -j 1", [(vips + ["1", *dzsave, "::::", listing], {})]),
        ("vips dzsave, parallel -j 2", [(vips + ["2", *dzsave, "::::", listing], {"VIPS_CONCURRENCY": half})]),
    ]


def run_configuration(processes, out, times_file):
    """Starts the processes at once and waits; returns (wall, cpu, highest task peak RSS in MiB)."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    if os.path.exists(times_file):
        os.remove(times_file)
    start = time.monotonic()
    children = []
    for argv, env in processes:
        wrapped = argv if argv[0] == "parallel" else timed(argv, times_file)
        wrapped = [a.replace("{times}", times_file) for a in wrapped]
        children.append(subprocess.Popen(wrapped, env=dict(os.environ, **env),
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    for child in children:
        _, errors = child.communicate()
        if child.returncode != 0:
            sys.exit(f"{' '.join(processes[0][0])} failed: {errors.decode(errors='replace')}")
    wall = time.monotonic() - start
    tasks = [line.split() for line in open(times_file) if line.strip() and line[0].isdigit()]
    cpu = sum(float(user) + float(system) for _, user, system, _ in tasks)
    peak = max(int(rss) for *_, rss in tasks) / 1024
    return wall, cpu, peak, len(tasks)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megapixels", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tessera", default=os.path.join(REPO_DIR, ".build", "release", "tessera"))
    arguments = parser.parse_args()
    for tool in ("parallel", "vips", "/usr/bin/time"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: scripts/install-deps installs it")
    images = [make_sample.cached_sample(WORK_DIR, arguments.megapixels, seed=seed) for seed in range(1, 13)]
    cores = os.cpu_count()
    with tempfile.TemporaryDirectory(dir=WORK_DIR) as scratch:
        listing = os.path.join(scratch, "list.txt")
        with open(listing, "w") as handle:
            handle.write("".join(f"{image}\n" for image in images))
        out, times_file = os.path.join(scratch, "out"), os.path.join(scratch, "times.txt")
        configs = configurations(arguments.tessera, listing, out, cores)
        results = {name: [] for name, _ in configs}
        for _ in range(arguments.runs):
            for name, processes in configs:
                results[name].append(run_configuration(processes, out, times_file))
    width, height = make_sample.dimensions(arguments.megapixels)
    print(f"12 JPEGs of {width} x {height}, Deep Zoom at quality 75, {cores} cores, median of {arguments.runs} runs\n")
    print("| configuration | tasks | wall | CPU | peak RSS per task | wall / serial tessera |")
    print("|---|---:|---:|---:|---:|---:|")
    reference = None
    for name, runs in results.items():
        wall, cpu, peak, tasks = sorted(runs)[len(runs) // 2]
        reference = reference or wall
        print(f"| {name} | {tasks} | {wall:.2f} s | {cpu:.2f} s | {peak:.1f} MiB | {wall / reference:.2f}x |")


if __name__ == "__main__":
    main()
