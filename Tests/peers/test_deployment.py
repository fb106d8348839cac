"""Several `tessera serve` instances sharing one pyramid cache folder behind nginx as load balancer, run with the
files in deploy/nginx/ as they are: nginx's configuration rendered by `render-config` from its template, each
instance started by tessera@.service's ExecStart. Under wrk, one instance killed and restarted costs no request
and each pyramid is built once; a build killed mid-way is taken over; nothing of a build outlives it; ids, health
checks and HTTP caching work through the proxy."""
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import photo, run
from daemons import Nginx, answers, free_port, stop, wait_for

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "nginx"
sys.path.insert(0, str(ROOT / "Benchmarks"))
import serve_benchmark  # noqa: E402  (tile_paths and run_wrk, as the benchmark drives wrk)

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None or shutil.which("wrk") is None,
                                reason="needs nginx and wrk (scripts/install-deps)")

LARGE = (6000, 4000)
LOCK_TIMEOUT = 2


@pytest.fixture(scope="module")
def images(tmp_path_factory, tessera):
    """A folder with a large plain JPEG (a pyramid build takes seconds) and a small pyramidal TIFF."""
    folder = tmp_path_factory.mktemp("images")
    block = photo(1000, 1500, seed=3)
    # Sixteen copies of a photo, each flipped differently, so the tiles differ without generating 24 MP of noise.
    rows = [np.concatenate([block[:, ::(-1 if (r + c) % 2 else 1)][::(-1 if r % 2 else 1)] for c in range(4)], axis=1)
            for r in range(4)]
    Image.fromarray(np.concatenate(rows, axis=0)).save(folder / "large.jpg", quality=85)
    Image.fromarray(photo(1200, 1600, seed=4)).save(folder / "map-source.jpg", quality=90)
    made = run(tessera, "tile", folder / "map-source.jpg", folder / "map.tif", "--layout", "tiff")
    assert made.returncode == 0, made.stderr
    (folder / "map-source.jpg").unlink()
    return folder


def instance_command(tessera, port, images, cache):
    """tessera@.service's ExecStart for instance `port`, with this machine's binary, images and cache."""
    unit = (DEPLOY / "tessera@.service").read_text()
    line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    fields = {"${TESSERA_IMAGES}": str(images), "${TESSERA_CACHE}": str(cache), "%i": str(port),
              "$TESSERA_OPTIONS": f"--cache-lock-timeout {LOCK_TIMEOUT}"}
    words = shlex.split(line[len("ExecStart="):])
    return [tessera] + [part for word in words[1:] for part in fields.get(word, word).split()]


class Instance:
    """One `tessera serve` as the unit starts it, its stderr appended to `log`."""

    def __init__(self, tessera, images, cache, log, port=None):
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.output = open(log, "ab")
        self.process = subprocess.Popen(instance_command(tessera, self.port, images, cache),
                                        stdout=self.output, stderr=self.output)
        try:
            wait_for(lambda: self.process.poll() is not None or answers(self.base + "/health"), 15,
                     f"tessera serve on port {self.port} did not answer")
            assert self.process.poll() is None, Path(log).read_text()
        except BaseException:
            self.stop()
            raise

    def kill(self):
        """SIGKILL: no chance to remove anything."""
        self.process.kill()
        self.process.wait()
        self.output.close()

    def stop(self):
        stop(self.process)
        self.output.close()


