"""Web/progressive.html in headless Chromium against `tessera serve`, the page served by `tessera serve` itself
and by a static server: each of the three loading strategies draws the image at the asked size, and the stream
strategies draw a complete scan before the whole file is in."""
import functools
import http.server
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from conftest import photo

webdriver = pytest.importorskip("selenium.webdriver")
ROOT = Path(__file__).resolve().parents[2]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def static_pages():
    """Web/ over HTTP on a free port (the page is plain files)."""
    handler = functools.partial(QuietHandler, directory=str(ROOT / "Web"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(params=["tessera serve", "a static server"])
def pages(request, images, static_pages):
    """Where the page is loaded from: `tessera serve`'s /web/, or the static server."""
    return images + "/web" if request.param == "tessera serve" else static_pages


@pytest.fixture(scope="module")
def images(tessera, tmp_path_factory):
    root = tmp_path_factory.mktemp("page")
    Image.fromarray(photo(1500, 2000, 3, seed=71)).save(root / "large.png")
    process = subprocess.Popen([tessera, "serve", str(root), "--port", "0", "--no-cache", "--quiet",
                                "--web", str(ROOT / "Web")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    banner = process.stdout.readline()
    assert "serving" in banner, process.stderr.read()
    yield banner.split(" at ")[1].split()[0].rsplit("/iiif", 1)[0]
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.add_argument("--headless=new")
    options.add_argument("--no-sandbox")
    try:
        driver = webdriver.Chrome(options=options)
    except Exception as error:  # no Chromium or chromedriver on this machine
        pytest.skip(f"needs Chromium and chromedriver: {error}")
    yield driver
    driver.quit()


@pytest.mark.parametrize("strategy", ["sizes-first", "stream", "thumbnail-then-stream"])
def test_each_strategy_draws_the_image(pages, images, browser, strategy):
    browser.get(f"{pages}/progressive.html?server={images}&strategy={strategy}&size=800")
    log = ""
    for _ in range(240):
        log = browser.find_element("id", "log").text
        if re.search(r"\bdone$|failed", log):
            break
        time.sleep(0.25)
    assert log.endswith("done"), log
    assert "not decodable" not in log
    width, height, lit = browser.execute_script("""
        const canvas = document.getElementById("image");
        const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
        let lit = 0;
        for (let index = 0; index < data.length; index += 4) if (data[index + 3] === 255) lit++;
        return [canvas.width, canvas.height, lit];""")
    assert (width, height) == (800, 600) and lit == width * height
    if strategy == "sizes-first":
        assert re.findall(r"size (\d+):", log) == ["250", "500", "800"]
    else:
        assert re.search(r"scan \d+ complete", log) and "complete\n" in log + "\n"
    if strategy == "thumbnail-then-stream":
        assert log.index("thumbnail: 256 x 192") < log.index("ms  stream: ")
