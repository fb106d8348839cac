"""`tessera serve` on a loopback port, checked as IIIF clients see it: every parameter form against images
computed with Pillow from the same source, the headers (CORS, JSON-LD, Link, ETag and 304, HEAD, OPTIONS),
the errors, path safety, and the official IIIF validator at level 2."""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import iiif_prezi3
import numpy as np
import pytest
from PIL import Image

from conftest import photo, psnr
from daemons import wait_for

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR_IMAGE = Path(__file__).parent / "data" / "67352ccc-d1b0-11e1-89ae-279075081939.png"
# iiif-validator installs its command beside the interpreter running the tests (.venv/bin).
VALIDATOR = Path(sys.executable).parent / "iiif-validate.py"
SOURCE = photo(300, 400, 3, seed=51)
BIG = photo(900, 1100, 3, seed=52)
ROOTS = {}


def server_root(base):
    """The folder the server at `base` serves."""
    return ROOTS[base]


@pytest.fixture(scope="module")
def server(tessera, tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    (root / "maps").mkdir()
    Image.fromarray(SOURCE).save(root / "maps" / "photo.png")
    Image.fromarray(SOURCE).save(root / "photo.jpg", quality=95)
    (root / "notes.jpg").write_text("not an image\n")
    # A TIFF of 32-bit floating-point samples (an elevation model's kind), which Tessera does not read.
    Image.fromarray(SOURCE[:, :, 0].astype(np.float32) / 255).save(root / "float.tif")
    shutil.copy(VALIDATOR_IMAGE, root / VALIDATOR_IMAGE.name)
    big = tmp_path_factory.mktemp("big") / "big.png"
    Image.fromarray(BIG).save(big)
    assert subprocess.run([tessera, "tile", big, root / "ours.tif", "--layout", "tiff", "--tile-size", "256"],
                          capture_output=True).returncode == 0
    assert subprocess.run(["vips", "tiffsave", big, root / "vips.tif", "--tile", "--pyramid", "--compression", "jpeg",
                           "--tile-width", "256", "--tile-height", "256"], capture_output=True).returncode == 0
    for name, options in [("vdz", ["--overlap", "0", "--tile-size", "256"]), ("vdz1", []),
                          ("viiif", ["--layout", "iiif3", "--tile-size", "256"]),
                          ("vzip.zip", ["--overlap", "0", "--tile-size", "256", "--container", "zip"])]:
        assert subprocess.run(["vips", "dzsave", big, root / name, *options], capture_output=True).returncode == 0
    assert subprocess.run([tessera, "tile", big, root / "ours", "--layout", "iiif", "--tile-size", "256", "--container",
                           "zip"], capture_output=True).returncode == 0
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.png").write_bytes((root / "maps" / "photo.png").read_bytes())
    os.symlink(outside / "secret.png", root / "escape.png")
    process = subprocess.Popen([tessera, "serve", str(root), "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    banner = process.stdout.readline()
    assert "serving" in banner, process.stderr.read()
    base = banner.split(" at ")[1].split()[0].rstrip("/")
    ROOTS[base] = root
    yield base
    process.terminate()
    assert process.wait(timeout=10) == 0


def fetch(url, method="GET", headers=None):
    """status, headers (lower-case names), body."""
    request = urllib.request.Request(url, method=method, headers=headers or {})
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def image_at(url):
    status, headers, body = fetch(url)
    assert status == 200, (url, status, body[:200])
    return Image.open(io.BytesIO(body)), headers


def expected(region, size, rotation=0, mirror=False, quality="default"):
    """The answer computed with Pillow from the source array."""
    x, y, w, h = region
    image = Image.fromarray(SOURCE[y:y + h, x:x + w]).resize(size, Image.LANCZOS)
    if mirror:
        image = image.transpose(Image.FLIP_LEFT_RIGHT)
    image = image.rotate(-rotation, expand=True)
    if quality in ("gray", "bitonal"):
        image = image.convert("L")
    if quality == "bitonal":
        image = image.point(lambda v: 255 if v >= 128 else 0)
    return np.asarray(image)


@pytest.mark.parametrize("path,region,size,rotation,mirror,quality", [
    ("full/max/0/default.png", (0, 0, 400, 300), (400, 300), 0, False, "default"),
    ("50,40,200,100/max/0/default.png", (50, 40, 200, 100), (200, 100), 0, False, "default"),
    ("pct:25,50,50,50/max/0/default.png", (100, 150, 200, 150), (200, 150), 0, False, "default"),
    ("square/max/0/default.png", (50, 0, 300, 300), (300, 300), 0, False, "default"),
    ("350,250,100,100/max/0/default.png", (350, 250, 50, 50), (50, 50), 0, False, "default"),
    ("full/200,/0/default.png", (0, 0, 400, 300), (200, 150), 0, False, "default"),
    ("full/,150/0/default.png", (0, 0, 400, 300), (200, 150), 0, False, "default"),
    ("full/pct:50/0/default.png", (0, 0, 400, 300), (200, 150), 0, False, "default"),
    ("full/100,100/0/default.png", (0, 0, 400, 300), (100, 100), 0, False, "default"),
    ("full/!100,100/0/default.png", (0, 0, 400, 300), (100, 75), 0, False, "default"),
    ("full/^800,/0/default.png", (0, 0, 400, 300), (800, 600), 0, False, "default"),
    ("full/^!1000,450/0/default.png", (0, 0, 400, 300), (600, 450), 0, False, "default"),
    ("full/max/90/default.png", (0, 0, 400, 300), (400, 300), 90, False, "default"),
    ("full/max/180/default.png", (0, 0, 400, 300), (400, 300), 180, False, "default"),
    ("full/max/270/default.png", (0, 0, 400, 300), (400, 300), 270, False, "default"),
    ("full/max/!0/default.png", (0, 0, 400, 300), (400, 300), 0, True, "default"),
    ("full/max/!90/default.png", (0, 0, 400, 300), (400, 300), 90, True, "default"),
    ("full/max/0/gray.png", (0, 0, 400, 300), (400, 300), 0, False, "gray"),
    ("full/max/0/bitonal.png", (0, 0, 400, 300), (400, 300), 0, False, "bitonal"),
    ("full/max/0/color.png", (0, 0, 400, 300), (400, 300), 0, False, "default"),
])
def test_every_parameter_form_gives_the_expected_pixels(server, path, region, size, rotation, mirror, quality):
    image, headers = image_at(f"{server}/maps%2Fphoto.png/{path}")
    assert headers["content-type"] == "image/png"
    ours = np.asarray(image)
    want = expected(region, size, rotation, mirror, quality)
    assert ours.shape == want.shape
    if quality == "bitonal":
        assert np.mean(ours != want) < 0.01
    else:
        assert psnr(ours, want) >= 35, path


def test_prebuilt_pyramids_are_listed_and_served_as_images(server):
    """Deep Zoom and IIIF pyramids by libvips, in folders and in a zip, and ours in a zip."""
    index = fetch(f"{server.rsplit('/', 1)[0]}/")[2].decode()
    names = re.findall(r'class="name"[^>]*>([^<]*)</', index)
    for name in ["vdz.dzi", "vdz1.dzi", "viiif", "vzip.zip", "ours.zip"]:
        assert name in names
    assert not [name for name in names if "_files" in name or "default" in name], names
    for identifier in ["vdz", "vdz1.dzi", "viiif", "vzip", "ours.zip"]:
        info = json.loads(fetch(f"{server}/{identifier}/info.json")[2])
        assert (info["width"], info["height"]) == (1100, 900), identifier
        image, _ = image_at(f"{server}/{identifier}/100,200,500,300/250,/0/default.png")
        want = np.asarray(Image.fromarray(BIG[200:500, 100:600]).resize((250, 150), Image.LANCZOS))
        assert psnr(np.asarray(image), want) >= 28, identifier


@pytest.mark.parametrize("identifier,region,stored", [
    ("vdz", "256,0,256,256", "vdz_files/11/1_0.jpeg"),
    ("vdz", "512,0,512,512", "vdz_files/10/1_0.jpeg"),
    ("viiif", "256,0,256,256", "viiif/256,0,256,256/256,256/0/default.jpg"),
    ("vzip.zip", "512,0,512,512", "vzip.zip:vzip/vzip_files/10/1_0.jpeg"),
    ("ours.zip", "256,256,256,256", "ours.zip:ours/256,256,256,256/256,256/0/default.jpg"),
])
def test_tiles_of_prebuilt_pyramids_are_sent_as_stored(server, identifier, region, stored):
    """Stored tiles from a folder, or from a zip (`archive:entry`: libvips' deflated, or Tessera's stored)."""
    status, headers, body = fetch(f"{server}/{identifier}/{region}/256,/0/default.jpg")
    assert status == 200 and headers["content-type"] == "image/jpeg"
    archive, _, entry = stored.rpartition(":")
    if archive:
        with zipfile.ZipFile(server_root(server) / archive) as opened:
            assert body == opened.read(entry)
    else:
        assert body == (server_root(server) / stored).read_bytes()


@pytest.mark.parametrize("format,media", [("jpg", "image/jpeg"), ("png", "image/png"), ("webp", "image/webp")])
def test_formats(server, format, media):
    image, headers = image_at(f"{server}/photo.jpg/full/max/0/default.{format}")
    assert headers["content-type"] == media and image.size == (400, 300)


def test_info_json_is_json_ld_with_id_from_the_host(server):
    status, headers, body = fetch(f"{server}/maps%2Fphoto.png/info.json")
    assert status == 200
    assert headers["content-type"] == 'application/ld+json;profile="http://iiif.io/api/image/3/context.json"'
    assert headers["access-control-allow-origin"] == "*"
    info = json.loads(body)
    assert info["id"] == f"{server}/maps%2Fphoto.png"
    assert (info["width"], info["height"], info["profile"], info["type"]) == (400, 300, "level2", "ImageService3")
    assert info["tiles"][0]["scaleFactors"] == [1, 2]
    assert "webp" in info["extraFormats"] and info["maxArea"] > 0


def test_base_uri_redirects_to_info_json(server):
    status, headers, _ = fetch(f"{server}/photo.jpg")
    assert status == 303 and headers["location"] == f"{server}/photo.jpg/info.json"


def test_identifiers_may_leave_out_the_extension(server):
    assert fetch(f"{server}/photo/info.json")[0] == 200


def test_caching_headers_and_conditional_requests(server):
    url = f"{server}/photo.jpg/full/100,/0/default.jpg"
    status, headers, body = fetch(url)
    assert status == 200 and headers["etag"] and headers["last-modified"] and "max-age" in headers["cache-control"]
    assert headers["link"].startswith(f"<{server}/photo.jpg/full/100,75/0/default.jpg>;rel=\"canonical\"")
    assert fetch(url, headers={"If-None-Match": headers["etag"]})[0] == 304
    assert fetch(url, headers={"If-Modified-Since": headers["last-modified"]})[0] == 304
    head = fetch(url, method="HEAD")
    assert head[0] == 200 and head[2] == b"" and int(head[1]["content-length"]) == len(body)


def test_connections_are_kept_alive(server):
    import http.client
    host_port = server.split("://")[1].split("/")[0]
    connection = http.client.HTTPConnection(host_port, timeout=10)
    sockets = []
    for path in ["photo.jpg/info.json", "photo.jpg/full/64,/0/default.jpg", "photo.jpg/info.json"]:
        connection.request("GET", "/" + server.split("/", 3)[3] + "/" + path)
        response = connection.getresponse()
        response.read()
        assert response.status == 200
        assert (response.getheader("connection") or "").lower() != "close"
        sockets.append(connection.sock)
    assert sockets[0] is sockets[1] is sockets[2]
    connection.close()


@pytest.mark.parametrize("name", ["ours.tif", "vips.tif"])
def test_stored_tiles_of_a_pyramidal_tiff_are_sent_as_they_are(server, name):
    status, _, body = fetch(f"{server}/{name}/info.json")
    assert status == 200 and json.loads(body)["tiles"][0]["width"] == 256
    stored = (Path(server_root(server)) / name).read_bytes()
    for path in ["512,256,256,256/256,256", "512,0,512,512/256,256"]:
        status, headers, tile = fetch(f"{server}/{name}/{path}/0/default.jpg")
        assert status == 200 and headers["content-type"] == "image/jpeg"
        # Our TIFF keeps whole JPEGs; libvips' shares its tables, so only the part after the tables is stored.
        assert tile[-4000:] in stored, path
        rendered, _ = image_at(f"{server}/{name}/{path}/0/default.png")
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(tile)).convert("RGB")), np.asarray(rendered.convert("RGB")))
    # A tile cut by the right or bottom edge is the stored (padded) tile cropped at its exact size without
    # decoding: its quantisation tables are the stored tiles' (quality 75), not those of a render (85).
    whole = Image.open(io.BytesIO(fetch(f"{server}/{name}/512,256,256,256/256,/0/default.jpg")[2]))
    for path, size in [("1024,0,76,256/76,", (76, 256)), ("0,768,256,132/256,", (256, 132)),
                       ("1024,512,76,388/38,", (38, 194))]:
        edge, _ = image_at(f"{server}/{name}/{path}/0/default.jpg")
        assert edge.size == size, path
        assert edge.quantization == whole.quantization, path
        rendered, _ = image_at(f"{server}/{name}/{path}/0/default.png")
        difference = np.abs(np.asarray(edge.convert("RGB"), dtype=int) - np.asarray(rendered.convert("RGB"), dtype=int))
        assert difference.mean() < 1, path


