"""Progressive JPEG: `info` counts scans, `convert --progressive` writes them, and reads at 1/8 (decoded from the
DC scans alone by Tessera's own decoder) agree with libjpeg's (djpeg -scale 1/8) for files made by cjpeg and Pillow."""
import io
import json
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

from conftest import photo, read_png, run

pytestmark = pytest.mark.skipif(shutil.which("cjpeg") is None or shutil.which("djpeg") is None,
                                reason="libjpeg-turbo's cjpeg and djpeg are not installed")


def count_scans(path):
    """The SOS markers in a JPEG, found by walking its segments and skipping entropy-coded data: the oracle."""
    data = read_bytes(path)
    offset, scans = 2, 0
    while offset + 4 <= len(data):
        assert data[offset] == 0xFF
        marker = data[offset + 1]
        if marker == 0xD9:
            break
        length = data[offset + 2] << 8 | data[offset + 3]
        offset += 2 + length
        if marker == 0xDA:
            scans += 1
            while not (data[offset] == 0xFF and data[offset + 1] not in (0, *range(0xD0, 0xD8))):
                offset += 1
    return scans


def read_bytes(path):
    with open(path, "rb") as handle:
        return handle.read()


def djpeg_eighth(path):
    output = subprocess.run(["djpeg", "-scale", "1/8", "-pnm", str(path)], capture_output=True, check=True).stdout
    return np.asarray(Image.open(io.BytesIO(output)))


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    folder = tmp_path_factory.mktemp("progressive")
    images = {}
    for height, width in [(613, 829), (203, 301), (45, 97), (8, 8), (1, 1)]:
        path = folder / f"photo-{width}x{height}.ppm"
        Image.fromarray(photo(height, width, 3, seed=width)).save(path)
        images[(width, height)] = path
    return folder, images


# DC first scans one component at a time with Al = 2, then refined twice: once interleaved (Al 2 -> 1), then
# chroma together and luma alone (1 -> 0), with the AC scans in between.
SCAN_SCRIPT = """0: 0 0 0 2; 1: 0 0 0 2; 2: 0 0 0 2; 0: 1 63 0 0; 1: 1 63 0 0; 2: 1 63 0 0;
0 1 2: 0 0 2 1; 1 2: 0 0 1 0; 0: 0 0 1 0;"""


def make(folder, source, maker, sampling, restart):
    """A progressive JPEG of `source` written by cjpeg (its default progression, or SCAN_SCRIPT) or Pillow."""
    path = folder / f"{source.stem}-{maker}-{sampling}-{restart}.jpg"
    if maker == "script":
        script = folder / "scans.txt"
        script.write_text(SCAN_SCRIPT)
        flags = ["-restart", f"{restart}B"] if restart else []
        subprocess.run(["cjpeg", "-scans", str(script), "-sample", sampling, *flags, "-outfile", str(path), str(source)],
                       check=True)
    elif maker == "cjpeg":
        flags = ["-grayscale"] if sampling == "gray" else ["-sample", sampling]
        flags += ["-restart", f"{restart}B"] if restart else []
        subprocess.run(["cjpeg", "-progressive", "-quality", "85", *flags, "-outfile", str(path), str(source)], check=True)
    else:
        image = Image.open(source)
        if sampling == "gray":
            image.convert("L").save(path, progressive=True, quality=90)
        else:
            image.save(path, progressive=True, quality=90, subsampling={"1x1": 0, "2x1": 1, "2x2": 2}[sampling])
    return path


CASES = [(maker, sampling, restart) for maker in ["cjpeg", "pillow"] for sampling in ["1x1", "2x1", "2x2", "gray"]
         for restart in ([0, 3] if maker == "cjpeg" else [0])]
CASES += [("script", sampling, 2) for sampling in ["1x1", "2x1", "2x2"]]


