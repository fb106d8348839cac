"""Tile pyramids against libvips (dzsave, tiffsave --pyramid) as the oracle: the same trees and file names, the
same level sizes, tiles within 40 dB PSNR; the zip container, determinism across thread counts, kill and resume,
--skip-blank, and the pyramidal TIFF read back by libvips at every level."""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import iiif_prezi3
import numpy as np
import pytest
from PIL import Image

from conftest import photo, psnr, read_png, run, write_png

if shutil.which("vips") is None:
    pytest.skip("libvips-tools is not installed", allow_module_level=True)

# The same pyramid asked of each: case -> (our layout, vips --layout, options both take).
LAYOUTS = {
    "dz": ("dz", "dz", []),
    "dz-overlap2-tile256": ("dz", "dz", ["--overlap", "2", "--tile-size", "256"]),
    "dz-onetile-overlap0": ("dz", "dz", ["--depth", "onetile", "--overlap", "0"]),
    "zoomify": ("zoomify", "zoomify", []),
    "xyz": ("xyz", "google", []),
    "xyz-tile100": ("xyz", "google", ["--tile-size", "100"]),
    "iiif": ("iiif", "iiif3", []),
}
# vips-only files: its own metadata dump, and the tile XYZ viewers show where there is no tile.
VIPS_EXTRAS = {"vips-properties.xml", "blank.png"}
# Ours only: the marker that lets a later build replace the folder, and a IIIF folder's Manifest.
OURS_EXTRAS = {".tessera-pyramid", "manifest.json"}


def tessera_ok(*args):
    result = run(*args)
    assert result.returncode == 0, result.stderr
    return result


def tree(root, ignore):
    """Every file under root as {relative path: absolute path}, leaving out names in `ignore`."""
    root = Path(root)
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file() and p.name not in ignore}


def iiif_name(path, size):
    """A vips IIIF path in canonical form: region `full` for the whole image and size `max` at full size."""
    parts = path.split("/")
    if len(parts) == 5:
        width, height = size
        if parts[1] == f"0,0,{width},{height}":
            parts[1] = "full"
        if parts[2] == f"{width},{height}":
            parts[2] = "max"
    return "/".join(parts)