def test_options_answers_cors_preflight(server):
    status, headers, _ = fetch(f"{server}/photo.jpg/info.json", method="OPTIONS")
    assert status == 204 and headers["access-control-allow-origin"] == "*"
    assert "GET" in headers["access-control-allow-methods"]


@pytest.mark.parametrize("path,status", [
    ("photo.jpg/full/max/0/default.tif", 415), ("photo.jpg/full/max/0/default.xyz", 400),
    ("photo.jpg/full/max/45/default.jpg", 501), ("photo.jpg/full/max/0/fancy.jpg", 400),
    ("photo.jpg/full/800,/0/default.jpg", 400), ("photo.jpg/500,500,10,10/max/0/default.jpg", 400),
    ("photo.jpg/full/0,/0/default.jpg", 400), ("photo.jpg/full/max/0", 400), ("missing.jpg/info.json", 404),
    ("notes.jpg/info.json", 404), ("float.tif/info.json", 501), ("float.tif/full/max/0/default.jpg", 501),
])
def test_errors_follow_the_spec(server, path, status):
    got, headers, _ = fetch(f"{server}/{path}")
    assert got == status and headers["access-control-allow-origin"] == "*"


@pytest.mark.parametrize("identifier", [
    "..%2F..%2Fetc%2Fpasswd", "%2e%2e%2F%2e%2e%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "escape.png",
    "maps%2F..%2F..%2Foutside%2Fsecret.png", "photo.jpg%00.png", "a" * 2000, "maps%2F%2E%2E%2Fphoto.jpg",
])
def test_nothing_outside_the_root_is_served(server, identifier):
    assert fetch(f"{server}/{identifier}/info.json")[0] == 404
    assert fetch(f"{server}/{identifier}/full/max/0/default.jpg")[0] == 404