@pytest.mark.parametrize("maker,sampling,restart", CASES)
def test_one_eighth_of_a_progressive_jpeg_equals_djpeg(tessera, tmp_path, sources, maker, sampling, restart):
    folder, images = sources
    for size, source in images.items():
        path = make(folder, source, maker, sampling, restart)
        target = tmp_path / "eighth.png"
        result = run(tessera, "convert", path, target, "--scale", "1/8")
        assert result.returncode == 0, result.stderr
        got = read_png(target).astype(int)
        expected = djpeg_eighth(path).astype(int).reshape(got.shape)
        difference = np.abs(got - expected)
        if sampling == "2x2":
            # libjpeg scales 4:2:0 chroma by a 2x2 IDCT (AC terms included); the DC decoder interpolates the
            # block means, so chroma differs where it changes within a block.
            # Measured on these strongly chromatic images: mean 2.8, max 14 levels.
            assert difference.mean() <= 3 and difference.max() <= 24, (size, difference.mean(), difference.max())
        else:
            assert difference.max() == 0, (size, difference.max())


def test_info_reports_the_number_of_scans_of_progressive_jpegs(tessera, tmp_path, sources):
    _, images = sources
    source = images[(301, 203)]
    baseline = tmp_path / "baseline.jpg"
    subprocess.run(["cjpeg", "-outfile", str(baseline), str(source)], check=True)
    color = make(tmp_path, source, "cjpeg", "2x2", 0)
    gray = make(tmp_path, source, "cjpeg", "gray", 0)
    for path, scans in [(color, 10), (gray, 6)]:
        assert count_scans(path) == scans
        report = json.loads(run(tessera, "info", "--json", path).stdout)
        assert report["scans"] == scans and report["isProgressive"]
        assert f"  scans        {scans}\n" in run(tessera, "info", path).stdout
    # Other images' properties stay a header read: counting scans means reading the whole file.
    png = tmp_path / "image.png"
    Image.open(source).save(png)
    for path in [baseline, png]:
        assert "scans" not in json.loads(run(tessera, "info", "--json", path).stdout)


@pytest.mark.parametrize("flags", [["--subsampling", "444"], []])
def test_convert_progressive_writes_libjpegs_default_progression(tessera, tmp_path, sources, flags):
    _, images = sources
    source = tmp_path / "photo.png"
    Image.open(images[(829, 613)]).save(source)
    target = tmp_path / "progressive.jpg"
    result = run(tessera, "convert", source, target, "--progressive", *flags)
    assert result.returncode == 0, result.stderr
    assert count_scans(target) == 10
    with Image.open(target) as image:
        assert image.info.get("progressive") or image.info.get("progression")
        decoded = np.asarray(image.convert("RGB")).astype(int)
    assert np.abs(decoded - np.asarray(Image.open(source)).astype(int)).mean() < 3


def test_thumbnail_of_a_progressive_jpeg_matches_the_baseline_one(tessera, tmp_path, sources):
    _, images = sources
    # Twice the fixture's size, so that its colour changes over more than one 16-pixel block, as in photographs:
    # the DC path gives block means where libjpeg's 2x2 chroma IDCT also has their gradients.
    source = tmp_path / "photo.ppm"
    with Image.open(images[(829, 613)]) as image:
        image.resize((1658, 1226), Image.BICUBIC).save(source)
    baseline = tmp_path / "baseline.jpg"
    subprocess.run(["cjpeg", "-quality", "85", "-outfile", str(baseline), str(source)], check=True)
    progressive = tmp_path / "progressive.jpg"
    subprocess.run(["jpegtran", "-progressive", "-outfile", str(progressive), str(baseline)], check=True)
    thumbnails = []
    for path in [baseline, progressive]:
        target = tmp_path / f"{path.stem}-thumb.png"
        # 1/8 is decoded from the DC scans: libjpeg would need 5.8 MiB of coefficients, over this limit.
        result = run(tessera, "thumbnail", path, "-s", "64", "-o", target, "--memory-limit", "4M")
        assert result.returncode == 0, result.stderr
        thumbnails.append(read_png(target).astype(int))
    assert thumbnails[0].shape == thumbnails[1].shape == (47, 64, 3)
    difference = np.abs(thumbnails[0] - thumbnails[1])
    assert difference.max() <= 6 and difference.mean() <= 1.0, (difference.max(), difference.mean())
