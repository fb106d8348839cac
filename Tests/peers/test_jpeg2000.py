"""JPEG 2000 read by Tessera against opj_decompress (OpenJPEG's own tool): the conformance suite's codestreams and
JP2 files (the few in data/jpeg2000/, all of them when JPEG2000_CONFORMANCE names the suite's folder) at full
resolution, at every reduction and in regions, and files made by opj_compress (16-bit, alpha, tiled, lossy);
corrupt and truncated files fail with one line naming the file.

The reference is opj_decompress's PGX output, one file per component as OpenJPEG decoded it (its palette, channel
definitions and sYCC conversion applied). Tessera's pixels follow from it by a fixed rule, written here once:
the first colour component (gray) or three (RGB), alpha from the last of two or four, subsampled components
repeating their nearest sample, signed samples offset, precisions scaled to 8 bits (up to 8) or 16 by
v * (2^out - 1) / (2^in - 1), rounded."""
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import photo, read_png, run, write_png

DATA = Path(__file__).parent / "data" / "jpeg2000"
SUITE = os.environ.get("JPEG2000_CONFORMANCE")
# Files with an ICC profile: opj_decompress applies it through lcms, Tessera keeps the samples as stored.
ICC = {"file5.jp2", "file7.jp2", "file8.jp2"}

pytestmark = pytest.mark.skipif(shutil.which("opj_decompress") is None, reason="needs libopenjp2-tools")


def conformance_files():
    folder = Path(SUITE) if SUITE else DATA
    return sorted(p for p in folder.iterdir() if p.suffix in (".j2k", ".j2c", ".jp2") and p.name not in ICC)


def read_pgx(path):
    """One PGX component: (samples as int64, precision, signed)."""
    data = path.read_bytes()
    header = re.match(rb"PG\s+(ML|LM)\s*([+-]?)\s*(\d+)\s+(\d+)\s+(\d+)\s", data)
    order, sign, precision, width, height = header.groups()
    precision, width, height = int(precision), int(width), int(height)
    size = 1 if precision <= 8 else 2 if precision <= 16 else 4
    kind = {1: "i1", 2: "i2", 4: "i4"}[size] if sign == b"-" else {1: "u1", 2: "u2", 4: "u4"}[size]
    dtype = np.dtype(kind).newbyteorder(">" if order == b"ML" else "<")
    samples = np.frombuffer(data, dtype=dtype, count=width * height, offset=header.end()).reshape(height, width)
    return samples.astype(np.int64), precision, sign == b"-"


def header_geometry(path):
    """The image area's origin (x0, y0) and each codestream component's (dx, dy), from opj_dump."""
    dump = run("opj_dump", "-i", path).stdout
    origin = tuple(int(v) for v in re.search(r"x0=(\d+), y0=(\d+)", dump).groups())
    return origin, [(int(x), int(y)) for x, y in re.findall(r"dx=(\d+), dy=(\d+)", dump)]