def test_the_iiif_validator_passes_at_level_2(server):
    host_port, prefix = server.split("://")[1].split("/", 1)
    result = subprocess.run([VALIDATOR, "-s", host_port, "-p", prefix, "-i", VALIDATOR_IMAGE.stem,
                             "--version=3.0", "--level", "2"], capture_output=True, text=True, timeout=300)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-3000:]
    assert "Done (33 tests, 0 failures)" in report


def test_manifests_and_collections_are_iiif_presentation_3_that_lead_to_every_image(server):
    """The root's Collection and each folder's, read by iiif-prezi3 (the IIIF community's Presentation 3.0 models,
    which reject a document of the wrong shape), lead to every image the front page lists; each Manifest's Canvas
    has its image's size, and its painting body, service and thumbnail are the server's. A file that is not an
    image fails as its info.json does."""
    manifests, collections = [], [f"{server}/collection.json"]
    while collections:
        status, headers, body = fetch(collections.pop())
        assert status == 200 and "presentation/3" in headers["content-type"], body
        iiif_prezi3.Collection(**json.loads(body))
        for item in json.loads(body)["items"]:
            (collections if item["type"] == "Collection" else manifests).append(item["id"])
    names = re.findall(r'class="name"[^>]*>([^<]*)</', fetch(f"{server.rsplit('/', 1)[0]}/")[2].decode())
    images = [name for name in names if not name.endswith("/")]
    assert sorted(url.split("/")[-2] for url in manifests) == sorted(images + ["maps%2Fphoto.png"])
    for url in manifests:
        status, headers, body = fetch(url)
        service = url.removesuffix("/manifest.json")
        if status != 200:
            assert fetch(service + "/info.json")[0] == status, url
            continue
        assert "presentation/3" in headers["content-type"], url
        iiif_prezi3.Manifest(**json.loads(body))
        manifest = json.loads(body)
        canvas = manifest["items"][0]
        painting = canvas["items"][0]["items"][0]["body"]
        assert painting["service"][0]["id"] == service
        info = json.loads(fetch(service + "/info.json")[2])
        assert (canvas["width"], canvas["height"]) == (info["width"], info["height"]), url
        thumbnail = manifest["thumbnail"][0]
        image, _ = image_at(thumbnail["id"])
        assert image.size == (thumbnail["width"], thumbnail["height"]), url
    assert fetch(f"{server}/nowhere/collection.json")[0] == 404


