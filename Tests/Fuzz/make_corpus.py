#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into corpus/TARGET/: small, valid inputs of every kind each parser reads,
from which libFuzzer mutates. Run with the project's Python (Pillow; cjpeg for restart markers, vips for a tiled
pyramidal TIFF, opj_compress for JPEG 2000):
    .venv/bin/python Tests/Fuzz/make_corpus.py"""
import io
import json
import zipfile
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def picture(width, height, mode="RGB", seed=1):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 // max(1, width - 1), y * 255 // max(1, height - 1), (x + y) * 127 // max(1, width + height)],
                    axis=-1) + rng.integers(0, 16, (height, width, 3))
    image = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))
    return image.convert(mode) if mode != "RGB" else image


def encoded(image, format, **options):
    buffer = io.BytesIO()
    image.save(buffer, format, **options)
    return buffer.getvalue()


def images():
    rgb, gray = picture(24, 17), picture(24, 17, "L")
    yield "baseline.jpg", encoded(rgb, "JPEG", quality=50)
    yield "progressive.jpg", encoded(rgb, "JPEG", quality=50, progressive=True)
    yield "gray.jpg", encoded(gray, "JPEG", quality=50)
    yield "444.jpg", encoded(rgb, "JPEG", quality=50, subsampling=0)
    yield "cmyk.jpg", encoded(picture(16, 16, "CMYK"), "JPEG", quality=50)
    ppm = encoded(rgb, "PPM")
    yield "restart.jpg", subprocess.run(["cjpeg", "-restart", "1", "-quality", "50"], input=ppm,
                                        capture_output=True, check=True).stdout
    yield "rgb.png", encoded(rgb, "PNG")
    yield "palette.png", encoded(rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=16), "PNG")
    yield "interlaced.png", encoded(rgb, "PNG", interlace=1)
    yield "gray-alpha.png", encoded(picture(12, 9, "LA"), "PNG")
    yield "deep.png", encoded(Image.fromarray((np.arange(12 * 9, dtype=np.uint16).reshape(9, 12) * 600)), "PNG")
    yield "strips.tif", encoded(rgb, "TIFF", compression="tiff_deflate")
    yield "lzw.tif", encoded(gray, "TIFF", compression="tiff_lzw")
    yield "jpeg.tif", encoded(rgb, "TIFF", compression="jpeg")
    with tempfile.TemporaryDirectory() as folder:
        picture(40, 30).save(f"{folder}/in.png")
        subprocess.run(["vips", "tiffsave", f"{folder}/in.png", f"{folder}/out.tif", "--tile", "--tile-width", "16",
                        "--tile-height", "16", "--pyramid", "--compression", "jpeg"], check=True)
        yield "pyramid.tif", Path(f"{folder}/out.tif").read_bytes()
        picture(40, 30).save(f"{folder}/in.ppm")
        for name, options in [("tiled.jp2", ["-t", "16,16", "-n", "3", "-r", "10"]), ("lossless.j2k", ["-n", "2"])]:
            subprocess.run(["opj_compress", "-i", f"{folder}/in.ppm", "-o", f"{folder}/{name}", *options],
                           check=True, capture_output=True)
            yield name, Path(f"{folder}/{name}").read_bytes()
    yield "lossy.webp", encoded(rgb, "WEBP", quality=50)
    yield "lossless.webp", encoded(picture(12, 9, "RGBA"), "WEBP", lossless=True)
    yield "rgb.bmp", encoded(rgb, "BMP")
    yield "palette.bmp", encoded(rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=16), "BMP")
    yield "still.gif", encoded(rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=32), "GIF")
    frames = [picture(16, 12, seed=seed).convert("P", palette=Image.Palette.ADAPTIVE, colors=8) for seed in (1, 2)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], interlace=True)
    yield "animated.gif", buffer.getvalue()


def zips():
    """Stored zips as a pyramid build writes them: a finished one whose comment is a build key, the same cut off
    mid-entry (a killed build's partial zip), and one past Zip64's limits in nothing but its records' fields; and a
    Deep Zoom pyramid of an 8 x 8 image deflated, as zip tools pack a folder, that reads as an image."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.comment = b"fuzz"
        for name in ["pyramid.dzi", "0/0_0.jpg", "1/0_0.jpg"]:
            archive.writestr(name, encoded(picture(8, 8), "JPEG", quality=50) if name.endswith(".jpg") else b"<Image/>")
    whole = buffer.getvalue()
    yield "finished.zip", whole
    yield "partial.zip", whole[:len(whole) * 2 // 3]
    zip64 = io.BytesIO()
    with zipfile.ZipFile(zip64, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        with archive.open("big.bin", "w", force_zip64=True) as entry:
            entry.write(b"tile")
    yield "zip64.zip", zip64.getvalue()
    deflated = io.BytesIO()
    with zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("p/p.dzi", b'<Image xmlns="http://schemas.microsoft.com/deepzoom/2008" Format="jpeg"'
                                    b' Overlap="0" TileSize="254"><Size Width="8" Height="8"/></Image>')
        for level in range(4):
            archive.writestr(f"p/p_files/{level}/0_0.jpeg", encoded(picture(1 << level, 1 << level), "JPEG", quality=50))
    yield "pyramid.zip", deflated.getvalue()


def main():
    seeds = {
        "image": dict(images()),
        "dzi": {
            "tessera.dzi": b'<?xml version="1.0" encoding="UTF-8"?>\n<Image xmlns="http://schemas.microsoft.com/deepzoom/2008"'
                           b' Format="jpeg" Overlap="1" TileSize="254">\n  <Size Width="4000" Height="3000"/>\n</Image>\n',
            "prefixed.dzi": b'<dz:Image xmlns:dz="http://schemas.microsoft.com/deepzoom/2008" TileSize="256" Format="png"'
                            b' Overlap="0"><dz:Size Height="700" Width="900"/></dz:Image>',
        },
        "iiif-info": {
            "level0.json": json.dumps({"@context": "http://iiif.io/api/image/3/context.json", "id": "http://h/p",
                                       "type": "ImageService3", "profile": "level0", "width": 4000, "height": 3000,
                                       "tiles": [{"width": 512, "height": 512, "scaleFactors": [1, 2, 4, 8]}],
                                       "sizes": [{"width": 500, "height": 375}]}).encode(),
            "v2.json": json.dumps({"@id": "http://h/p", "width": 10, "height": 7, "preferredFormats": ["png"],
                                   "tiles": [{"width": 300, "height": 200, "scaleFactors": [1, 3, 2]}]}).encode(),
        },
        "iiif-request": {name: text.encode() for name, text in [
            ("full.txt", "full/max/0/default.jpg"), ("pixels.txt", "0,0,100,100/50,/90/gray.png"),
            ("percent.txt", "pct:10,10,50,50/!200,200/!180/bitonal.webp"), ("square.txt", "square/^max/270/color.jpg"),
            ("upscale.txt", "full/^pct:150/0/default.png"), ("height.txt", "10,20,300,400/,77/0/default.jpg")]},
        "http": {name: text.encode() for name, text in [
            ("info.txt", "GET /iiif/a.jpg/info.json\nhost: example.org\nx-forwarded-proto: https"),
            ("tile.txt", "GET /iiif/a.jpg/0,0,32,32/16,/0/default.jpg\nif-none-match: *"),
            ("front.txt", "GET /\n"), ("folder.txt", "GET /browse/maps/\n"), ("asset.txt", "GET /web/js/main.js\n"),
            ("view.txt", "HEAD /view/a.jpg\n"), ("options.txt", "OPTIONS /iiif/a.jpg/full/max/0/default.jpg\n"),
            ("since.txt", "GET /iiif/a/info.json\nif-modified-since: Sun, 06 Nov 1994 08:49:37 GMT"),
            ("stream.txt", "GET /stream/a.jpg/64\n"),
            # The image corpus's pyramid.tif, which FuzzSite serves as p.tif: 40 x 30, levels halved rounding down.
            ("pyramid-info.txt", "GET /iiif/p.tif/info.json\n"),
            ("pyramid-edge.txt", "GET /iiif/p.tif/32,16,8,14/8,/0/default.jpg\n"),
            ("pyramid-near-level.txt", "GET /iiif/p.tif/32,0,8,30/5,/0/default.jpg\n"),
            ("pyramid-thumbnail.txt", "GET /iiif/p.tif/full/13,/0/default.jpg\n"),
            ("pyramid-sliver.txt", "GET /iiif/p.tif/32,0,3,30/1,/0/default.jpg\n")]},
        "viewer-script": {
            "trace.json": json.dumps({"framesPerSecond": 60, "steps": [
                {"view": {"x": 6000, "y": 4000, "zoom": 1}}, {"pan": [40, 0]}, {"zoom": 1.1, "at": [320, 240]},
                {"wait": "sharp"}, {"frames": 60}, {"screenshot": "shot.png"}]}).encode(),
        },
    }
    seeds["zip"] = dict(zips())
    # The entropy-index target XORs its input onto a genuine index: the empty input is that index, a few bytes
    # perturb the image geometry and the first saved states.
    seeds["entropy-index"] = {"genuine.bin": b"", "offset.bin": b"\0" * 8 + b"\x01", "state.bin": b"\0" * 40 + b"\x80"}
    # The remote-file target: which total the server claims, a 64-byte file, eight reads (where, how much, how far
    # ahead, from the start or the claimed end), then the server's answers (0 0: honest; 9: the whole file; 13: a
    # new ETag; 15: an error status).
    reads = bytes([0, 16, 0, 0, 10, 40, 1, 0, 5, 3, 0, 1, 60, 4, 2, 0, 0, 64, 0, 0, 31, 2, 0, 1, 1, 1, 1, 0, 63, 1, 0, 0])
    seeds["remote-file"] = {name: bytes([claim]) + bytes(range(64)) + reads + script for name, claim, script in [
        ("honest.bin", 0, b""), ("whole.bin", 0, bytes([9, 0])), ("replaced.bin", 0, bytes([0, 0, 13, 7])),
        ("failing.bin", 0, bytes([0, 0, 15, 2])), ("claims-more.bin", 3, b""), ("claims-max.bin", 7, b"")]}
    seeds["incremental"] = {name: bytes([index * 37 % 256]) + data
                            for index, (name, data) in enumerate(seeds["image"].items())}
    for target, files in seeds.items():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)


if __name__ == "__main__":
    main()