def pixels(path):
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def build_pair(tessera, tmp_path, source, case, size):
    """Builds the same pyramid with vips and with tessera; returns (ours, theirs) as {normalised path: file}."""
    layout, vips_layout, options = LAYOUTS[case]
    theirs_root, ours_root = tmp_path / "vips", tmp_path / "ours"
    theirs_root.mkdir()
    ours_root.mkdir()
    result = run("vips", "dzsave", source, theirs_root / "p", "--layout", vips_layout, *options)
    assert result.returncode == 0, result.stderr
    tessera_ok(tessera, "tile", source, ours_root / "p", "--layout", layout, *options)
    theirs = tree(theirs_root, VIPS_EXTRAS)
    if layout == "iiif":
        theirs = {iiif_name(path, size): file for path, file in theirs.items()}
    return tree(ours_root, OURS_EXTRAS), theirs


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Photo-like RGB PNGs of a few sizes, odd ones included."""
    folder = tmp_path_factory.mktemp("sources")
    paths = {}
    for width, height in [(1000, 700), (513, 257), (1, 300)]:
        path = folder / f"photo-{width}x{height}.png"
        write_png(path, photo(height, width, seed=width))
        paths[(width, height)] = path
    return paths


@pytest.mark.parametrize("case", sorted(LAYOUTS))
@pytest.mark.parametrize("size", [(1000, 700), (513, 257), (1, 300)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_layout_matches_vips_tree_and_pixels(tessera, tmp_path, sources, case, size):
    layout = LAYOUTS[case][0]
    ours, theirs = build_pair(tessera, tmp_path, sources[size], case, size)
    assert sorted(ours) == sorted(theirs)
    for path, file in ours.items():
        if file.suffix in (".xml", ".json", ".dzi"):
            continue
        a, b = pixels(file), pixels(theirs[path])
        assert a.shape == b.shape, path
        assert psnr(a, b) >= 40, path
    if layout == "dz":
        pattern = re.compile(r'(\w+)="(\d+)"')
        assert dict(pattern.findall(ours["p.dzi"].read_text())) == dict(pattern.findall(theirs["p.dzi"].read_text()))
    if layout == "zoomify":
        assert ours["p/ImageProperties.xml"].read_text().strip() == theirs["p/ImageProperties.xml"].read_text().strip()
    if layout == "iiif":
        info = json.loads(ours["p/info.json"].read_text())
        assert (info["width"], info["height"]) == size
        # vips 8.14 lists only scale factor 1 in info.json (a vips bug), so compare ours with the levels written:
        # each tile's scale is its region's size over its pixel size.
        written = set()
        for path in ours:
            if path.endswith("default.jpg"):
                region, pixels_size = path.split("/")[1:3]
                region_size = size if region == "full" else tuple(int(v) for v in region.split(",")[2:])
                tile_size = size if pixels_size == "max" else tuple(int(v) for v in pixels_size.split(","))
                ratio = max(region_size[0] / tile_size[0], region_size[1] / tile_size[1])
                written.add(2 ** round(np.log2(ratio)))
        assert info["tiles"][0]["scaleFactors"] == sorted(written)


@pytest.mark.parametrize("tile_format", ["jpg", "png"])
def test_a_iiif_folder_holds_a_manifest_that_leads_to_its_files(tessera, tmp_path, sources, tile_format):
    """A IIIF level-0 folder holds its image's Presentation 3.0 Manifest (read by iiif-prezi3, the IIIF community's
    models), for the viewers that open manifests: a Canvas of the image's size, painted through the folder's
    level-0 service, by a file of the folder that holds the whole image (the largest level of one tile), which is its
    thumbnail too. A pyramid of full resolution only, in several tiles, has no such file, and no Manifest."""
    base = "https://example.org/iiif/p"
    tessera_ok(tessera, "tile", sources[(1000, 700)], tmp_path / "p", "--layout", "iiif", "--tile-size", "256",
               "--format", tile_format, "--id", base)
    info = json.loads((tmp_path / "p" / "info.json").read_text())
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
    iiif_prezi3.Manifest(**manifest)
    assert manifest["id"] == base + "/manifest.json" and manifest["label"] == {"none": ["p"]}
    canvas = manifest["items"][0]
    assert (canvas["width"], canvas["height"]) == (1000, 700)
    body = canvas["items"][0]["items"][0]["body"]
    assert body["service"] == [{"id": info["id"], "type": "ImageService3", "profile": "level0"}]
    assert body["format"] == {"jpg": "image/jpeg", "png": "image/png"}[tile_format]
    assert {"width": body["width"], "height": body["height"]} in info["sizes"]
    assert manifest["thumbnail"] == [body]
    assert body["id"].startswith(base + "/")
    with Image.open(tmp_path / "p" / body["id"].removeprefix(base + "/")) as picture:
        assert picture.size == (body["width"], body["height"]) == (250, 175)

    tessera_ok(tessera, "tile", sources[(1000, 700)], tmp_path / "full", "--layout", "iiif", "--tile-size", "256",
               "--depth", "one")
    assert (tmp_path / "full" / "info.json").exists() and not (tmp_path / "full" / "manifest.json").exists()


def test_zoomify_numbers_tile_groups_as_vips_past_256_tiles(tessera, tmp_path):
    source = tmp_path / "wide.png"
    Image.fromarray(np.tile(photo(500, 500, seed=3), (6, 9, 1))[:2701, :4097]).save(source, compress_level=1)
    ours, theirs = build_pair(tessera, tmp_path, source, "zoomify", (4097, 2701))
    assert sorted(ours) == sorted(theirs)
    assert any(path.startswith("p/TileGroup1/") for path in ours)
    for path in ("p/TileGroup0/0-0-0.jpg", "p/TileGroup1/5-15-10.jpg", "p/TileGroup1/5-16-10.jpg"):
        assert psnr(pixels(ours[path]), pixels(theirs[path])) >= 40


def test_zip_container_holds_the_folder_tree_byte_for_byte(tessera, tmp_path, sources):
    source = sources[(513, 257)]
    tessera_ok(tessera, "tile", source, tmp_path / "folder" / "p", "--layout", "zoomify")
    tessera_ok(tessera, "tile", source, tmp_path / "zipped" / "p", "--layout", "zoomify", "--container", "zip")
    assert sorted(os.listdir(tmp_path / "zipped")) == ["p.zip"]
    folder = {path: file.read_bytes() for path, file in tree(tmp_path / "folder", OURS_EXTRAS).items()}
    with zipfile.ZipFile(tmp_path / "zipped" / "p.zip") as archive:
        assert archive.testzip() is None
        zipped = {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}
    assert zipped == folder


def test_an_out_ending_in_zip_makes_the_zip_unless_container_dir_is_given(tessera, tmp_path, sources):
    source = sources[(513, 257)]
    tessera_ok(tessera, "tile", source, tmp_path / "one" / "p.zip")
    assert sorted(os.listdir(tmp_path / "one")) == ["p.zip"]
    with zipfile.ZipFile(tmp_path / "one" / "p.zip") as archive:
        assert "p.dzi" in archive.namelist()
    tessera_ok(tessera, "tile", source, "-o", tmp_path / "batch" / "%s.zip")
    assert sorted(os.listdir(tmp_path / "batch")) == [os.path.basename(source).rsplit(".", 1)[0] + ".zip"]
    tessera_ok(tessera, "tile", source, tmp_path / "folder" / "p.zip", "--container", "dir")
    assert sorted(os.listdir(tmp_path / "folder")) == ["p.dzi", "p_files"]


@pytest.mark.parametrize("maker", ["libvips", "tessera", "zipfile"])
@pytest.mark.parametrize("layout", ["dz", "iiif"])
def test_a_pyramid_in_a_zip_reads_as_its_folder(tessera, tmp_path, sources, maker, layout):
    """A zipped pyramid (libvips' dzsave --container zip, deflated; ours, stored; a folder deflated by Python's
    zipfile) is read by `info` and `convert` as the folder it holds."""
    source = sources[(1000, 700)]
    folder, zipped = tmp_path / "folder", tmp_path / "p.zip"
    folder.mkdir()
    if maker == "libvips":
        vips_layout = {"dz": "dz", "iiif": "iiif3"}[layout]
        assert run("vips", "dzsave", source, folder / "p", "--layout", vips_layout).returncode == 0
        assert run("vips", "dzsave", source, zipped, "--layout", vips_layout, "--container", "zip").returncode == 0
    else:
        tessera_ok(tessera, "tile", source, folder / "p", "--layout", layout)
        if maker == "tessera":
            tessera_ok(tessera, "tile", source, tmp_path / "p", "--layout", layout, "--container", "zip")
        else:
            with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
                for path, file in tree(folder, OURS_EXTRAS).items():
                    archive.write(file, path)
    descriptor = folder / "p.dzi" if (folder / "p.dzi").exists() else folder / "p" / "info.json"
    info = json.loads(tessera_ok(tessera, "info", zipped, "--json").stdout)
    assert (info["width"], info["height"], info["format"]) == (1000, 700, {"dz": "deepZoom", "iiif": "iiif"}[layout])
    assert info["zippedDescriptor"].endswith(descriptor.name), info["zippedDescriptor"]
    text = tessera_ok(tessera, "info", zipped).stdout
    assert f", in a zip ({info['zippedDescriptor']})" in text
    assert f"tiles        {info['tileSize']['width']}x{info['tileSize']['height']}" in text
    # The size of a zip is the whole pyramid's; of a folder's descriptor, the descriptor's alone, and said so.
    assert re.search(rf"file size    .*\({zipped.stat().st_size:,} bytes\)", text) and "descriptor   " not in text
    assert "zippedDescriptor" not in json.loads(tessera_ok(tessera, "info", descriptor, "--json").stdout)
    size = descriptor.stat().st_size
    assert re.search(rf"descriptor   ({size} bytes|.*\({size:,} bytes\))\n", tessera_ok(tessera, "info", descriptor).stdout)
    for scale in ["1/1", "1/4"]:
        tessera_ok(tessera, "convert", descriptor, tmp_path / "from-folder.png", "--scale", scale)
        tessera_ok(tessera, "convert", zipped, tmp_path / "from-zip.png", "--scale", scale)
        assert np.array_equal(pixels(tmp_path / "from-zip.png"), pixels(tmp_path / "from-folder.png")), scale


def test_damaged_zips_fail_with_one_line_naming_the_file(tessera, tmp_path, sources):
    tessera_ok(tessera, "tile", sources[(513, 257)], tmp_path / "p", "--container", "zip")
    whole = (tmp_path / "p.zip").read_bytes()
    (tmp_path / "cut.zip").write_bytes(whole[:len(whole) // 2])
    with zipfile.ZipFile(tmp_path / "readme.zip", "w") as archive:
        archive.writestr("readme.txt", "no pyramid here")
    for name, message in [("cut.zip", "no zip end record"), ("readme.zip", "holds no Deep Zoom .dzi or IIIF")]:
        for command in [["info"], ["convert", tmp_path / "out.png"]]:
            result = run(tessera, command[0], tmp_path / name, *command[1:])
            assert result.returncode != 0 and message in result.stderr, (name, command, result.stderr)
            assert result.stderr.count("\n") == 1 and str(tmp_path / name) in result.stderr
        assert not (tmp_path / "out.png").exists()


def test_thread_count_does_not_change_a_byte(tessera, tmp_path, sources):
    for threads in ("1", "4"):
        tessera_ok(tessera, "tile", sources[(1000, 700)], tmp_path / threads / "p", "--threads", threads)
    one = {path: file.read_bytes() for path, file in tree(tmp_path / "1", ()).items()}
    four = {path: file.read_bytes() for path, file in tree(tmp_path / "4", ()).items()}
    assert one == four
    # A TIFF's tiles are stored in the order they finish, so compare what they decode to.
    for threads in ("1", "4"):
        tessera_ok(tessera, "tile", sources[(1000, 700)], tmp_path / f"{threads}.tif", "--layout", "tiff",
                   "--threads", threads)
    for one_page, four_page in zip(tiff_pages(tmp_path / "1.tif"), tiff_pages(tmp_path / "4.tif"), strict=True):
        assert np.array_equal(one_page, four_page)


@pytest.fixture(scope="module")
def large_source(tmp_path_factory):
    """A 6000 x 6000 photo-like PNG, big enough that a build takes a moment to kill; made by tiling a small
    photo with varying brightness so it stays quick to generate."""
    path = tmp_path_factory.mktemp("large") / "large.png"
    block = photo(500, 500, seed=7).astype(np.int16)
    rows = [np.hstack([np.clip(block + 6 * (i - j), 0, 255) for i in range(12)]) for j in range(12)]
    Image.fromarray(np.vstack(rows).astype(np.uint8)).save(path, compress_level=1)
    return path


def kill_mid_build(arguments, partial, seed):
    """Starts a build and SIGKILLs it at a seeded random moment after its first tiles appear under `partial`;
    returns True when it was killed before finishing: by the signal, with its partial output still there (a build
    that moved its output into place just before the signal had finished)."""
    rng = random.Random(seed)
    process = subprocess.Popen([str(a) for a in arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while process.poll() is None and not partial.exists():
            time.sleep(0.01)
        time.sleep(rng.uniform(0.05, 0.4))
        if process.poll() is not None:
            return False
        process.send_signal(signal.SIGKILL)
        process.wait()
        return process.returncode == -signal.SIGKILL and partial.exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("container", ["dir", "zip"])
def test_a_killed_build_resumes_to_the_same_bytes(tessera, tmp_path, large_source, container):
    reference, resumed = tmp_path / "reference", tmp_path / "resumed"
    reference.mkdir()
    resumed.mkdir()
    options = ["--container", container, "--threads", "2"]
    tessera_ok(tessera, "tile", large_source, reference / "p", *options)
    partial = resumed / (".p_files.tessera-partial" if container == "dir" else ".p.zip.tessera-partial")
    for seed in range(3):
        killed = kill_mid_build([tessera, "tile", large_source, resumed / "p", *options], partial, seed)
        if killed:
            break
        shutil.rmtree(resumed)  # finished before the kill: start again from nothing
        resumed.mkdir()
    assert killed, "every build finished before it could be killed"
    assert sorted(p.name for p in resumed.iterdir() if not p.name.startswith(".")) == [], \
        "a killed build shows nothing under the real name"
    tessera_ok(tessera, "tile", large_source, resumed / "p", *options, "--resume")
    assert not partial.exists()
    if container == "dir":
        expected = {path: file.read_bytes() for path, file in tree(reference, ()).items()}
        assert {path: file.read_bytes() for path, file in tree(resumed, ()).items()} == expected
    else:
        with zipfile.ZipFile(reference / "p.zip") as a, zipfile.ZipFile(resumed / "p.zip") as b:
            assert b.testzip() is None
            assert sorted(a.namelist()) == sorted(b.namelist())
            assert all(a.read(name) == b.read(name) for name in a.namelist())


def test_skip_blank_leaves_out_white_tiles_and_lists_them(tessera, tmp_path):
    image = np.full((700, 1000, 3), 255, dtype=np.uint8)
    image[100:300, 600:900] = photo(200, 300, seed=3)
    source = tmp_path / "mostly-white.png"
    write_png(source, image)
    tessera_ok(tessera, "tile", source, tmp_path / "out" / "p", "--skip-blank")
    files = tree(tmp_path / "out", ())
    blank = json.loads(files["p_files/blank-tiles.json"].read_text())
    assert blank, "a mostly white image has blank tiles"
    levels = 11  # ceil(log2(1000)) + 1
    for level, column, row in blank:
        assert f"p_files/{level}/{column}_{row}.jpeg" not in files
        scale = 2 ** (levels - 1 - level)
        left, top = max(0, column * 254 - 1) * scale, max(0, row * 254 - 1) * scale
        right, bottom = (column * 254 + 255) * scale, (row * 254 + 255) * scale
        assert (image[top:bottom, left:right] == 255).all(), (level, column, row)
    # Every tile of the plan is either a file or listed as blank.
    tiles = [path for path in files if path.endswith(".jpeg")]
    expected = sum(-(-(-(-1000 // 2 ** (levels - 1 - z))) // 254) * -(-(-(-700 // 2 ** (levels - 1 - z))) // 254)
                   for z in range(levels))
    assert len(tiles) + len(blank) == expected
    assert "p_files/10/0_0.jpeg" not in files and "p_files/10/2_0.jpeg" in files


def tiff_pages(path):
    """Each page's size as libvips reads it, and the page's pixels."""
    header = run("vipsheader", "-f", "n-pages", path)
    assert header.returncode == 0, header.stderr
    pages = []
    for page in range(int(header.stdout)):
        png = path.parent / f"{path.stem}-page{page}.png"
        result = run("vips", "copy", f"{path}[page={page}]", png)
        assert result.returncode == 0, result.stderr
        pages.append(read_png(png))
    return pages


def deep_zoom_levels(tessera, folder, source, tile_format):
    """Our own Deep Zoom levels in 256-pixel tiles without overlap (the TIFF's tiles, unpadded), assembled from
    their tiles, full resolution first."""
    tessera_ok(tessera, "tile", source, folder / "dz", "--format", tile_format, "--overlap", "0", "--tile-size", "256")
    levels = []
    for level in sorted((int(p.name) for p in (folder / "dz_files").iterdir() if p.name.isdigit()), reverse=True):
        tiles = {tuple(int(v) for v in p.stem.split("_")): pixels(p) for p in (folder / "dz_files" / str(level)).iterdir()}
        columns, rows = max(c for c, _ in tiles) + 1, max(r for _, r in tiles) + 1
        levels.append(np.vstack([np.hstack([tiles[(c, r)] for c in range(columns)]) for r in range(rows)]))
    return levels


@pytest.mark.parametrize("size", [(1000, 700), (513, 257)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_pyramidal_tiff_opens_in_vips_at_every_level_with_the_right_pixels(tessera, tmp_path, sources, size):
    ours, theirs = tmp_path / "ours.tif", tmp_path / "theirs.tif"
    tessera_ok(tessera, "tile", sources[size], ours, "--layout", "tiff")
    result = run("vips", "tiffsave", sources[size], theirs, "--tile", "--pyramid", "--compression", "jpeg",
                 "--tile-width", "256", "--tile-height", "256")
    assert result.returncode == 0, result.stderr
    our_pages, their_pages = tiff_pages(ours), tiff_pages(theirs)
    width, height = size
    expected = []
    while True:
        expected.append((height, width))
        if width <= 256 and height <= 256:
            break
        width, height = -(-width // 2), -(-height // 2)
    assert [page.shape[:2] for page in our_pages] == expected
    # vips halves rounding down (513 -> 256) where we round up as Deep Zoom does: compare the levels of the same
    # size with vips' and every level with our own Deep Zoom levels.
    for ours_page, theirs_page in zip(our_pages, their_pages):
        if ours_page.shape == theirs_page.shape:
            assert psnr(ours_page, theirs_page) >= 40
    assert our_pages[0].shape == their_pages[0].shape
    for ours_page, level in zip(our_pages, deep_zoom_levels(tessera, tmp_path, sources[size], "jpg")):
        assert ours_page.shape == level.shape
        assert psnr(ours_page, level) >= 40


def test_pyramidal_tiff_deflate_and_subifds_keep_pixels_exactly(tessera, tmp_path, sources):
    source = sources[(513, 257)]
    out = tmp_path / "lossless.tif"
    tessera_ok(tessera, "tile", source, out, "--layout", "tiff", "--format", "png", "--tiff-levels", "subifd")
    header = run("vipsheader", "-a", out)
    assert "n-subifds: 2" in header.stdout and "n-pages: 1" in header.stdout
    levels = deep_zoom_levels(tessera, tmp_path, source, "png")
    assert np.array_equal(levels[0], read_png(source))
    for subifd in range(-1, 2):
        copy = tmp_path / f"subifd{subifd}.png"
        result = run("vips", "copy", f"{out}[subifd={subifd}]", copy)
        assert result.returncode == 0, result.stderr
        assert np.array_equal(read_png(copy), levels[subifd + 1])


def test_pyramidal_tiff_with_webp_tiles_opens_in_vips_at_every_level(tessera, tmp_path, sources):
    out = tmp_path / "webp.tif"
    tessera_ok(tessera, "tile", sources[(1000, 700)], out, "--layout", "tiff", "--format", "webp", "-Q", "95")
    pages = tiff_pages(out)
    assert [page.shape[:2] for page in pages] == [(700, 1000), (350, 500), (175, 250)]
    for page, level in zip(pages, deep_zoom_levels(tessera, tmp_path, sources[(1000, 700)], "png")):
        assert psnr(page[..., :3], level[..., :3]) >= 38


@pytest.mark.skipif(shutil.which("openslide-show-properties") is None, reason="openslide-tools is not installed")
def test_openslide_reads_every_page_as_a_level(tessera, tmp_path, sources):
    out = tmp_path / "slide.tif"
    tessera_ok(tessera, "tile", sources[(1000, 700)], out, "--layout", "tiff")
    result = run("openslide-show-properties", out)
    assert result.returncode == 0, result.stderr
    properties = dict(re.findall(r"^(\S+): '(.*)'$", result.stdout, re.MULTILINE))
    assert properties["openslide.vendor"] == "generic-tiff"
    assert properties["openslide.level-count"] == "3"
    for level, (width, height) in enumerate([(1000, 700), (500, 350), (250, 175)]):
        assert (properties[f"openslide.level[{level}].width"], properties[f"openslide.level[{level}].height"]) \
            == (str(width), str(height))


def test_pyramidal_tiff_refuses_what_one_file_cannot_do(tessera, tmp_path, sources):
    for extra in (["--resume"], ["--skip-blank"], ["--container", "zip"], ["--tile-size", "100"]):
        result = run(tessera, "tile", sources[(513, 257)], tmp_path / "x.tif", "--layout", "tiff", *extra)
        assert result.returncode == 2, (extra, result.stderr)
    result = run(tessera, "tile", sources[(513, 257)], tmp_path / "x.zip", "--layout", "tiff")
    assert result.returncode == 2 and "give OUT as a .tif" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []
