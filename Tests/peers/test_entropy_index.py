"""`tessera index` and regions read through the entropy index: each region, at every scale, equals the same
rectangle of libjpeg's (djpeg's) decode of the whole image; an index is reused while valid and rebuilt when
damaged."""
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

from conftest import djpeg, photo, read_png, run

pytestmark = pytest.mark.skipif(shutil.which("djpeg") is None or shutil.which("cjpeg") is None,
                                reason="djpeg and cjpeg are not installed")

WIDTH, HEIGHT = 2411, 1607


@pytest.fixture(scope="module", params=[["-sample", "2x2"], ["-sample", "1x1", "-optimize"],
                                        ["-sample", "2x1", "-restart", "1"]], ids=["420", "444-optimized", "422-restarts"])
def jpeg(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("index")
    ppm = folder / "photo.ppm"
    image = photo(HEIGHT, WIDTH, 3, seed=17).astype(np.int32)
    # Grain enough that the file is a photograph's size, so the index fits in its 0.5%.
    image += np.random.default_rng(5).integers(-24, 24, image.shape)
    Image.fromarray(np.clip(image, 0, 255).astype(np.uint8)).save(ppm)
    path = folder / "photo.jpg"
    subprocess.run(["cjpeg", "-quality", "90", *request.param, "-outfile", str(path), str(ppm)], check=True)
    return path


def test_index_is_built_then_reused_then_rebuilt_when_damaged(tessera, tmp_path, jpeg):
    cache = tmp_path / "cache"
    first = run(tessera, "index", jpeg, "--cache", cache)
    assert first.returncode == 0, first.stderr
    assert ": built in " in first.stdout
    assert ": reused in " in run(tessera, "index", jpeg, "--cache", cache).stdout
    (index,) = cache.glob("*.jpegindex")
    assert index.stat().st_size <= jpeg.stat().st_size * 0.005
    damaged = bytearray(index.read_bytes())
    damaged[len(damaged) // 2] ^= 0x40
    index.write_bytes(bytes(damaged))
    assert ": rebuilt (the one kept was stale or damaged) in " in run(tessera, "index", jpeg, "--cache", cache).stdout


@pytest.mark.parametrize("scale", [1, 2, 4, 8])
def test_regions_through_the_index_equal_djpegs_decode(tessera, tmp_path, jpeg, scale):
    cache = tmp_path / "cache"
    assert run(tessera, "index", jpeg, "--cache", cache).returncode == 0
    full = djpeg("-scale", f"1/{scale}", str(jpeg))
    for x, y, w, h in [(1203, 1300, 512, 300), (0, 1500, 2411, 107), (2300, 0, 111, 64), (77, 901, 33, 1)]:
        target = tmp_path / "region.png"
        result = run(tessera, "region", jpeg, target, "--rect", f"{x},{y},{w},{h}", "--scale", f"1/{scale}",
                     "--cache", cache)
        assert result.returncode == 0, result.stderr
        left, top = x // scale, y // scale
        right, bottom = -(-(x + w) // scale), -(-(y + h) // scale)
        expected = full[top:bottom, left:right]
        assert np.abs(read_png(target).astype(int) - expected.astype(int)).max() == 0, (x, y, w, h)


def test_index_of_a_progressive_jpeg_is_refused(tessera, tmp_path, jpeg):
    progressive = tmp_path / "progressive.jpg"
    subprocess.run(["jpegtran", "-progressive", "-outfile", str(progressive), str(jpeg)], check=True)
    result = run(tessera, "index", progressive, "--cache", tmp_path / "cache")
    assert result.returncode == 1
    assert str(progressive) in result.stderr and "unsupported" in result.stderr


def test_an_index_built_on_one_core_or_by_speculation_on_every_core_reads_the_same(tessera, tmp_path, jpeg):
    """On one core the index is one serial pass; on more, later segments are decoded from guessed starts
    (speculative decoding) and joined: regions through either equal djpeg's decode."""
    if shutil.which("taskset") is None:
        pytest.skip("taskset is not installed")
    full = djpeg(str(jpeg))
    x, y, w, h = 1203, 1300, 512, 300
    for name, prefix in [("serial", ["taskset", "-c", "0"]), ("speculative", [])]:
        cache = tmp_path / name
        built = subprocess.run([*prefix, str(tessera), "index", str(jpeg), "--cache", str(cache)], capture_output=True,
                               text=True)
        assert built.returncode == 0, built.stderr
        target = tmp_path / f"{name}.png"
        assert run(tessera, "region", jpeg, target, "--rect", f"{x},{y},{w},{h}", "--cache", cache).returncode == 0
        assert np.abs(read_png(target).astype(int) - full[y:y + h, x:x + w].astype(int)).max() == 0, name


def test_a_damaged_scan_is_reported_with_its_mcu_row(tessera, tmp_path, jpeg):
    """Bytes that form no valid Huffman code two thirds into the scan: `tessera index` (speculative on every core,
    then serial to find the damage) fails naming the file and the MCU row, and writes no index."""
    data = bytearray(jpeg.read_bytes())
    middle = len(data) * 2 // 3
    data[middle:middle + 64] = b"\xfe" * 64
    damaged = tmp_path / "damaged.jpg"
    damaged.write_bytes(bytes(data))
    result = run(tessera, "index", damaged, "--cache", tmp_path / "cache")
    assert result.returncode == 1
    assert str(damaged) in result.stderr and "MCU row" in result.stderr, result.stderr
    assert not list((tmp_path / "cache").glob("*.jpegindex"))


def test_a_large_jpeg_at_one_eighth_records_its_index_then_reads_from_it(tessera, tmp_path):
    """A 1/8 read of a plain JPEG of 16 MP or more with no index is one pass of Tessera's decoder that leaves the
    index behind (on a machine of fewer than 4 cores; more build it first by speculation); the next read decodes
    from it on every core. Both equal djpeg's 1/8 decode."""
    ppm, path, cache = tmp_path / "large.ppm", tmp_path / "large.jpg", tmp_path / "cache"
    Image.fromarray(photo(3300, 5001, 3, seed=23)).save(ppm)
    subprocess.run(["cjpeg", "-quality", "85", "-sample", "2x2", "-outfile", str(path), str(ppm)], check=True)
    expected = djpeg("-scale", "1/8", str(path))
    for attempt in ("first", "again"):
        target = tmp_path / f"{attempt}.png"
        result = run(tessera, "convert", path, target, "--scale", "1/8", "--cache", cache)
        assert result.returncode == 0, result.stderr
        assert np.array_equal(read_png(target), expected), attempt
        assert len(list(cache.glob("*.jpegindex"))) == 1, attempt
