"""Fixtures for the browser tests: a generated image whose every pixel's colour is a known function of its
coordinates, served by the real `tessera serve` (as a pyramidal TIFF) and, as a Deep Zoom pyramid, by a small
static server; Debian's headless Chromium through chromedriver at device pixel ratios 1 and 1.5; and readers for
the viewer's canvas and debug hook."""
import base64
import functools
import http.server
import io
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 4000, 3000
BACKGROUND = (0x16, 0x16, 0x16)  # the viewer's background, Web/viewer.css and Viewer's default
WINDOW = (900, 650)  # CSS pixels


def source_colour(x, y):
    """The test image's colour at image point (x, y) (arrays of floats): smooth waves in each channel, so JPEG
    keeps it within a few levels and a misplaced view or a seam shows as a large difference."""
    two_pi = 2 * np.pi
    return np.stack([128 + 90 * np.sin(two_pi * x / 509), 128 + 90 * np.sin(two_pi * y / 383),
                     128 + 90 * np.sin(two_pi * (x + y) / 701)], axis=-1)


def make_source(path):
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float64)
    pixels = np.clip(np.round(source_colour(x + 0.5, y + 0.5)), 0, 255).astype(np.uint8)
    Image.fromarray(pixels).save(path)


@pytest.fixture(scope="session")
def tessera():
    path = Path(os.environ.get("TESSERA", ROOT / ".build/release/tessera"))
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with 'make build'")
    return str(path)


@pytest.fixture(scope="session")
def images(tessera, tmp_path_factory):
    """The served folder (waves.tif, a pyramidal TIFF of 256-pixel JPEG tiles) and a Deep Zoom folder (waves.dzi)."""
    work = tmp_path_factory.mktemp("viewer")
    make_source(work / "waves.png")
    served, deepzoom = work / "served", work / "deepzoom"
    served.mkdir()
    deepzoom.mkdir()
    for output, layout in [(served / "waves.tif", ["--layout", "tiff", "--tile-size", "256"]),
                           (deepzoom / "waves", [])]:
        done = subprocess.run([tessera, "tile", work / "waves.png", output, "-Q", "92", *layout],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return served, deepzoom


class Server:
    """`tessera serve` on a free loopback port (with its pyramid cache in `cache`, or none), its request log
    collected line by line."""

    def __init__(self, tessera, root, cache=None):
        caching = ["--cache", str(cache)] if cache else ["--no-cache"]
        self.process = subprocess.Popen([tessera, "serve", str(root), "--port", "0", "--web", str(ROOT / "Web"),
                                         *caching], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        banner = self.process.stdout.readline()
        assert "the viewer at" in banner, self.process.stderr.read()
        self.base = re.search(r"and the viewer at (\S+)/", banner).group(1)
        self.log = []
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self):
        for line in self.process.stderr:
            self.log.append(line.split())

    def tile_responses(self):
        """How many tile images the server has answered so far."""
        return sum(1 for fields in list(self.log)
                   if len(fields) > 2 and fields[0] == "GET" and fields[1].endswith("/default.jpg"))

    def stop(self):
        self.process.terminate()
        assert self.process.wait(timeout=10) == 0


@pytest.fixture(scope="session")
def server(tessera, images):
    running = Server(tessera, images[0])
    yield running
    running.stop()


class CORSHandler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def deepzoom_base(images):
    """A static server for the Deep Zoom folder, on another origin, as a third-party tile host would be."""
    handler = functools.partial(CORSHandler, directory=str(images[1]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def make_driver(pixel_ratio=1):
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--force-device-scale-factor={pixel_ratio}"]:
        options.add_argument(argument)
    if Path("/usr/bin/chromium").exists():
        options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


@pytest.fixture(scope="session")
def browser():
    driver = make_driver(1)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def browser15():
    driver = make_driver(1.5)
    yield driver
    driver.quit()


def wait_for(driver, script, *arguments, timeout=30, interval=0.05):
    """Polls `script` (returning a value, given `arguments`) until it is truthy; returns it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script, *arguments)
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for: {script}")


def open_viewer(driver, url):
    """Loads the page fresh and waits for the viewer to exist; returns its first debug snapshot."""
    driver.get("about:blank")
    driver.get(url)
    error = wait_for(driver, "return window.tessera && (window.tessera.error || window.tessera.viewer) && true")
    message = driver.execute_script("return window.tessera.error || null")
    assert message is None, message
    return debug(driver)


def debug(driver):
    return driver.execute_script("return window.tessera.viewer.debug()")


def set_view(driver, x, y, zoom):
    driver.execute_script("window.tessera.viewer.setView({x: arguments[0], y: arguments[1], zoom: arguments[2]},"
                          " {animate: false})", x, y, zoom)


def wait_sharp(driver, timeout=30):
    """Waits until every visible tile of the current view is drawn at full opacity; returns the debug snapshot."""
    return wait_for(driver, "const d = window.tessera.viewer.debug(); return d.sharp && !d.animating && d", timeout=timeout)


def canvas_pixels(driver):
    """The canvas's device pixels as an (h, w, 3) uint8 array."""
    url = driver.execute_script("return window.tessera.viewer.canvas.toDataURL('image/png')")
    data = base64.b64decode(url.split(",", 1)[1])
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def expected_pixels(state, shape):
    """What the canvas should hold for debug snapshot `state`: each device pixel's centre mapped back to the image
    (through the viewport's offset, zoom and pixel ratio), the source's colour there, the background outside; and
    a mask of the pixels well inside the image (one device pixel from its edges, which blend with the background)."""
    height, width = shape[:2]
    ratio, zoom = state["pixelRatio"], state["zoom"]
    j, i = np.mgrid[0:height, 0:width].astype(np.float64)
    x = (state["offset"]["x"] + (i + 0.5) / ratio) / zoom
    y = (state["offset"]["y"] + (j + 0.5) / ratio) / zoom
    margin = 1.0 / (ratio * zoom)
    inside = (x >= 0) & (x < WIDTH) & (y >= 0) & (y < HEIGHT)
    interior = (x >= margin) & (x < WIDTH - margin) & (y >= margin) & (y < HEIGHT - margin)
    expected = np.where(inside[..., None], source_colour(x, y), np.array(BACKGROUND, dtype=np.float64))
    return expected, inside, interior
