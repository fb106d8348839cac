"""The front page of `tessera serve` in headless Chromium: a folder of 2,000 small images and a few large ones
(a plain JPEG, its Deep Zoom pyramid and its pyramidal TIFF) shows as a grid whose thumbnails are the right images
(their pixels against the sources), loaded lazily as the page scrolls rather than all 2,000 at once; a subfolder
shows as a folder, and its page lists what is inside it."""
import base64
import io
import re
import subprocess
import time

import numpy as np
import pytest
from PIL import Image

from conftest import Server, make_driver, source_colour, wait_for

SMALL = 2000
SMALL_SIZE = (96, 64)
LARGE = (6000, 4000)


def quadrant_colours(index):
    """The four colours of small image `index` (top left, top right, bottom left, bottom right): distinct for
    every index, so a thumbnail shows which image it is."""
    return [((index * 37 + q * 61) % 256, (index * 73 + q * 17 + 40) % 256, (index // 7 * 11 + q * 101) % 256)
            for q in range(4)]


def small_image(index):
    width, height = SMALL_SIZE
    pixels = np.zeros((height, width, 3), np.uint8)
    for q, colour in enumerate(quadrant_colours(index)):
        y, x = divmod(q, 2)
        pixels[y * height // 2:(y + 1) * height // 2, x * width // 2:(x + 1) * width // 2] = colour
    return Image.fromarray(pixels)


def large_image():
    y, x = np.mgrid[0:LARGE[1], 0:LARGE[0]].astype(np.float64)
    return Image.fromarray(np.clip(np.round(source_colour(x + 0.5, y + 0.5)), 0, 255).astype(np.uint8))


@pytest.fixture(scope="module")
def collection(tessera, tmp_path_factory):
    root = tmp_path_factory.mktemp("collection")
    for index in range(SMALL):
        small_image(index).save(root / f"small-{index:04d}.png")
    large = large_image()
    large.save(root / "large.jpg", quality=92)
    for output, layout in [(root / "large-pyramid", []), (root / "large-tiled.tif", ["--layout", "tiff"])]:
        done = subprocess.run([tessera, "tile", root / "large.jpg", output, *layout], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    (root / "more" / "deeper").mkdir(parents=True)
    small_image(7).save(root / "more" / "inside.png")
    small_image(8).save(root / "more" / "deeper" / "deepest.png")
    return root, large


@pytest.fixture(scope="module")
def front(tessera, collection, tmp_path_factory):
    running = Server(tessera, collection[0], cache=tmp_path_factory.mktemp("cache"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def page_browser():
    driver = make_driver(1)
    driver.set_window_size(1280, 1000)
    yield driver
    driver.quit()


def thumbnail_requests(server):
    """The identifiers whose thumbnails the server has answered so far."""
    return {fields[1].split("/")[2] for fields in list(server.log)
            if len(fields) > 2 and fields[0] == "GET" and fields[1].startswith("/iiif/") and "/full/" in fields[1]}


LOADED_THUMBNAILS = """
    const shown = [];
    for (const card of document.querySelectorAll("li.image")) {
      const image = card.querySelector("img");
      const box = image.getBoundingClientRect();
      if (box.bottom < 0 || box.top > innerHeight || !image.complete || image.naturalWidth === 0) continue;
      const canvas = document.createElement("canvas");
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      canvas.getContext("2d").drawImage(image, 0, 0);
      shown.push([card.querySelector(".name").textContent, card.querySelector(".meta").textContent,
                  canvas.toDataURL("image/png")]);
    }
    return shown;"""


def shown_thumbnails(driver):
    """(name, meta text, pixels) of every thumbnail in the window that has loaded."""
    return [(name, meta, np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"),
                                    dtype=np.int16))
            for name, meta, url in driver.execute_script(LOADED_THUMBNAILS)]


def check_small(name, pixels):
    index = int(re.fullmatch(r"small-(\d{4})\.png", name).group(1))
    height, width = pixels.shape[:2]
    assert (width, height) == SMALL_SIZE, name
    for q, colour in enumerate(quadrant_colours(index)):
        y, x = divmod(q, 2)
        centre = pixels[(2 * y + 1) * height // 4, (2 * x + 1) * width // 4]
        assert np.abs(centre - colour).max() <= 12, f"{name} quadrant {q}: {centre} against {colour}"


def wait_loaded(driver, count):
    """Waits until every thumbnail in the window has loaded (at least `count` of them)."""
    wait_for(driver, """
        const images = [...document.querySelectorAll("li.image img")].filter(image => {
          const box = image.getBoundingClientRect(); return box.bottom >= 0 && box.top <= innerHeight; });
        return images.length >= arguments[0] && images.every(image => image.complete && image.naturalWidth > 0);
        """, count, timeout=60)


def test_the_front_page_shows_each_image_with_its_thumbnail_size_and_format(front, page_browser, collection):
    page_browser.get(front.base + "/")
    assert page_browser.find_element("css selector", "header p").text == f"{SMALL + 3} images, 1 folder"
    names = page_browser.execute_script("return [...document.querySelectorAll('li .name')].map(e => e.textContent)")
    assert names[:4] == ["more/", "large-pyramid.dzi", "large-tiled.tif", "large.jpg"]
    assert len(names) == SMALL + 4
    wait_loaded(page_browser, 8)
    shown = shown_thumbnails(page_browser)
    large = {name: (meta, pixels) for name, meta, pixels in shown if name.startswith("large")}
    assert set(large) == {"large-pyramid.dzi", "large-tiled.tif", "large.jpg"}
    formats = {"large-pyramid.dzi": "Deep Zoom", "large-tiled.tif": "TIFF", "large.jpg": "JPEG"}
    for name, (meta, pixels) in large.items():
        assert meta == f"6,000 \u00d7 4,000 \u00b7 {formats[name]}"
        assert pixels.shape[:2] == (171, 256), name
        expected = np.asarray(collection[1].resize((256, 171), Image.Resampling.BOX), dtype=np.int16)
        assert np.abs(pixels - expected).mean() < 8, name  # two JPEG generations and another kernel: 4.8 seen
    small = [(name, pixels) for name, _, pixels in shown if name.startswith("small")]
    assert len(small) >= 4
    for name, pixels in small:
        check_small(name, pixels)


def test_thumbnails_load_as_the_page_scrolls_not_all_at_once(front, page_browser):
    page_browser.get(front.base + "/")
    wait_loaded(page_browser, 8)
    time.sleep(1)
    first = thumbnail_requests(front)
    assert 8 <= len(first) < 300, f"{len(first)} thumbnails requested before any scrolling"
    page_browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait_loaded(page_browser, 4)
    shown = shown_thumbnails(page_browser)
    assert "small-1999.png" in [name for name, _, _ in shown]
    for name, _, pixels in shown:
        check_small(name, pixels)
    time.sleep(1)
    after = thumbnail_requests(front)
    assert "small-1999.png" in after and len(after) < 600, f"{len(after)} thumbnails requested after one scroll"
    assert "small-1000.png" not in after


def test_a_subfolder_is_a_folder_with_a_page_of_its_own(front, page_browser):
    page_browser.get(front.base + "/")
    page_browser.find_element("css selector", "li.folder a").click()
    wait_for(page_browser, "return location.pathname === '/browse/more/'")
    assert page_browser.find_element("css selector", "header p").text == "1 image, 1 folder"
    names = page_browser.execute_script("return [...document.querySelectorAll('li .name')].map(e => e.textContent)")
    assert names == ["deeper/", "inside.png"]
    assert page_browser.find_element("css selector", "nav").text == "Tessera / more"
    wait_loaded(page_browser, 1)
    [(name, _, pixels)] = shown_thumbnails(page_browser)
    assert name == "inside.png"
    check_small("small-0007.png", pixels)
    links = page_browser.execute_script("return [...document.querySelectorAll('li.image a')].map(a => a.pathname + a.search)")
    assert links == ["/view/more%2Finside.png", "/view/more%2Finside.png", "/iiif/more%2Finside.png/info.json",
                     "/iiif/more%2Finside.png/manifest.json", "/web/progressive.html?id=more%2Finside.png"]
    collection = page_browser.execute_script("return [...document.querySelectorAll('header > a')].map(a => a.pathname)")
    assert collection == ["/iiif/more/collection.json"]
