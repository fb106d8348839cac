#!/usr/bin/env python3
"""A collection tiled as Slurm would run it, on this machine: 12 JPEGs (synthetic photographs, make_sample.py)
tiled into Deep Zoom pyramids at quality 75 by

  - `tessera tile --from LIST` serially (one image after another, every core),
  - as a real 2-task Slurm array job: deploy/slurm/tile-array.sbatch submitted with --array=0-1 and half the cores
    per task to a one-node cluster (munged, slurmctld, slurmd) started for the run as Tests/peers/test_slurm.py
    starts it, timed from submission until its last task ends,
  - `tessera tile --from LIST --jobs 2` (one process, two images at once),

against `vips dzsave` over the same list run by GNU parallel, with -j 1 (vips on every core) and -j 2 (two at
once, VIPS_CONCURRENCY at half the cores). Every task runs under GNU time; the table gives the run's wall time,
its CPU time (user + system, over every task) and the highest peak RSS of any one task. The array's tasks run
tessera under GNU time too (through a wrapper named by TESSERA; the cluster has no accounting for sacct), and each
task's own report (its JSON lines' seconds and peak memory) is shown below the table. Runs are interleaved and the
median run (by wall time) of each configuration is shown. Slurm needs root (as the test does) and slurm-wlm and
munge (scripts/install-deps).

    Benchmarks/batch_benchmark.py                 # 12 x 6 MP, 3 runs
    Benchmarks/batch_benchmark.py --megapixels 2 --runs 1
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import json
import tempfile
import time
from pathlib import Path

import make_sample

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCHMARKS_DIR)
sys.path.insert(0, os.path.join(REPO_DIR, "Tests", "peers"))
from slurm_cluster import Cluster, missing_commands  # noqa: E402

WORK_DIR = os.path.join(BENCHMARKS_DIR, "work", "batch")
SBATCH_SCRIPT = os.path.join(REPO_DIR, "deploy", "slurm", "tile-array.sbatch")
TIME_FORMAT = "%e %U %S %M"
ARRAY = "tessera tile as a 2-task Slurm array (tile-array.sbatch)"


def timed(argv, times_file, env=None):
    """argv under GNU time, appending 'wall user sys maxrss_kib' to times_file."""
    return ["/usr/bin/time", "-a", "-o", times_file, "-f", TIME_FORMAT, *argv]


def configurations(tessera, listing, out, cores):
    """Each configuration: a name and the processes it starts at once (each an argv and its environment); the
    array's are submitted to the cluster instead."""
    half = str(max(1, cores // 2))
    tile = [tessera, "tile", "--from", listing, "-o", f"{out}/%s", "--force"]
    vips = ["parallel", "--quote", "--halt", "now,fail=1", "-j"]
    dzsave = ["/usr/bin/time", "-a", "-o", "{times}", "-f", TIME_FORMAT,
              "vips", "dzsave", "{}", f"{out}/{{/.}}", "--suffix", ".jpeg[Q=75]"]
    return [
        ("tessera tile --from LIST (serial)", [(tile, {})]),
        (ARRAY, None),
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
    return (wall, *summarize_times(times_file))


def run_array(cluster, tessera, listing, out, times_file, scratch, cores):
    """Submits tile-array.sbatch as a 2-task array, half the cores a task, and waits for it to leave the queue;
    returns (wall from submission, cpu, highest task peak RSS in MiB, tasks), the time from submission to the
    first task's start, and each task's report records."""
    for path in (out, os.path.join(scratch, "reports"), os.path.join(scratch, "logs")):
        shutil.rmtree(path, ignore_errors=True)
    os.makedirs(out)
    os.makedirs(os.path.join(scratch, "logs"))
    if os.path.exists(times_file):
        os.remove(times_file)
    # The wrapper runs tessera under GNU time and notes when it ended, so that the wall time ends with the last
    # task's end, not with the next look at the queue (which is slow, so as not to load the cores it measures).
    wrapper = os.path.join(scratch, "timed-tessera")
    starts, ends = os.path.join(scratch, "starts.txt"), os.path.join(scratch, "ends.txt")
    for path in (starts, ends):
        if os.path.exists(path):
            os.remove(path)
    with open(wrapper, "w") as handle:
        handle.write(f'#!/bin/sh\ndate +%s.%N >> "{starts}"\n'
                     f'/usr/bin/time -a -o "{times_file}" -f "{TIME_FORMAT}" "{tessera}" "$@"\n'
                     f'status=$?\ndate +%s.%N >> "{ends}"\nexit $status\n')
    os.chmod(wrapper, 0o755)
    start = time.time()
    job = cluster.submit(
        "--array=0-1", f"--cpus-per-task={max(1, cores // 2)}", "--mem=1536M", f"--output={scratch}/logs/%A_%a.log",
        f"--chdir={scratch}", f"--export=ALL,TESSERA={wrapper},REPORTS={scratch}/reports",
        SBATCH_SCRIPT, listing, f"{out}/%s", "--force").stdout.strip().split(";")[0]
    deadline = time.monotonic() + 600
    while cluster.is_queued(job):
        if time.monotonic() > deadline:
            sys.exit(f"array job {job} did not finish within 600 s\n{cluster.logs()}")
        time.sleep(0.5)
    task_logs = "\n".join(path.read_text(errors="replace")[-1500:] for path in Path(scratch, "logs").glob("*.log"))
    if not os.path.exists(ends):
        sys.exit(f"array job {job}'s tasks did not run tessera\n{task_logs}\n{cluster.logs()}")
    with open(starts) as handle:
        launch = min(float(line) for line in handle if line.strip()) - start
    with open(ends) as handle:
        wall = max(float(line) for line in handle if line.strip()) - start
    reports = sorted(Path(scratch, "reports").glob("*.jsonl"))
    records = {report.name: [json.loads(line) for line in report.read_text().splitlines() if line.strip()]
               for report in reports}
    built = sum(record["status"] == "built" for lines in records.values() for record in lines)
    if len(reports) != 2 or built != 12:
        sys.exit(f"the array built {built} of 12 images in {len(reports)} reports\n{task_logs}")
    return (wall, *summarize_times(times_file)), launch, records


def summarize_times(times_file):
    """(cpu, highest peak RSS in MiB, tasks) from GNU time's lines."""
    with open(times_file) as handle:
        tasks = [line.split() for line in handle if line.strip() and line[0].isdigit()]
    cpu = sum(float(user) + float(system) for _, user, system, _ in tasks)
    peak = max(int(rss) for *_, rss in tasks) / 1024
    return cpu, peak, len(tasks)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megapixels", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tessera", default=os.path.join(REPO_DIR, ".build", "release", "tessera"))
    arguments = parser.parse_args()
    for tool in ("parallel", "vips", "/usr/bin/time", *missing_commands()):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: scripts/install-deps installs it")
    images = [make_sample.cached_sample(WORK_DIR, arguments.megapixels, seed=seed) for seed in range(1, 13)]
    cores = os.cpu_count()
    tessera = os.path.abspath(arguments.tessera)
    reports = []
    with tempfile.TemporaryDirectory(dir=WORK_DIR) as scratch, tempfile.TemporaryDirectory() as slurm_root:
        listing = os.path.join(scratch, "list.txt")
        with open(listing, "w") as handle:
            handle.write("".join(f"{image}\n" for image in images))
        out, times_file = os.path.join(scratch, "out"), os.path.join(scratch, "times.txt")
        configs = configurations(tessera, listing, out, cores)
        results = {name: [] for name, _ in configs}
        cluster = Cluster(Path(slurm_root))
        try:
            cluster.start()
            for _ in range(arguments.runs):
                for name, processes in configs:
                    if processes is None:
                        result, launch, records = run_array(cluster, tessera, listing, out, times_file, scratch,
                                                            cores)
                        reports.append((result[0], launch, records))
                    else:
                        result = run_configuration(processes, out, times_file)
                    results[name].append(result)
        finally:
            cluster.stop()
    width, height = make_sample.dimensions(arguments.megapixels)
    print(f"12 JPEGs of {width} x {height}, Deep Zoom at quality 75, {cores} cores, median of {arguments.runs} runs\n")
    print("| configuration | tasks | wall | CPU | peak RSS per task | wall / serial tessera |")
    print("|---|---:|---:|---:|---:|---:|")
    reference = None
    for name, runs in results.items():
        wall, cpu, peak, tasks = sorted(runs)[len(runs) // 2]
        reference = reference or wall
        print(f"| {name} | {tasks} | {wall:.2f} s | {cpu:.2f} s | {peak:.1f} MiB | {wall / reference:.2f}x |")
    _, launch, records = sorted(reports, key=lambda run: run[0])[len(reports) // 2]
    print(f"\nThe array (median run): {launch:.2f} s from submission to the first task's start (slurmctld's"
          " scheduling, slurmd's launch and srun's step); its tasks by their own reports:\n")
    print("| task report | images | seconds (sum of the images') | peak memory (highest image) |")
    print("|---|---:|---:|---:|")
    for name, lines in records.items():
        seconds = sum(line["seconds"] for line in lines)
        peak = max(line["peak_memory"] for line in lines) / 2**20
        print(f"| {name} | {len(lines)} | {seconds:.2f} s | {peak:.1f} MiB |")


if __name__ == "__main__":
    main()
