"""A corpus of broken files made here (truncated at many points, random byte flips, empty, wrong extension,
absurd header dimensions, every format) goes through `tessera info` and `tessera convert`: never a crash,
one line of error naming the file, exit status 1, and nothing left at the output path."""
import random
import shutil
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from conftest import photo, run, write_png

IMAGE = photo(61, 83, 3, seed=41)


def valid_files(folder):
    """One small valid file per format and notable variant, as bytes."""
    makers = {
        "baseline.jpg": lambda p: Image.fromarray(IMAGE).save(p, quality=85),
        "progressive.jpg": lambda p: Image.fromarray(IMAGE).save(p, quality=85, progressive=True),
        "plain.png": lambda p: write_png(p, IMAGE),
        "interlaced.png": lambda p: write_png(p, IMAGE, interlace=True),
        "strips.tif": lambda p: Image.fromarray(IMAGE).save(p, compression="tiff_lzw"),
        "lossy.webp": lambda p: Image.fromarray(IMAGE).save(p, quality=80),
        "lossless.webp": lambda p: Image.fromarray(IMAGE).save(p, lossless=True),
        "rgb.bmp": lambda p: Image.fromarray(IMAGE).save(p),
        "rle.bmp": lambda p: Image.fromarray(IMAGE).quantize(64).save(p, compression="bmp_rle"),
        "frame.gif": lambda p: Image.fromarray(IMAGE).quantize(64).save(p),
    }
    if shutil.which("opj_compress"):
        makers["tiled.jp2"] = lambda p: opj_compress(p, "-t", "32,32", "-n", "3")
        makers["lossy.j2k"] = lambda p: opj_compress(p, "-r", "20", "-p", "RPCL")
    files = {}
    for name, make in makers.items():
        path = folder / name
        make(path)
        files[name] = path.read_bytes()
    return files


def opj_compress(path, *options):
    source = path.with_suffix(".source.png")
    write_png(source, IMAGE)
    result = run("opj_compress", "-i", source, "-o", path, *options)
    assert result.returncode == 0, result.stderr


def png_with_size(width, height):
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


def absurd_sizes(files):
    """Headers claiming enormous images over a few bytes of data."""
    cases = {"huge.png": png_with_size(2_000_000_000, 2_000_000_000), "wide.png": png_with_size(0x7FFFFFFF, 1),
             "zero.png": png_with_size(0, 10)}
    jpeg = bytearray(files["baseline.jpg"])
    sof = jpeg.find(b"\xff\xc0")
    jpeg[sof + 5:sof + 9] = struct.pack(">HH", 65500, 65500)
    cases["huge.jpg"] = bytes(jpeg)
    bmp = bytearray(files["rgb.bmp"])
    bmp[18:26] = struct.pack("<ii", 0x7FFFFFFF, -0x7FFFFFFF)
    cases["huge.bmp"] = bytes(bmp)
    gif = bytearray(files["frame.gif"])
    gif[6:10] = struct.pack("<HH", 65535, 65535)
    cases["huge.gif"] = bytes(gif)
    if "lossy.j2k" in files:
        # The SIZ segment's image and tile sizes, right after SOC, SIZ and its length and capabilities.
        j2k = bytearray(files["lossy.j2k"])
        j2k[8:16] = struct.pack(">II", 0x7FFFFFF0, 0x7FFFFFF0)
        j2k[24:32] = struct.pack(">II", 0x7FFFFFF0, 0x7FFFFFF0)
        cases["huge.j2k"] = bytes(j2k)
    return cases


def corpus(folder):
    files = valid_files(folder)
    rng = random.Random(1234)
    cases = {"empty.jpg": b"", "text.png": b"hello, this is not an image\n"}
    for name, data in files.items():
        for cut in sorted({1, 2, 4, 8, 16, 33, 100, len(data) // 4, len(data) // 2, len(data) * 3 // 4,
                           len(data) - 40, len(data) - 2}):
            if 0 < cut < len(data):
                cases[f"cut{cut}-{name}"] = data[:cut]
        for flip in range(6):
            corrupted = bytearray(data)
            for _ in range(rng.randint(1, 12)):
                corrupted[rng.randrange(2, len(data))] = rng.randrange(256)
            cases[f"flip{flip}-{name}"] = bytes(corrupted)
    cases.update(absurd_sizes(files))
    return cases


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    folder = tmp_path_factory.mktemp("broken")
    paths = []
    for name, data in corpus(folder).items():
        path = folder / name
        path.write_bytes(data)
        paths.append(path)
    return paths


def assert_clean_failure(result, path):
    assert result.returncode in (0, 1), f"{path.name}: exit {result.returncode}\n{result.stderr}"
    if result.returncode == 1:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, f"{path.name}: {result.stderr}"
        assert lines[0].startswith("tessera: ") and path.name in lines[0], lines[0]


def test_info_never_crashes_on_broken_files(tessera, broken):
    for path in broken:
        assert_clean_failure(run(tessera, "info", path, timeout=30), path)


def test_convert_never_crashes_and_leaves_nothing_behind(tessera, broken, tmp_path):
    for path in broken:
        output = tmp_path / "out.png"
        result = run(tessera, "convert", path, output, "--memory-limit", "256M", timeout=60)
        assert_clean_failure(result, path)
        if result.returncode == 1:
            assert not output.exists(), path.name
        output.unlink(missing_ok=True)
        assert list(tmp_path.iterdir()) == [], f"{path.name} left {list(tmp_path.iterdir())}"


def test_truncated_jpeg_fails_by_default_and_gives_its_rows_with_partial(tessera, tmp_path):
    source = tmp_path / "whole.jpg"
    Image.fromarray(photo(400, 300, 3, seed=42)).save(source, quality=90)
    data = source.read_bytes()
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(data[: len(data) // 2])
    result = run(tessera, "convert", cut, tmp_path / "out.png")
    assert result.returncode == 1 and "truncated" in result.stderr
    assert not (tmp_path / "out.png").exists()
    result = run(tessera, "convert", cut, tmp_path / "out.png", "--partial")
    assert result.returncode == 0, result.stderr
    with Image.open(tmp_path / "out.png") as partial, Image.open(source) as whole:
        top = np.asarray(partial)[:100].astype(int) - np.asarray(whole.convert("RGB"))[:100].astype(int)
    assert np.abs(top).max() <= 1


def test_wrong_extension_is_read_by_content(tessera, tmp_path):
    source = tmp_path / "really-a-png.jpg"
    write_png(source, IMAGE)
    result = run(tessera, "info", "--json", source)
    assert result.returncode == 0 and '"format" : "png"' in result.stdout


def test_memory_limit_names_the_need(tessera, tmp_path):
    source = tmp_path / "interlaced.png"
    write_png(source, photo(600, 600, 3, seed=43), interlace=True)
    result = run(tessera, "convert", source, tmp_path / "out.jpg", "--memory-limit", "100K")
    assert result.returncode == 1
    assert "interlaced PNG needs 1 MiB, over the memory limit of 100 KiB" in result.stderr
