"""`tessera serve --cache-mode index`: a never-seen plain JPEG gets its entropy index in the cache folder and no
pyramid, and every tile at every level is a region read through the index: byte-equal to the same request read by
libjpeg without a cache (`--no-cache`), and within the usual tolerance of the same request over the pyramid that
`--cache-mode pyramid` builds. A restart reuses the index; a progressive JPEG keeps its pyramid."""
import io
import subprocess
import urllib.request

import numpy as np
import pytest
from PIL import Image

import daemons
from conftest import photo

WIDTH, HEIGHT = 4200, 1100
# Tiles of every level as a IIIF viewer asks for them (region at full resolution, width at the level).
TILES = [(1, 0, 0), (1, 3840, 768), (1, 2048, 512), (2, 1024, 512), (4, 3072, 0), (8, 2048, 0), (16, 0, 0)]


def tile_path(scale, x, y):
    span = 256 * scale
    w, h = min(span, WIDTH - x), min(span, HEIGHT - y)
    return f"{x},{y},{w},{h}/{-(-w // scale)},/0/default.jpg"


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve-index")
    image = photo(HEIGHT, WIDTH, 3, seed=61).astype(np.int32)
    # Grain enough that the file is a photograph's size, so the index fits in its 0.5%.
    image += np.random.default_rng(7).integers(-24, 24, image.shape)
    pixels = Image.fromarray(np.clip(image, 0, 255).astype(np.uint8))
    pixels.save(root / "plain.jpg", quality=90)
    pixels.save(root / "progressive.jpg", quality=90, progressive=True)
    return root


class Server:
    """`tessera serve ROOT` on a free loopback port with `options`, stopped by its PID."""

    def __init__(self, tessera, root, *options):
        self.port = daemons.free_port()
        self.process = subprocess.Popen([str(tessera), "serve", str(root), "--port", str(self.port), "--quiet",
                                         *map(str, options)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True)
        self.base = f"http://127.0.0.1:{self.port}/iiif"
        daemons.wait_for(lambda: daemons.answers(f"http://127.0.0.1:{self.port}/health"), 30, "tessera serve answered")

    def tile(self, name, scale, x, y):
        with urllib.request.urlopen(f"{self.base}/{name}/{tile_path(scale, x, y)}", timeout=60) as response:
            assert response.status == 200
            return response.read()

    def stop(self):
        daemons.stop(self.process)
        return self.process.stderr.read()

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()


def pixels(jpeg):
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"), dtype=int)


def test_tiles_through_the_index_equal_libjpegs_and_the_pyramids(tessera, tmp_path, images):
    cache = tmp_path / "cache"
    with Server(tessera, images, "--cache", cache, "--cache-mode", "index") as server:
        indexed = [server.tile("plain.jpg", *tile) for tile in TILES]
        (index,) = cache.glob("*.jpegindex")
        assert not list(cache.glob("*.tif")), "index mode built a pyramid"
    with Server(tessera, images, "--no-cache") as server:
        assert [server.tile("plain.jpg", *tile) for tile in TILES] == indexed
    pyramid_cache = tmp_path / "pyramid-cache"
    with Server(tessera, images, "--cache", pyramid_cache, "--cache-mode", "pyramid") as server:
        server.tile("plain.jpg", *TILES[0])
        daemons.wait_for(lambda: [path for path in pyramid_cache.glob("*.tif") if ".preview." not in path.name], 60,
                         "the pyramid was built")
        assert list(pyramid_cache.glob("*.jpegindex")), "pyramid mode built no entropy index first"
        for tile, through_index in zip(TILES, indexed):
            assert np.abs(pixels(server.tile("plain.jpg", *tile)) - pixels(through_index)).mean() < 3, tile
    # A restart finds the index and reuses it: not built again, the tiles the same.
    stamp = index.stat().st_mtime_ns
    with Server(tessera, images, "--cache", cache, "--cache-mode", "index") as server:
        assert [server.tile("plain.jpg", *tile) for tile in TILES] == indexed
        log = server.stop()
    assert index.stat().st_mtime_ns == stamp and "entropy index" not in log, log


def test_a_progressive_jpeg_keeps_its_pyramid_in_index_mode(tessera, tmp_path, images):
    cache = tmp_path / "cache"
    with Server(tessera, images, "--cache", cache, "--cache-mode", "index") as server:
        first = server.tile("progressive.jpg", *TILES[1])
        daemons.wait_for(lambda: [path for path in cache.glob("*.tif") if ".preview." not in path.name], 60,
                         "the progressive JPEG's pyramid was built")
        assert not list(cache.glob("*.jpegindex"))
        after = server.tile("progressive.jpg", *TILES[1])
    assert np.abs(pixels(after) - pixels(first)).mean() < 3
