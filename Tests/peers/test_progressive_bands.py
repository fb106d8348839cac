"""Progressive JPEG over the memory budget: decoded a band of rows at a time (all scans in lockstep, each band's
coefficients handed to libjpeg), whole images, regions and 1/2 and 1/4 reads equal djpeg's one-shot decode
exactly, for cjpeg, Pillow and scan-script files, every sampling, restart intervals and odd sizes; damaged files
give an error, never a crash."""
import io
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

from conftest import photo, read_png, run
from test_progressive_jpeg import make

pytestmark = pytest.mark.skipif(shutil.which("cjpeg") is None or shutil.which("djpeg") is None,
                                reason="libjpeg-turbo's cjpeg and djpeg are not installed")

# Luma's AC split in two bands of frequencies, both first coded at Al = 3 and refined three times, and
# chroma's refined once: EOB runs, ZRL and correction bits in every combination.
AC_SCRIPT = """0 1 2: 0 0 0 1; 0: 1 9 0 3; 0: 10 63 0 3; 0: 1 63 3 2; 1: 1 63 0 1; 2: 1 63 0 1; 0: 1 63 2 1;
0: 1 63 1 0; 1: 1 63 1 0; 2: 1 63 1 0; 0 1 2: 0 0 1 0;"""

# Far below the 829 x 613 image's coefficients (1.5 MB at 4:2:0, 3 MB at 4:4:4): bands of a few MCU rows.
LIMIT = "800K"
SAMPLING = {"1x1": (1, 1, 3), "2x1": (2, 1, 4), "2x2": (2, 2, 6), "gray": (1, 1, 1)}


def band_limit(size, sampling, band_rows):
    """A memory limit giving bands of `band_rows` MCU rows: the decoder keeps a quarter of the budget for a
    window of `band_rows` + 2 rows. Below the whole image's coefficients for all but the smallest images."""
    width, _ = size
    horizontal, _, blocks = SAMPLING[sampling]
    row_bytes = -(-width // (8 * horizontal)) * blocks * 128
    return str(4 * row_bytes * (band_rows + 2))


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bands")
    images = {}
    for height, width in [(613, 829), (203, 301), (45, 97)]:
        path = folder / f"photo-{width}x{height}.ppm"
        Image.fromarray(photo(height, width, 3, seed=width)).save(path)
        images[(width, height)] = path
    return folder, images


def djpeg(path, scale=1):
    output = subprocess.run(["djpeg", "-scale", f"1/{scale}", "-pnm", str(path)], capture_output=True,
                            check=True).stdout
    decoded = np.asarray(Image.open(io.BytesIO(output)))
    return decoded if decoded.ndim == 3 else decoded[:, :, None]


def ac_script_file(folder, source, sampling):
    script = folder / "ac-scans.txt"
    script.write_text(AC_SCRIPT)
    path = folder / f"{source.stem}-ac-{sampling}.jpg"
    subprocess.run(["cjpeg", "-scans", str(script), "-sample", sampling, "-restart", "5B", "-outfile", str(path),
                    str(source)], check=True)
    return path


CASES = [(maker, sampling, restart) for maker in ["cjpeg", "pillow"] for sampling in ["1x1", "2x1", "2x2", "gray"]
         for restart in ([0, 3] if maker == "cjpeg" else [0])]
CASES += [("script", sampling, 2) for sampling in ["1x1", "2x2"]] + [("ac", sampling, 5) for sampling in ["1x1", "2x2"]]


@pytest.mark.parametrize("maker,sampling,restart", CASES)
def test_banded_decode_equals_djpeg(tessera, tmp_path, sources, maker, sampling, restart):
    folder, images = sources
    for size, source in images.items():
        path = ac_script_file(folder, source, sampling) if maker == "ac" else make(folder, source, maker, sampling, restart)
        for scale in [1, 2] if size == (829, 613) else [1]:
            target = tmp_path / "decoded.png"
            limit = band_limit(size, "2x2" if maker == "pillow" and sampling == "2x2" else sampling, 1 + scale)
            result = run(tessera, "convert", path, target, "--scale", f"1/{scale}", "--memory-limit", limit)
            assert result.returncode == 0, result.stderr
            got = read_png(target).astype(int)
            expected = djpeg(path, scale).astype(int)
            assert got.shape == expected.shape, (size, scale)
            assert np.abs(got - expected).max() == 0, (size, scale)


def test_over_the_budget_the_whole_decode_is_refused_but_bands_are_not(tessera, tmp_path, sources):
    _, images = sources
    path = make(tmp_path, images[(829, 613)], "cjpeg", "2x2", 0)
    # One band needs a few MCU rows of coefficients; less than that is refused with a memory-limit error.
    result = run(tessera, "convert", path, tmp_path / "out.png", "--memory-limit", "100K")
    assert result.returncode != 0 and "memory" in result.stderr.lower(), result.stderr
    assert run(tessera, "convert", path, tmp_path / "out.png", "--memory-limit", LIMIT).returncode == 0


@pytest.mark.parametrize("rect,scale", [("100,200,300,150", 1), ("0,517,829,96", 1), ("333,17,411,500", 2),
                                        ("5,300,64,64", 4)])
def test_banded_region_reads_equal_crops_of_djpeg(tessera, tmp_path, sources, rect, scale):
    _, images = sources
    path = make(tmp_path, images[(829, 613)], "cjpeg", "2x2", 3)
    target = tmp_path / "region.png"
    result = run(tessera, "region", path, target, "--rect", rect, "--scale", f"1/{scale}", "--memory-limit", LIMIT)
    assert result.returncode == 0, result.stderr
    x, y, w, h = (int(v) for v in rect.split(","))
    expected = djpeg(path).astype(int)[y:y + h, x:x + w]
    got = read_png(target).astype(int)
    if scale == 1:
        assert got.shape == expected.shape and np.abs(got - expected).max() == 0
    else:
        reference = tmp_path / "reference.png"
        assert run(tessera, "region", path, reference, "--rect", rect, "--scale", f"1/{scale}").returncode == 0
        assert np.abs(got - read_png(reference).astype(int)).max() == 0


def test_damaged_progressive_files_give_errors_not_crashes(tessera, tmp_path, sources):
    _, images = sources
    path = make(tmp_path, images[(301, 203)], "cjpeg", "2x2", 0)
    data = path.read_bytes()
    rng = np.random.default_rng(8)
    damaged = [("truncated", data[:len(data) // 2]), ("truncated-late", data[:len(data) - 40])]
    for index in range(12):
        corrupt = bytearray(data)
        for position in rng.integers(600, len(data) - 2, 8):
            corrupt[position] = int(rng.integers(0, 256))
        damaged.append((f"corrupt-{index}", bytes(corrupt)))
    for label, content in damaged:
        broken = tmp_path / f"{label}.jpg"
        broken.write_bytes(content)
        result = run(tessera, "convert", broken, tmp_path / "out.png", "--memory-limit", "100K")
        assert result.returncode in (0, 1), (label, result.returncode, result.stderr)
        if result.returncode == 1:
            assert str(broken) in result.stderr and "\n" == result.stderr[-1], (label, result.stderr)
        if label.startswith("truncated"):
            assert result.returncode == 1, label
