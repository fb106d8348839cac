"""`tessera tile` over many inputs, driven through the real CLI: a list with a corrupt input and a URL, shards
covering the list exactly once, outputs that are skipped when complete and rebuilt with --force or when the
input changes, a killed run rerun to the same bytes, --jobs giving the same bytes, the report, and the summary's
failures as a list to rerun."""
import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import photo, run

SIZES = [(300, 420), (257, 600), (512, 512), (90, 1000), (400, 333)]


def ok(*args, **kwargs):
    result = run(*args, **kwargs)
    assert result.returncode == 0, result.stderr
    return result


def outputs(root):
    """Every file of the pyramids under root, {relative path: bytes}, without the completion records (which
    name the input as it was given)."""
    root = Path(root)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith(".tessera-complete")}


def records(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


@pytest.fixture
def collection(tmp_path):
    """Five small photos, in two folders, and a truncated PNG between them; the list of all six."""
    paths = []
    for index, (height, width) in enumerate(SIZES):
        folder = tmp_path / "scans" / ("a" if index % 2 else "b")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"scan{index}.{'png' if index % 2 else 'jpg'}"
        Image.fromarray(photo(height, width, seed=index)).save(path, quality=92)
        paths.append(path)
    corrupt = tmp_path / "scans" / "broken.png"
    data = (tmp_path / "scans" / "a" / "scan1.png").read_bytes()
    corrupt.write_bytes(data[:len(data) // 2])  # cut short: its header reads, its rows do not
    paths.insert(2, corrupt)
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"{p}\n" for p in paths))
    return paths, listing


def test_a_list_is_tiled_with_each_failure_its_own(tessera, tmp_path, collection):
    paths, listing = collection
    out, report = tmp_path / "out", tmp_path / "report.jsonl"
    result = run(tessera, "tile", "--from", listing, "-o", f"{out}/%s", "--report", report)
    assert result.returncode == 1, "a failed input sets the exit status"
    assert result.stderr.count("broken.png") == 1 and "broken.png: " in result.stderr
    lines = records(report)
    assert [line["input"] for line in lines] == [str(p) for p in paths]
    by_input = {line["input"]: line for line in lines}
    failed = by_input[str(paths[2])]
    assert failed["status"] == "failed" and failed["error"].startswith(f"{paths[2]}: ") and "\n" not in failed["error"]
    assert not list(out.glob("broken*")) and not list(out.glob(".broken*")), "nothing of a failed input is left"
    for path in paths[:2] + paths[3:]:
        line = by_input[str(path)]
        assert line["status"] == "built" and line["output"] == f"{out}/{path.stem}"
        assert line["tiles"] > 0 and line["seconds"] >= 0 and line["peak_memory"] > 1_000_000
        assert line["bytes"] == sum(f.stat().st_size for f in out.glob(f"{path.stem}*") for f in
                                    ([f] if f.is_file() else [g for g in f.rglob("*") if g.is_file()]))
    # Each pyramid is the one `tile IN OUT` makes.
    single = tmp_path / "single"
    for path in paths[:2] + paths[3:]:
        ok(tessera, "tile", path, single / path.stem)
    assert outputs(out) == outputs(single)


def test_shards_cover_the_list_once_and_make_the_same_pyramids(tessera, tmp_path, collection):
    _, listing = collection
    whole = tmp_path / "whole"
    run(tessera, "tile", "--from", listing, "-o", f"{whole}/%s", "--layout", "iiif")
    sharded = tmp_path / "sharded"
    seen = []
    for k in range(4):
        report = tmp_path / f"shard{k}.jsonl"
        run(tessera, "tile", "--from", listing, "-o", f"{sharded}/%s", "--layout", "iiif", "--shard", f"{k}/4",
            "--report", report)
        seen += [line["input"] for line in records(report)]
    assert sorted(seen) == sorted(listing.read_text().splitlines())
    assert outputs(sharded) == outputs(whole)
    # The same list always gives each shard the same inputs.
    again = tmp_path / "again.jsonl"
    run(tessera, "tile", "--from", listing, "-o", f"{sharded}/%s", "--layout", "iiif", "--shard", "1/4",
        "--report", again)
    assert [line["input"] for line in records(again)] == [line["input"] for line in records(tmp_path / "shard1.jsonl")]


def test_complete_outputs_are_skipped_until_the_input_or_options_change_or_force(tessera, tmp_path, collection):
    paths, _ = collection
    good = [paths[0], paths[1]]
    out, report = tmp_path / "out", tmp_path / "r.jsonl"
    batch = [tessera, "tile", *good, "-o", f"{out}/%s", "--container", "zip", "--report", report]
    ok(*batch)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    ok(*batch)
    assert [line["status"] for line in records(report)] == ["skipped", "skipped"]
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before, "a skipped output is not touched"
    os.utime(good[1], ns=(time.time_ns(), time.time_ns() - 10**9))
    ok(*batch)
    assert [line["status"] for line in records(report)] == ["skipped", "built"], "a changed input is rebuilt"
    ok(*batch, "-Q", "60")
    assert [line["status"] for line in records(report)] == ["built", "built"], "other options make another pyramid"
    ok(*batch, "-Q", "60", "--force")
    assert [line["status"] for line in records(report)] == ["built", "built"]
    ok(*batch, "-Q", "60")
    assert [line["status"] for line in records(report)] == ["skipped", "skipped"]


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A 4000 x 4000 photo-like PNG, slow enough on one thread to be killed in the middle."""
    path = tmp_path_factory.mktemp("large") / "large.png"
    block = photo(500, 500, seed=11).astype(np.int16)
    rows = [np.hstack([np.clip(block + 7 * (i - j), 0, 255) for i in range(8)]) for j in range(8)]
    Image.fromarray(np.vstack(rows).astype(np.uint8)).save(path, compress_level=1)
    return path


def test_a_killed_batch_rerun_finishes_with_the_same_bytes(tessera, tmp_path, collection, large):
    paths, _ = collection
    inputs = [paths[0], large, paths[1]]
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    options = ["--threads", "1", "--tile-size", "256", "--overlap", "0"]
    ok(tessera, "tile", *inputs, "-o", f"{reference}/%s", *options)
    batch = [tessera, "tile", *inputs, "-o", f"{killed}/%s", *options, "--report", tmp_path / "r.jsonl"]
    partial = killed / ".large_files.tessera-partial"
    for seed in range(8):
        # A kill counts when it lands while the large input is being tiled: its partial folder is there and its
        # pyramid is not. A machine fast enough to finish it within the delay gets a shorter delay next time.
        process = subprocess.Popen([str(a) for a in batch], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while process.poll() is None and not partial.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(random.Random(seed).uniform(0.01, 0.3) / (seed + 1))
            if process.poll() is None and partial.exists():
                process.send_signal(signal.SIGKILL if seed % 2 == 0 else signal.SIGTERM)
                process.wait()
                if not (killed / "large.dzi").exists():
                    break
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        ok("rm", "-rf", killed)
    else:
        pytest.fail("every batch finished the large input before it could be killed")
    assert not (killed / "scan1.dzi").exists()
    assert [line["input"] for line in records(tmp_path / "r.jsonl")] == [str(paths[0])], \
        "the report holds whole lines of the inputs finished"
    ok(*batch)
    statuses = [line["status"] for line in records(tmp_path / "r.jsonl")]
    assert statuses[0] == "skipped" and statuses[1] in ("resumed", "built") and statuses[2] == "built"
    assert not partial.exists()
    assert outputs(killed) == outputs(reference)


def test_jobs_at_once_make_the_same_pyramids(tessera, tmp_path, collection):
    paths, _ = collection
    good = [p for p in paths if p.name != "broken.png"]
    ok(tessera, "tile", *good, "-o", f"{tmp_path}/one/%s", "--layout", "xyz")
    ok(tessera, "tile", *good, "-o", f"{tmp_path}/three/%s", "--layout", "xyz", "--jobs", "3", "--threads", "2")
    assert outputs(tmp_path / "one") == outputs(tmp_path / "three")


def test_the_summary_lists_the_failures_to_rerun(tessera, tmp_path, collection):
    paths, listing = collection
    listing.write_text(listing.read_text() + "ftp://127.0.0.1/remote.jpg\n")
    out = tmp_path / "out"
    for k in range(2):
        run(tessera, "tile", "--from", listing, "-o", f"{out}/%s", "--shard", f"{k}/2",
            "--report", tmp_path / f"r{k}.jsonl")
    reports = [tmp_path / "r0.jsonl", tmp_path / "r1.jsonl"]
    summary = run(tessera, "tile", "--summarize", *reports)
    assert summary.returncode == 1
    assert summary.stdout.splitlines() == [str(paths[2]), "ftp://127.0.0.1/remote.jpg"]
    assert "7 inputs: 5 built, 0 resumed, 0 skipped, 2 failed" in summary.stderr
    totals = json.loads(run(tessera, "tile", "--summarize", *reports, "--json").stdout)
    assert (totals["inputs"], totals["built"], totals["failed"]) == (7, 5, 2)
    assert totals["tiles"] == sum(line["tiles"] or 0 for r in reports for line in records(r))
    assert [f["input"] for f in totals["failures"]] == summary.stdout.splitlines()
    assert "URL" in totals["failures"][1]["error"]
    # The failures are a list to rerun: mend the corrupt scan, rerun them from stdin.
    Image.fromarray(photo(200, 300, seed=9)).save(paths[2])
    rerun = run(tessera, "tile", "--from", "-", "-o", f"{out}/%s", "--report", tmp_path / "rerun.jsonl", "--json",
                input=summary.stdout)
    assert rerun.returncode == 1, "the URL still fails"
    assert [json.loads(line)["status"] for line in rerun.stdout.splitlines()] == ["built", "failed"]
    merged = run(tessera, "tile", "--summarize", *reports, tmp_path / "rerun.jsonl")
    assert merged.stdout.splitlines() == ["ftp://127.0.0.1/remote.jpg"]
    assert "7 inputs: 6 built" in merged.stderr


@pytest.mark.parametrize("args, message", [
    (["--from", "LIST"], "-o PATTERN"),
    (["a.png", "b.png", "-o", "/tmp/x/one"], "%s"),
    (["x/a.png", "y/a.png", "-o", "/tmp/x/%s"], "would both be written to /tmp/x/a"),
    (["a.png", "-o", "%s", "--shard", "4/4"], "--shard must be K/N"),
    (["a.png", "out", "--shard", "0/2"], "--shard is for a batch"),
    (["--summarize"], "report files"),
])
def test_batch_mistakes_are_usage_errors(tessera, tmp_path, args, message):
    (tmp_path / "LIST").write_text("a.png\n")
    result = run(tessera, "tile", *args, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