class Cluster:
    """`count` instances sharing `cache`, and nginx in front with deploy/nginx's configuration."""

    def __init__(self, root, tessera, images, cache, count=3, proxy_cache=True):
        self.root, self.tessera, self.images, self.cache = Path(root), tessera, images, cache
        self.logs = [self.root / f"instance-{index}.log" for index in range(count)]
        self.instances, self.nginx = [], None
        try:
            for log in self.logs:
                self.instances.append(Instance(tessera, images, cache, log))
            rendered = subprocess.run(
                [str(DEPLOY / "render-config"), *([] if proxy_cache else ["--no-proxy-cache"]), "127.0.0.1:{port}",
                 str(self.root / "nginx-cache"), *[f"127.0.0.1:{instance.port}" for instance in self.instances]],
                capture_output=True, text=True, check=True, timeout=10)
            self.nginx = Nginx(self.root / "nginx", rendered.stdout)
        except BaseException:
            self.stop()
            raise

    def restart(self, index):
        """A new instance in place of instance `index`, on its port."""
        self.instances[index] = Instance(self.tessera, self.images, self.cache, self.logs[index],
                                         port=self.instances[index].port)

    def builds(self, name):
        """How many pyramid builds of the image `name` the instances' logs report finished."""
        pattern = re.compile(r"built the pyramid of .*/" + re.escape(name) + " in ")
        return sum(len(pattern.findall(log.read_text(errors="replace"))) for log in self.logs if log.exists())

    def stop(self):
        if self.nginx:
            self.nginx.stop()
        for instance in self.instances:
            if instance.process.poll() is None:
                instance.stop()


def leftovers(cache):
    """What in the cache folder is not a finished pyramid or index: temporary files, locks."""
    return sorted(name for name in os.listdir(cache) if name.startswith(".") or name.endswith(".lock")
                  or ".lock." in name)