def ceil_div(a, b):
    return -(-a // b)


def nearest(count, origin, step0, step, reduction, samples):
    """For each of component 0's `count` positions from the reduced `origin`, the index of the nearest sample of a
    component sampled every `step` (component 0 every `step0`) whose first sample is at its own reduced origin."""
    first0 = ceil_div(ceil_div(origin, step0), 1 << reduction)
    first = ceil_div(ceil_div(origin, step), 1 << reduction)
    return np.clip((np.arange(count) + first0) * step0 // step - first, 0, samples - 1)


def reference(path, tmp_path, *options, reduction=0, required=True):
    """What Tessera should give for `path` decoded by opj_decompress with `options` (-r, -d); None when
    opj_decompress cannot decode it and `required` is false."""
    out = tmp_path / "ref.pgx"
    result = run("opj_decompress", "-i", path, "-o", out, "-quiet", *options)
    if not required and result.returncode != 0:
        return None
    assert result.returncode == 0, result.stderr + result.stdout
    comps = [read_pgx(p) for p in sorted(tmp_path.glob("ref_*.pgx"), key=lambda p: int(p.stem.split("_")[1]))]
    for p in tmp_path.glob("ref_*.pgx"):
        p.unlink()
    origin, sampling = header_geometry(path)
    alpha = len(comps) - 1 if len(comps) in (2, 4) else None
    colours = [i for i in range(len(comps)) if i != alpha]
    used = colours[:3] if len(colours) >= 3 else colours[:1]
    used += [alpha] if alpha is not None else []
    bits = 8 if max(comps[i][1] for i in used) <= 8 else 16
    height, width = comps[0][0].shape
    planes = []
    for index in used:
        samples, precision, signed = comps[index]
        if samples.shape != (height, width):
            (dx0, dy0), (dx, dy) = sampling[0], sampling[index]
            ys = nearest(height, origin[1], dy0, dy, reduction, samples.shape[0])
            xs = nearest(width, origin[0], dx0, dx, reduction, samples.shape[1])
            samples = samples[ys][:, xs]
        if signed:
            samples = samples + (1 << (precision - 1))
        top = (1 << precision) - 1
        samples = np.clip(samples, 0, top)
        if precision != bits:
            samples = (samples * ((1 << bits) - 1) + top // 2) // top
        planes.append(samples)
    return np.stack(planes, axis=-1).astype(np.uint16 if bits == 16 else np.uint8)


def decode(tessera, path, tmp_path, *args):
    out = tmp_path / "tessera.png"
    result = run(tessera, *args, path, out) if args and args[0] == "region" else run(tessera, "convert", path, out, *args)
    assert result.returncode == 0, result.stderr
    return read_png(out)


def levels(path):
    dump = run("opj_dump", "-i", path).stdout
    return min(int(n) for n in re.findall(r"numresolutions=(\d+)", dump))


def assert_level_equal(actual, expected, message=""):
    """Tessera's 1/N of an image is ceil(size / N) for every format; a JPEG 2000 level a pixel short of that (an
    image origin off the level's grid) has its last row and column repeated, as TIFF pyramid levels do."""
    height, width = expected.shape[:2]
    assert actual.shape[2] == expected.shape[2] and actual.shape[0] - height in (0, 1) \
        and actual.shape[1] - width in (0, 1), f"{message}: {actual.shape} against {expected.shape}"
    difference = np.abs(actual[:height, :width].astype(int) - expected).max()
    assert difference == 0, f"{message}: differs by up to {difference}"
    assert np.array_equal(actual[height:, :width], expected[-1:].repeat(actual.shape[0] - height, axis=0))
    assert np.array_equal(actual[:, width:], actual[:, width - 1:width].repeat(actual.shape[1] - width, axis=1))


@pytest.mark.parametrize("path", conformance_files(), ids=lambda p: p.name)
def test_conformance_file_matches_opj_decompress_at_every_reduction(tessera, path, tmp_path):
    for reduction in range(levels(path)):
        # opj_decompress itself fails at the deepest reductions of a few files (p1_05, p1_06): nothing to compare.
        expected = reference(path, tmp_path, "-r", str(reduction), reduction=reduction, required=reduction == 0)
        if expected is None:
            continue
        options = ("--scale", f"1/{1 << reduction}") if reduction else ()
        assert_level_equal(decode(tessera, path, tmp_path, *options), expected, f"reduction {reduction}")


def test_region_matches_opj_decompress_area(tessera, tmp_path):
    path = DATA / "p0_14.j2k"  # 49 x 49 tiled: the region crosses tile edges
    expected = reference(path, tmp_path, "-d", "5,7,40,37")
    out = tmp_path / "region.png"
    result = run(tessera, "region", path, out, "--rect", "5,7,35,30")
    assert result.returncode == 0, result.stderr
    assert np.array_equal(read_png(out), expected)


def opj_compress(tmp_path, array, name, *options):
    source = tmp_path / f"{name}.png"
    write_png(source, array)
    target = tmp_path / name
    result = run("opj_compress", "-i", source, "-o", target, *options)
    assert result.returncode == 0, result.stderr + result.stdout
    return target


@pytest.mark.parametrize("channels,bits", [(1, 8), (2, 8), (3, 16), (4, 8)])
def test_lossless_opj_compress_round_trip(tessera, tmp_path, channels, bits):
    array = photo(300, 410, channels, seed=channels, bits=bits)
    if channels in (2, 4):
        array[::5, ::3, -1] = 0
    path = opj_compress(tmp_path, array, "lossless.jp2", "-t", "128,96", "-n", "4")
    actual = decode(tessera, path, tmp_path)
    assert np.array_equal(actual, array.reshape(actual.shape))


def test_tiled_lossy_reductions_and_regions(tessera, tmp_path):
    """A tiled, lossy RPCL JP2 as the archives make them: every reduction and a region inside one level."""
    array = photo(700, 900, 3, seed=9)
    path = opj_compress(tmp_path, array, "lossy.jp2", "-t", "256,256", "-n", "5", "-r", "20", "-p", "RPCL", "-PLT")
    for reduction in range(5):
        expected = reference(path, tmp_path, "-r", str(reduction), reduction=reduction)
        options = ("--scale", f"1/{1 << reduction}") if reduction else ()
        assert_level_equal(decode(tessera, path, tmp_path, *options), expected, f"reduction {reduction}")
    expected = reference(path, tmp_path, "-d", "200,300,712,557", "-r", "1", reduction=1)
    out = tmp_path / "region.png"
    result = run(tessera, "region", path, out, "--rect", "200,300,512,257", "--scale", "1/2")
    assert result.returncode == 0, result.stderr
    assert np.array_equal(read_png(out), expected)


def test_info_shows_the_codestream(tessera, tmp_path):
    path = opj_compress(tmp_path, photo(200, 300, 3, seed=4), "info.jp2", "-t", "128,128", "-n", "4",
                        "-p", "RPCL", "-r", "10,5", "-I")
    result = run(tessera, "info", path)
    assert result.returncode == 0, result.stderr
    for text in ("JPEG 2000", "300 x 200", "resolutions  4", "tiles        128x128 (3 x 2)",
                 "2 layers", "RPCL", "9/7 (lossy)", "colour space sRGB"):
        assert text in result.stdout, result.stdout


@pytest.mark.skipif(shutil.which("vips") is None, reason="needs libvips-tools")
def test_icc_file_keeps_its_samples_as_vips_does(tessera, tmp_path):
    """opj_decompress applies an ICC profile through lcms; Tessera, like libvips' jp2kload, keeps the stored samples
    (and reports the profile)."""
    path = DATA / "file8.jp2"
    expected = tmp_path / "vips.png"
    result = run("vips", "copy", path, expected)
    assert result.returncode == 0, result.stderr
    assert np.array_equal(decode(tessera, path, tmp_path), read_png(expected))
    assert "ICC profile  yes" in run(tessera, "info", path).stdout


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_damaged_codestreams_fail_in_one_line(tessera, tmp_path, damage):
    data = bytearray((DATA / "p1_06.j2k").read_bytes())
    if damage == "truncated":
        data = data[:len(data) // 2]
    else:
        for offset in range(200, len(data) - 2, 7):
            data[offset] ^= 0x5A
    path = tmp_path / f"{damage}.j2k"
    path.write_bytes(bytes(data))
    result = run(tessera, "convert", path, tmp_path / "out.png")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], result.stderr
    assert not (tmp_path / "out.png").exists()


def test_thumbnail_shrinks_on_load_from_a_resolution_level(tessera, tmp_path):
    """A 128-pixel thumbnail of a 1,200-pixel JP2 is made from the smallest resolution level still covering it (the
    1/8 level's 150 pixels, as vipsthumbnail and `opj_decompress -r` load it; the wavelet's low-pass band needs no
    2x left to the kernel): close to, not equal to, the thumbnail of the full image. The level holds the image at
    every eighth pixel from the first, not at the blocks' centres: resampled as if it were centred, as
    vipsthumbnail resamples it, the thumbnail lies 5.4 (5/3) and 5.1 (9/7) from the full image's; placed where it
    is, 2.8 and 2.3."""
    array = photo(900, 1200, 3, seed=21)
    full = tmp_path / "full.png"
    write_png(full, array)
    assert run(tessera, "thumbnail", full, "-s", "128", "-o", tmp_path / "tn_%s.png").returncode == 0
    reference = read_png(tmp_path / "tn_full.png").astype(int)
    for wavelet in ([], ["-I"]):
        path = opj_compress(tmp_path, array, "thumb.jp2", "-t", "256,256", "-n", "6", *wavelet)
        result = run(tessera, "thumbnail", path, "-s", "128", "-o", tmp_path / "tn_%s.png")
        assert result.returncode == 0, result.stderr
        thumbnail = read_png(tmp_path / "tn_thumb.png")
        assert thumbnail.shape == (96, 128, 3)
        assert np.abs(thumbnail.astype(int) - reference).mean() < 3.5, wavelet
        if shutil.which("vipsthumbnail"):
            assert run("vipsthumbnail", path, "-s", "128", "-o", tmp_path / "vips_%s.png").returncode == 0
            vips = read_png(tmp_path / "vips_thumb.png").astype(int)
            assert np.abs(thumbnail.astype(int) - reference).mean() < np.abs(vips - reference).mean(), wavelet


def test_tile_makes_a_deep_zoom_pyramid_of_a_jp2(tessera, tmp_path):
    array = photo(600, 800, 3, seed=22)
    path = opj_compress(tmp_path, array, "tiles.jp2", "-t", "256,256", "-n", "4")
    result = run(tessera, "tile", path, tmp_path / "pyramid", "--tile-size", "256", "--overlap", "0", "--format", "png")
    assert result.returncode == 0, result.stderr
    top = read_png(tmp_path / "pyramid_files" / "10" / "1_1.png")
    assert np.array_equal(top, array[256:512, 256:512])


def test_serve_offers_the_codestream_tiles_and_levels(tessera, tmp_path):
    """With the pyramid cache off, info.json offers the codestream's tile size and its resolution levels as scale
    factors, and a tile at a reduced level is that level's pixels, as opj_decompress decodes them (through the
    server's decoded whole tiles: asked twice, and beside a tile of the same codestream tile). `.jp2` is an extra
    format: the same tile as a JP2 that Pillow decodes to nearly those pixels."""
    import io
    from PIL import Image
    import json
    import subprocess
    import urllib.request
    root = tmp_path / "served"
    root.mkdir()
    array = photo(1000, 1400, 3, seed=23)
    path = opj_compress(root, array, "master.jp2", "-t", "512,512", "-n", "6", "-p", "RPCL")
    process = subprocess.Popen([tessera, "serve", root, "--port", "0", "--no-cache", "--quiet"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        banner = process.stdout.readline()
        assert "serving" in banner, process.stderr.read()
        base = banner.split(" at ")[1].split()[0].rstrip("/")
        with urllib.request.urlopen(f"{base}/master.jp2/info.json", timeout=30) as response:
            info = json.load(response)
        assert info["tiles"][0]["width"] == 512 and info["tiles"][0]["height"] == 512
        assert info["tiles"][0]["scaleFactors"] == [1, 2, 4, 8, 16, 32]
        assert "jp2" in info["extraFormats"]
        for region in ["1024,0,376,512", "1024,0,376,1000", "1024,0,376,1000"]:
            with urllib.request.urlopen(f"{base}/master.jp2/{region}/188,/0/default.png", timeout=30) as response:
                (tmp_path / "tile.png").write_bytes(response.read())
        with urllib.request.urlopen(f"{base}/master.jp2/1024,0,376,1000/188,/0/default.jp2", timeout=30) as response:
            assert response.headers["Content-Type"] == "image/jp2"
            jp2 = np.asarray(Image.open(io.BytesIO(response.read())).convert("RGB"))
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    expected = reference(path, tmp_path, "-d", "1024,0,1400,1000", "-r", "1", reduction=1)
    assert np.array_equal(read_png(tmp_path / "tile.png"), expected)
    assert jp2.shape == expected.shape and np.abs(jp2.astype(int) - expected).mean() < 3


@pytest.mark.skipif(shutil.which("ojph_compress") is None, reason="needs openjph-tools")
def test_htj2k_from_openjph_reads_losslessly_and_at_every_reduction(tessera, tmp_path):
    """High-Throughput JPEG 2000 (Part 15) written by OpenJPH: lossless tiled is the source's pixels, and a lossy
    one equals opj_decompress's decode at every reduction; info says HTJ2K."""
    from PIL import Image
    array = photo(300, 410, 3, seed=5)
    Image.fromarray(array).save(tmp_path / "source.ppm")
    lossless, lossy = tmp_path / "lossless.j2c", tmp_path / "lossy.j2c"
    for target, options in [(lossless, ["-reversible", "true", "-tile_size", "{128,128}"]), (lossy, ["-qstep", "0.01"])]:
        result = run("ojph_compress", "-i", tmp_path / "source.ppm", "-o", target, *options)
        assert result.returncode == 0, result.stderr + result.stdout
    assert np.array_equal(decode(tessera, lossless, tmp_path), array)
    assert "HTJ2K" in run(tessera, "info", lossless).stdout
    for reduction in range(levels(lossy)):
        expected = reference(lossy, tmp_path, "-r", str(reduction), reduction=reduction)
        options = ("--scale", f"1/{1 << reduction}") if reduction else ()
        assert_level_equal(decode(tessera, lossy, tmp_path, *options), expected, f"reduction {reduction}")


@pytest.mark.parametrize("channels,bits", [(1, 8), (3, 8), (4, 16)])
def test_convert_writes_lossless_jp2_that_opj_decompress_reads_exactly(tessera, tmp_path, channels, bits):
    array = photo(700, 900, channels, seed=30 + channels, bits=bits)
    source, target = tmp_path / "source.png", tmp_path / "written.jp2"
    write_png(source, array)
    result = run(tessera, "convert", source, target, "--lossless")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "back.png"
    assert run("opj_decompress", "-i", target, "-o", out, "-quiet").returncode == 0
    assert np.array_equal(read_png(out).reshape(array.shape), array)
    # Tiled at the tile size, RPCL, levels down to one that fits a tile, PLT and TLM markers for random access.
    dump = run("opj_dump", "-i", target).stdout
    assert "tdx=256, tdy=256" in dump and "prg=0x2" in dump and "numresolutions=3" in dump
    data = target.read_bytes()
    assert b"\xff\x58" in data and b"\xff\x55" in data


def test_convert_writes_lossy_jp2_by_quality(tessera, tmp_path):
    array = photo(500, 600, 3, seed=33)
    source = tmp_path / "source.png"
    write_png(source, array)
    sizes = {}
    for quality in (50, 90):
        target = tmp_path / f"q{quality}.jp2"
        result = run(tessera, "convert", source, target, "-Q", str(quality), "--tile-size", "512")
        assert result.returncode == 0, result.stderr
        sizes[quality] = target.stat().st_size
        back = tmp_path / "vips.png"
        assert run("vips", "copy", target, back).returncode == 0
        error = np.abs(read_png(back).astype(int) - array)
        assert error.mean() < (2.5 if quality == 90 else 4), (quality, error.mean())
    # The ratio follows quality: 26:1 at 50, 6:1 at 90.
    raw = array.size
    assert sizes[50] < raw / 20 and raw / 8 < sizes[90] < raw / 4, sizes


def test_convert_to_jp2_leaves_nothing_on_failure(tessera, tmp_path):
    source = tmp_path / "source.png"
    write_png(source, photo(300, 300, 3, seed=34))
    result = run(tessera, "convert", source, tmp_path / "out.jp2", "--memory-limit", "64K")
    assert result.returncode == 1 and "out.jp2" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == [source]


@pytest.mark.skipif(shutil.which("ojph_expand") is None, reason="needs openjph-tools")
@pytest.mark.parametrize("name,options", [("out.jph", ["--lossless"]), ("out.j2c", ["--htj2k", "--lossless"]),
                                          ("gray.jph", ["--lossless"]), ("lossy.j2c", ["--htj2k", "-Q", "80"])])
def test_convert_writes_htj2k_that_openjph_and_tessera_read_back(tessera, tmp_path, name, options):
    """HTJ2K written through OpenJPH, a row at a time: a .jph file (JP2-family boxes, brand 'jph ') or a .j2c
    codestream; lossless is the source's pixels through ojph_expand and through Tessera's reader (whole, and a
    region), lossy is close; a .jp2 asked for as HTJ2K is refused in one line."""
    from PIL import Image
    channels = 1 if name.startswith("gray") else 3
    array = photo(270, 333, channels, seed=31)
    source = tmp_path / "source.png"
    write_png(source, array)
    target = tmp_path / name
    result = run(tessera, "convert", source, target, *options)
    assert result.returncode == 0, result.stderr
    assert "HTJ2K" in run(tessera, "info", target).stdout
    if name.endswith(".jph"):
        assert target.read_bytes()[:12] == b"\0\0\0\x0cjP  \r\n\x87\n" and b"ftypjph " in target.read_bytes()[:40]
    else:
        assert target.read_bytes()[:4] == b"\xff\x4f\xff\x51"
        expanded = tmp_path / ("expanded.pgm" if channels == 1 else "expanded.ppm")
        result = run("ojph_expand", "-i", target, "-o", expanded)
        assert result.returncode == 0, result.stderr + result.stdout
        openjph = np.asarray(Image.open(expanded))
        assert openjph.shape == array.shape[:2] + ((3,) if channels == 3 else ())
    back = decode(tessera, target, tmp_path)
    region = decode(tessera, target, tmp_path, "region", "--rect", "40,30,200,150")
    if "--lossless" in options:
        assert np.array_equal(back.reshape(array.shape), array)
        assert np.array_equal(region.reshape(array[30:180, 40:240].shape), array[30:180, 40:240])
        if not name.endswith(".jph"):
            assert np.array_equal(openjph.reshape(array.shape), array)
    else:
        assert np.abs(back.astype(int) - array).mean() < 4
    refused = run(tessera, "convert", source, tmp_path / "classic.jp2", "--htj2k")
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1 and "classic.jp2" in refused.stderr
    assert not (tmp_path / "classic.jp2").exists()
