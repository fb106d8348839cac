"""The batch on a real Slurm (Debian's slurm-wlm and munge): a one-node cluster started for the module in a
temporary folder (its own munge key and socket, slurm.conf, state, spool and logs, free loopback ports), the
array job of deploy/slurm/tile-array.sbatch over 12 images with one corrupt, and a task cancelled with scancel in
the middle of an image and resubmitted. Every wait is bounded; the daemons started are stopped by their PIDs."""
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, photo, run
from daemons import wait_for
from slurm_cluster import Cluster, missing_commands
from test_batch import outputs, records

SCRIPT = ROOT / "deploy" / "slurm" / "tile-array.sbatch"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    missing = missing_commands()
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing): scripts/install-deps installs it")
    cluster = Cluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except (TimeoutError, subprocess.CalledProcessError, OSError) as error:
        logs = cluster.logs() if (cluster.root / "log").exists() else ""
        cluster.stop()
        pytest.skip(f"the Slurm daemons could not start on this machine: {error}\n{logs}")
    yield cluster
    cluster.stop()


def array(cluster, tessera, tmp_path, listing, pattern, tasks, *options, wait=True):
    """Submits the sbatch script over `listing` as an array of `tasks`, one CPU each, with its own reports, and
    waits for the whole array to leave the queue unless told not to; returns the job's id."""
    (tmp_path / "logs").mkdir(exist_ok=True)
    job = cluster.submit(
        f"--array=0-{tasks - 1}", "--cpus-per-task=1", "--mem=1536M", f"--output={tmp_path}/logs/%A_%a.log",
        f"--chdir={tmp_path}", f"--export=ALL,TESSERA={tessera},REPORTS={tmp_path}/reports",
        SCRIPT, listing, pattern, *options).stdout.strip().split(";")[0]
    if wait:
        wait_for(lambda: not cluster.is_queued(job), 180, f"job {job} did not finish")
    return job


def test_an_array_over_a_list_makes_every_pyramid_a_serial_run_makes(cluster, tessera, tmp_path):
    images = []
    for index in range(12):
        path = tmp_path / "scans" / f"scan{index:02}.png"
        path.parent.mkdir(exist_ok=True)
        Image.fromarray(photo(200 + 17 * index, 300 + 29 * index, seed=index)).save(path)
        images.append(path)
    images[5].write_bytes(images[5].read_bytes()[:300])  # cut short: corrupt
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"{p}\n" for p in images))
    serial = run(tessera, "tile", "--from", listing, "-o", f"{tmp_path}/serial/%s", "--layout", "iiif")
    assert serial.returncode == 1
    array(cluster, tessera, tmp_path, listing, f"{tmp_path}/array/%s", 4, "--layout", "iiif")
    reports = sorted((tmp_path / "reports").glob("*.jsonl"))
    assert [r.name for r in reports] == [f"shard-{k}-of-4.jsonl" for k in range(4)], cluster.logs()
    lines = [line for report in reports for line in records(report)]
    assert sorted(line["input"] for line in lines) == [str(p) for p in images], "each image once"
    assert [line["input"] for line in lines if line["status"] == "failed"] == [str(images[5])]
    assert len([line for line in lines if line["status"] == "built"]) == 11
    assert len(list((tmp_path / "array").iterdir())) == 11
    assert outputs(tmp_path / "array") == outputs(tmp_path / "serial")
    summary = run(tessera, "tile", "--summarize", *reports)
    assert summary.stdout.splitlines() == [str(images[5])]


def test_a_cancelled_task_resubmitted_finishes_with_the_same_bytes(cluster, tessera, tmp_path):
    large = tmp_path / "large.png"
    block = photo(500, 500, seed=5).astype(np.int16)
    rows = [np.hstack([np.clip(block + 7 * (i - j), 0, 255) for i in range(8)]) for j in range(8)]
    Image.fromarray(np.vstack(rows).astype(np.uint8)).save(large, compress_level=1)
    listing = tmp_path / "list.txt"
    listing.write_text(f"{large}\n")
    reference = tmp_path / "reference" / "large"
    assert run(tessera, "tile", large, reference).returncode == 0
    out = tmp_path / "out"
    partial = out / ".large_files.tessera-partial"
    for attempt in range(3):
        job = array(cluster, tessera, tmp_path, listing, f"{out}/%s", 1, wait=False)
        # The image takes about a second on the task's one CPU: cancel as soon as its first tiles are there.
        wait_for(lambda: partial.exists() and any(partial.rglob("*.jpeg")) or (out / "large.dzi").exists(), 60,
                 "the task started no pyramid")
        cluster.slurm("scancel", job)
        wait_for(lambda: not cluster.is_queued(job), 60, "the cancelled job did not leave the queue")
        if not (out / "large.dzi").exists():
            break
        shutil.rmtree(out, ignore_errors=True)  # finished before the cancel: try again from nothing
    else:
        pytest.fail("every task finished before it could be cancelled\n" + cluster.logs())
    assert partial.exists(), "the cancelled task left its partial pyramid"
    array(cluster, tessera, tmp_path, listing, f"{out}/%s", 1)
    assert [line["status"] for line in records(tmp_path / "reports" / "shard-0-of-1.jsonl")] in (["resumed"], ["built"])
    assert not partial.exists()
    assert outputs(out) == outputs(tmp_path / "reference")