def thread_heaps(pid):
    """The heaps glibc made for threads of process `pid` besides the main one: each an anonymous mapping at a
    64 MiB boundary, readable and writable where it is used and inaccessible after that up to the next boundary."""
    regions = []
    with open(f"/proc/{pid}/maps") as file:
        for line in file:
            fields = line.split()
            start, end = (int(address, 16) for address in fields[0].split("-"))
            regions.append((start, end, fields[1], len(fields) > 5))
    heap = 64 << 20
    return sum(1 for (start, end, mode, named), following in zip(regions, regions[1:] + [(0, 0, "", True)])
               if not named and mode == "rw-p" and start % heap == 0
               and (end == start + heap or (following[0] == end and following[2] == "---p"
                                            and following[1] == start + heap)))


def test_every_thread_of_a_server_shares_the_one_heap_its_warm_up_grew(tessera, tmp_path):
    """glibc fixes how many heaps its threads may have when a second thread first allocates, so `serve` sets its
    limit of one before the signal handlers' thread starts: its polling threads and workers then render in the heap
    the start-up warm-up grew. Set later, each polling thread got a heap of its own, and a new server's first
    renders each faulted in 20-70 pages of it."""
    big = tmp_path / "big.png"
    Image.fromarray(BIG).save(big)
    root = tmp_path / "served"
    root.mkdir()
    assert subprocess.run([tessera, "tile", big, root / "ours.tif", "--layout", "tiff", "--tile-size", "256"],
                          capture_output=True).returncode == 0
    process = subprocess.Popen([tessera, "serve", str(root), "--port", "0", "--quiet", "--no-cache"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = process.stdout.readline()
        assert "serving" in banner, process.stderr.read()
        base = banner.split(" at ")[1].split()[0].rstrip("/")
        for path in ["info.json", "full/125,/0/default.jpg", "768,0,132,512/66,262/0/default.jpg",
                     "0,0,900,1100/450,/0/default.png"]:
            assert fetch(f"{base}/ours.tif/{path}")[0] == 200, path
        assert thread_heaps(process.pid) == 0
    finally:
        process.terminate()
        process.wait(timeout=10)


def metric(base, name):
    """The value of the metric `name` (without labels) of the server whose IIIF base is `base`, as an integer."""
    metrics = fetch(base.rsplit("/", 1)[0] + "/metrics")[2].decode()
    return int(float(re.search(rf"^{name} (\S+)$", metrics, re.M).group(1)))


def serve_vips_pyramid(tessera, tmp_path, *options):
    """A `tessera serve` of a folder holding a libvips pyramidal TIFF (vips.tif) and a plain PNG, with `options`,
    and its IIIF base URL."""
    big = tmp_path / "big.png"
    Image.fromarray(BIG).save(big)
    root = tmp_path / "served"
    root.mkdir()
    assert subprocess.run(["vips", "tiffsave", big, root / "vips.tif", "--tile", "--pyramid", "--compression", "jpeg",
                           "--tile-width", "256", "--tile-height", "256"], capture_output=True).returncode == 0
    Image.fromarray(SOURCE).save(root / "plain.png")
    process = subprocess.Popen([tessera, "serve", str(root), "--port", "0", "--quiet", "--no-cache", *options],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    banner = process.stdout.readline()
    if "serving" not in banner:
        process.kill()
        pytest.fail(process.communicate()[1])
    return process, banner.split(" at ")[1].split()[0].rstrip("/")


def test_a_thumbnail_after_info_json_finds_its_level_decoded(tessera, tmp_path):
    """Once info.json is sent, the server decodes the pyramid's smallest level (one stored tile) in idle time, as
    viewers ask for a thumbnail next: the thumbnails then decode nothing (/metrics: the level's planes held before
    either was asked for, and found by both, or waited for while being made; the decode made ahead is no miss, no
    client having asked for it). Nothing is opened before the first request here (`--open-at-start 0`)."""
    process, base = serve_vips_pyramid(tessera, tmp_path, "--open-at-start", "0")
    try:
        assert metric(base, "tessera_open_images") == 0
        assert metric(base, "tessera_thumbnail_planes_bytes") == 0
        assert fetch(f"{base}/vips.tif/info.json")[0] == 200
        wait_for(lambda: metric(base, "tessera_thumbnail_planes_bytes") > 0, 10,
                 "the smallest level decoded after info.json")
        assert metric(base, "tessera_thumbnail_planes_misses_total") == 0
        for width in [90, 125]:
            status, _, body = fetch(f"{base}/vips.tif/full/{width},/0/default.jpg")
            assert status == 200 and Image.open(io.BytesIO(body)).width == width
        assert metric(base, "tessera_thumbnail_planes_misses_total") == 0
        assert metric(base, "tessera_thumbnail_planes_hits_total") \
            + metric(base, "tessera_thumbnail_planes_coalesced_total") == 2
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_catalogs_pyramids_are_open_before_the_first_request(tessera, tmp_path):
    """By default `serve` opens the pyramids among the catalog's first images before it listens, and decodes their
    smallest levels: by its first request, the pyramid is open and its level held (a plain image is not opened),
    and its thumbnails decode nothing."""
    process, base = serve_vips_pyramid(tessera, tmp_path)
    try:
        assert metric(base, "tessera_open_images") == 1
        assert metric(base, "tessera_thumbnail_planes_bytes") > 0
        for width in [90, 125]:
            status, _, body = fetch(f"{base}/vips.tif/full/{width},/0/default.jpg")
            assert status == 200 and Image.open(io.BytesIO(body)).width == width
        assert metric(base, "tessera_thumbnail_planes_misses_total") == 0
        assert metric(base, "tessera_thumbnail_planes_hits_total") == 2
        assert fetch(f"{base}/plain.png/info.json")[0] == 200
        assert metric(base, "tessera_open_images") == 2
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_started_server_makes_its_pyramids_edge_renders_before_any_request(tessera, tmp_path):
    """Once it listens, `serve` makes in idle time the renders that the first views of each pyramid it opened will
    ask for (those the image's first info.json would foresee), before any request: a viewer's request for one then
    finds it made (/metrics: a hit, no miss), with the bytes a server rendering it on request sends."""
    big, root = tmp_path / "big.png", tmp_path / "served"
    Image.fromarray(photo(1107, 1533, 3, seed=54)).save(big)
    root.mkdir()
    assert subprocess.run(["vips", "tiffsave", big, root / "vips.tif", "--tile", "--pyramid", "--compression", "jpeg",
                           "--tile-width", "256", "--tile-height", "256"], capture_output=True).returncode == 0
    # The right column of the 384 x 277 level, asked 128 pixels wide as viewers round: libvips stored 127.
    edge = "vips.tif/1024,0,509,1024/128,/0/default.jpg"
    bodies = []
    for options in [[], ["--open-at-start", "0"]]:
        process = subprocess.Popen([tessera, "serve", str(root), "--port", "0", "--quiet", "--no-cache", *options],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            base = process.stdout.readline().split(" at ")[1].split()[0].rstrip("/")
            if not options:
                wait_for(lambda: metric(base, "tessera_response_cache_bytes") > 0, 10, "the edge renders made")
            status, _, body = fetch(f"{base}/{edge}")
            assert status == 200 and Image.open(io.BytesIO(body)).size == (128, 258)
            hits, misses = (metric(base, f"tessera_response_cache_{name}_total") for name in ["hits", "misses"])
            assert (hits, misses) == ((1, 0) if not options else (0, 1)), options
            bodies.append(body)
        finally:
            process.terminate()
            process.wait(timeout=10)
    assert bodies[0] == bodies[1]


def test_a_large_plain_image_is_served_from_a_pyramid_built_in_the_cache(tessera, tmp_path):
    root, cache = tmp_path / "images", tmp_path / "cache"
    root.mkdir()
    Image.fromarray(photo(1100, 4200, 3, seed=53)).save(root / "wide.jpg", quality=90)
    process = subprocess.Popen([tessera, "serve", str(root), "--port", "0", "--cache", str(cache), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = process.stdout.readline().split(" at ")[1].split()[0].rstrip("/")
        tile = f"{base}/wide.jpg/512,256,256,256/256,/0/default.jpg"
        before = fetch(tile)
        assert before[0] == 200  # answered by a region read while the pyramid builds
        for _ in range(300):
            built = [path for path in cache.glob("*.tif") if not path.name.endswith(".preview.tif")]
            if built:
                break
            time.sleep(0.1)
        assert built, "no pyramid appeared in the cache"
        for _ in range(50):
            status, _, after = fetch(tile)
            if after[-4000:] in built[0].read_bytes():
                break
            time.sleep(0.1)
        assert status == 200 and after[-4000:] in built[0].read_bytes()
        assert np.abs(np.asarray(Image.open(io.BytesIO(after)), dtype=int)
                      - np.asarray(Image.open(io.BytesIO(before[2])), dtype=int)).mean() < 3
        assert json.loads(fetch(f"{base}/wide.jpg/info.json")[2])["width"] == 4200
    finally:
        process.terminate()
        process.wait(timeout=10)