def get(url, headers=None, timeout=30):
    """(status, headers, body) of a GET, whatever the status."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def full_pyramid(cache):
    """The finished full pyramid in the cache folder, or None."""
    pyramids = [name for name in os.listdir(cache) if name.endswith(".tif") and not name.startswith(".")
                and not name.endswith(".preview.tif")]
    return pyramids[0] if pyramids else None


def test_ids_health_and_http_caching_through_nginx(tmp_path, tessera, images):
    cluster = Cluster(tmp_path, tessera, images, tmp_path / "cache")
    try:
        base = cluster.nginx.base
        status, headers, body = get(base + "/health")
        assert status == 200 and body == b'{"status":"ok"}\n' and headers["Cache-Control"] == "no-store"
        status, _, body = get(base + "/iiif/map.tif/info.json", {"Host": "maps.example.org"})
        assert status == 200 and b'"id" : "http://maps.example.org/iiif/map.tif"' in body
        tile = "/iiif/map.tif/0,0,256,256/256,/0/default.jpg"
        first = get(base + tile)
        assert first[0] == 200 and first[1]["Cache-Control"] == "public, max-age=86400"
        assert first[1]["X-Cache-Status"] == "MISS"
        # nginx files an answer in its cache just after it has sent it: a request that beats the filing (another
        # worker process took it, on a busy machine) is answered as a MISS, and the next finds it.
        again, deadline = get(base + tile), time.monotonic() + 10
        while again[1]["X-Cache-Status"] != "HIT" and time.monotonic() < deadline:
            time.sleep(0.05)
            again = get(base + tile)
        assert again[1]["X-Cache-Status"] == "HIT" and again[2] == first[2]
        tag = first[1]["ETag"]
        # Every instance tags the tile alike, so the proxy's and a CDN's copy stays valid whichever answered.
        assert {get(instance.base + tile)[1]["ETag"] for instance in cluster.instances} == {tag}
        status, headers, body = get(base + tile, {"If-None-Match": tag})
        assert status == 304 and body == b"" and headers["ETag"] == tag
        status, _, _ = get(cluster.instances[0].base + tile, {"If-None-Match": tag})
        assert status == 304
        page = get(base + "/", {"X-Forwarded-Prefix": "/ignored"})[2].decode()
        assert 'href="/iiif/map.tif/info.json"' in page, "nginx sets the forwarded headers, not the client"
    finally:
        cluster.stop()
    assert leftovers(tmp_path / "cache") == []


def test_one_instance_killed_under_load_loses_no_request(tmp_path, tessera, images):
    cache = tmp_path / "cache"
    cluster = Cluster(tmp_path, tessera, images, cache, proxy_cache=False)
    try:
        assert get(cluster.nginx.base + "/iiif/map.tif/info.json")[0] == 200
        paths = serve_benchmark.tile_paths(*LARGE)
        result = {}
        load = threading.Thread(target=lambda: result.update(wrk=serve_benchmark.run_wrk(
            cluster.nginx.base + "/iiif/large.jpg/", paths, 256, 30, str(tmp_path), timeout=30)))
        started = time.monotonic()
        load.start()
        time.sleep(10)
        # The instance building the pyramid if one is (its PID is in the lock), else the first.
        locks = list(cache.glob("*.lock"))
        owner = int(locks[0].read_text().split()[1]) if locks else None
        victim = next((index for index, instance in enumerate(cluster.instances) if instance.process.pid == owner), 0)
        cluster.instances[victim].kill()
        time.sleep(max(0, 20 - (time.monotonic() - started)))
        cluster.restart(victim)
        load.join(timeout=60)
        assert not load.is_alive(), "wrk did not finish"
        rate, _, p99, errors, socket_errors = result["wrk"]
        print(f"wrk through nginx: {rate:.0f} tiles/s, p99 {p99}; killed instance {victim}"
              f" ({'the builder' if owner else 'no build running'})")
        assert rate > 0 and errors == 0 and socket_errors == "none", (
            f"{errors} non-2xx, socket errors {socket_errors}\n{cluster.nginx.errors()}")
        wait_for(lambda: full_pyramid(cache) is not None and not list(cache.glob("*.lock")), 90,
                 "the large image's pyramid was not built")
        assert cluster.builds("large.jpg") == 1, [log.read_text()[-2000:] for log in cluster.logs]
        assert cluster.builds("map.tif") == 0
    finally:
        cluster.stop()
    assert leftovers(cache) == []


def building(tessera, images, cache, log, started, failure):
    """An instance asked for the large image's info.json, returned once `started()` says its pyramid build is under
    way (`failure` is the message when it is not within a minute); stopped if it is not."""
    instance = Instance(tessera, images, cache, log)
    try:
        assert get(instance.base + "/iiif/large.jpg/info.json")[0] == 200
        wait_for(started, 60, failure)
    except BaseException:
        instance.stop()
        raise
    return instance


def test_a_build_killed_mid_way_is_taken_over_and_built_once(tmp_path, tessera, images):
    cache = tmp_path / "cache"
    building(tessera, images, cache, tmp_path / "first.log",
             lambda: any(".preview." not in name for name in leftovers(cache) if name.startswith(".")),
             "the full build's temporary file did not appear").kill()
    dead = leftovers(cache)
    assert any(name.endswith(".lock") for name in dead) and any(name.startswith(".") for name in dead)
    second = Instance(tessera, images, cache, tmp_path / "second.log")
    try:
        tile = "/iiif/large.jpg/2048,1024,256,256/256,/0/default.jpg"
        # Served by region reads while the dead build's lock is fresh, then taken over and built.
        def built():
            assert get(second.base + tile)[0] == 200
            return full_pyramid(cache) is not None and leftovers(cache) == []
        wait_for(built, 90, "the pyramid was not rebuilt")
        assert re.findall("built the pyramid of", (tmp_path / "second.log").read_text()) == ["built the pyramid of"]
        assert "built the pyramid of" not in (tmp_path / "first.log").read_text()
        status, _, body = get(second.base + tile)
        assert status == 200
        served = np.asarray(Image.open(io.BytesIO(body)).convert("RGB"), dtype=np.float64)
        expected = np.asarray(Image.open(images / "large.jpg").crop((2048, 1024, 2304, 1280)), dtype=np.float64)
        assert np.abs(served - expected).mean() < 3
    finally:
        second.stop()
    assert leftovers(cache) == []


def test_an_instance_stopped_mid_build_leaves_nothing_behind(tmp_path, tessera, images):
    cache = tmp_path / "cache"
    building(tessera, images, cache, tmp_path / "instance.log",
             lambda: any(name.endswith(".lock") for name in leftovers(cache)), "no build started").stop()
    assert leftovers(cache) == []
