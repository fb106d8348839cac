"""`tessera view` under Xvfb: scripted sessions whose screenshots must show the expected region of the source
(resampled by Pillow) at three zoom levels, from a plain image, a Deep Zoom folder, a pyramidal TIFF and a IIIF
server, and a 2,000-frame trace whose memory must stay within the tile cache's budget."""
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, photo, run

sys.path.insert(0, str(ROOT / "Benchmarks"))
from view_benchmark import trace  # noqa: E402  (the benchmark's session, shorter here)

pytestmark = pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run is not installed")

VIEW = (640, 480)
SOURCE = photo(1536, 2048, 3, seed=91)


def view(tessera, target, steps, tmp_path, *options, size=VIEW):
    """Runs a scripted session in a `size` window in a virtual display and returns its report."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(steps))
    report = tmp_path / "report.json"
    result = run("xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", tessera, "view", target, "--script", script,
                 "--report", report, "--size", f"{size[0]}x{size[1]}", "--no-cache", *options, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(report.read_text())


def expected(centre, zoom):
    """The view of SOURCE centred on `centre` at `zoom`, as Pillow resamples it: box averaging when
    shrinking (the viewer's 1/2x level), bilinear when magnifying (the GPU's filtering)."""
    width, height = VIEW[0] / zoom, VIEW[1] / zoom
    box = (centre[0] - width / 2, centre[1] - height / 2, centre[0] + width / 2, centre[1] + height / 2)
    kind = Image.BOX if zoom <= 1 else Image.BILINEAR
    return np.asarray(Image.fromarray(SOURCE).resize(VIEW, kind, box=box)).astype(np.int16)


def difference(path, centre, zoom):
    shot = np.asarray(Image.open(path).convert("RGB")).astype(np.int16)
    assert shot.shape == (VIEW[1], VIEW[0], 3)
    error = np.abs(shot - expected(centre, zoom))
    return error.mean(), np.percentile(error, 99)


ZOOMS = [(0.5, (1000, 700)), (1, (1000, 700)), (2, (1500, 400))]


def zoom_steps(tmp_path):
    steps = []
    for index, (zoom, centre) in enumerate(ZOOMS):
        steps += [{"view": {"x": centre[0], "y": centre[1], "zoom": zoom}}, {"wait": "sharp"},
                  {"screenshot": str(tmp_path / f"shot{index}.png")}]
    return steps


def test_screenshots_of_a_plain_image_match_the_source_at_three_zooms(tessera, tmp_path):
    Image.fromarray(SOURCE).save(tmp_path / "photo.png")
    report = view(tessera, tmp_path / "photo.png", zoom_steps(tmp_path), tmp_path)
    assert report["tilesFailed"] == 0
    for index, (zoom, centre) in enumerate(ZOOMS):
        mean, p99 = difference(tmp_path / f"shot{index}.png", centre, zoom)
        # 1:1 is the source's pixels; the 1/2x level averages 2 x 2 blocks as Pillow does, up to rounding;
        # magnified, the GPU's bilinear filter and Pillow's differ at tile edges.
        limits = {0.5: (0.6, 1), 1: (0.01, 0), 2: (1.5, 12)}[zoom]
        assert mean <= limits[0] and p99 <= limits[1], (zoom, mean, p99)


def test_deep_zoom_pyramidal_tiff_and_iiif_show_the_same_pixels(tessera, tmp_path):
    Image.fromarray(SOURCE).save(tmp_path / "photo.png")
    assert run(tessera, "tile", tmp_path / "photo.png", tmp_path / "photo", "-Q", "95").returncode == 0
    assert run(tessera, "tile", tmp_path / "photo.png", tmp_path / "photo.tif", "--layout", "tiff",
               "-Q", "95").returncode == 0
    server = subprocess.Popen([tessera, "serve", str(tmp_path / "photo.png"), "--port", "0", "--quiet", "--no-cache"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = server.stdout.readline()
        assert "serving" in banner, server.stderr.read()
        base = banner.split(" at ")[1].split()[0].rstrip("/")
        for target in [tmp_path / "photo.dzi", tmp_path / "photo.tif", f"{base}/photo.png"]:
            report = view(tessera, target, zoom_steps(tmp_path), tmp_path)
            assert report["tilesFailed"] == 0, target
            for index, (zoom, centre) in enumerate(ZOOMS):
                mean, p99 = difference(tmp_path / f"shot{index}.png", centre, zoom)
                # JPEG tiles at quality 95: small errors everywhere.
                assert mean <= 2.5 and p99 <= 16, (target, zoom, mean, p99)
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_memory_stays_within_the_cache_budget_over_2000_frames(tessera, tmp_path):
    image = tmp_path / "big.jpg"
    Image.fromarray(photo(3072, 4096, 3, seed=92)).save(image, quality=85)
    # A small window keeps 2,000 software-rendered frames quick; the budget is a few screens of tiles.
    budget, size = 8 << 20, (320, 240)
    report = view(tessera, image, trace(2000, size, (4096, 3072)), tmp_path, "--software",
                  "--memory-cache", str(budget), size=size)
    assert report["frames"] >= 2000
    assert report["tilesMade"] > 100
    assert report["peakCacheBytes"] > budget // 2, "the trace should fill the cache and make it evict"
    # The visible tiles are kept whatever the budget; they fit in it here, so nothing may exceed it.
    assert report["peakPinnedBytes"] < budget
    assert report["peakCacheBytes"] <= budget
    assert report["peakCacheAndReservedBytes"] <= budget
    assert report["peakTextureBytes"] <= budget
    # SDL, X and the decoders need about 40 MiB besides the tiles.
    assert report["peakRSSBytes"] < budget + (96 << 20)


def test_keys_zoom_about_the_centre_and_show_the_overlay(tessera, tmp_path):
    Image.fromarray(SOURCE).save(tmp_path / "photo.png")
    centre = (1000, 700)
    steps = [{"view": {"x": centre[0], "y": centre[1], "zoom": 1}}, {"key": "+"}, {"wait": "sharp"},
             {"screenshot": str(tmp_path / "plus.png")}, {"key": "i"}, {"frames": 2},
             {"screenshot": str(tmp_path / "overlay.png")}, {"key": "Home"}, {"wait": "sharp"},
             {"key": "i"}, {"frames": 2}, {"screenshot": str(tmp_path / "home.png")}]
    view(tessera, tmp_path / "photo.png", steps, tmp_path)
    mean, _ = difference(tmp_path / "plus.png", centre, 2)
    assert mean <= 1.5
    # Home fits the whole 2048 x 1536 image in 640 x 480: zoom 0.3125, centred.
    mean, _ = difference(tmp_path / "home.png", (1024, 768), 0.3125)
    assert mean <= 3
    # The overlay is white text on a dark panel at the top left, and leaves the rest of the view alone.
    plus = np.asarray(Image.open(tmp_path / "plus.png").convert("L")).astype(int)
    overlay = np.asarray(Image.open(tmp_path / "overlay.png").convert("L")).astype(int)
    panel = overlay[:60, :200]
    assert (panel >= 250).sum() > 200 and (panel <= 90).sum() > 2000
    assert np.array_equal(overlay[300:, 400:], plus[300:, 400:])


@pytest.mark.skipif(shutil.which("opj_compress") is None, reason="needs libopenjp2-tools")
def test_a_tiled_lossless_jp2_shows_the_sources_pixels(tessera, tmp_path):
    Image.fromarray(SOURCE).save(tmp_path / "photo.png")
    result = run("opj_compress", "-i", tmp_path / "photo.png", "-o", tmp_path / "photo.jp2", "-t", "512,512", "-n", "5")
    assert result.returncode == 0, result.stderr
    report = view(tessera, tmp_path / "photo.jp2", zoom_steps(tmp_path), tmp_path)
    assert report["tilesFailed"] == 0
    for index, (zoom, centre) in enumerate(ZOOMS):
        mean, p99 = difference(tmp_path / f"shot{index}.png", centre, zoom)
        # 1:1 is the source's pixels (5/3 is lossless); the 1/2x view is the codestream's own 1/2 level, the
        # wavelet's low-pass rather than Pillow's 2 x 2 box; magnified as for any image.
        limits = {0.5: (3, 24), 1: (0.01, 0), 2: (1.5, 12)}[zoom]
        assert mean <= limits[0] and p99 <= limits[1], (zoom, mean, p99)
