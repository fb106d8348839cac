"""Images written by Pillow, pypng and libvips in every format and variant Tessera reads decode in Tessera:
exactly for lossless formats, within +-2 of libjpeg's own decode for JPEG."""
import shutil

import numpy as np
import pytest
from PIL import Image

from conftest import photo, pillow_pixels, read_png, run, write_png

RGB = photo(67, 93, 3, seed=1)
RGBA = np.dstack([RGB, photo(67, 93, 1, seed=2)])
RGBA[::7, ::5, 3] = 0
GRAY = photo(67, 93, 1, seed=3)


def pillow(mode, array, **options):
    def make(path):
        image = Image.fromarray(array.squeeze() if array.shape[2] == 1 else array)
        if mode != image.mode:
            image = image.convert(mode)
        image.save(path, **options)
    return make


def pypng(array, **options):
    return lambda path: write_png(path, array, **options)


def vips(source_maker, suffix, options):
    def make(path):
        source = path.with_name("vips-source.png")
        source_maker(source)
        result = run("vips", "copy", source, f"{path}[{options}]")
        assert result.returncode == 0, result.stderr
    return make


def imagemagick_ycck(path):
    """ImageMagick writes CMYK JPEGs as Adobe YCCK (transform 2), inverted."""
    source = path.with_name("magick-source.png")
    pillow("RGB", RGB)(source)
    result = run("convert", source, "-colorspace", "CMYK", "-quality", "95", path)
    assert result.returncode == 0, result.stderr


def palette_with_transparency(path):
    image = Image.fromarray(RGB).quantize(64)
    image.info["transparency"] = 3
    image.save(path, transparency=3)


VARIANTS = {
    # JPEG
    "jpeg-baseline.jpg": (pillow("RGB", RGB, quality=90), 2),
    "jpeg-progressive.jpg": (pillow("RGB", RGB, quality=90, progressive=True), 2),
    "jpeg-gray.jpg": (pillow("L", GRAY, quality=90), 2),
    "jpeg-444.jpg": (pillow("RGB", RGB, quality=95, subsampling=0), 2),
    "jpeg-cmyk.jpg": (pillow("CMYK", RGB, quality=95), 2),
    "jpeg-ycck.jpg": (imagemagick_ycck, 2),
    "jpeg-restart.jpg": (vips(pillow("RGB", RGB), "jpg", "Q=90,restart-interval=2"), 2),
    # PNG
    "png-rgb.png": (pillow("RGB", RGB), 0),
    "png-rgba.png": (pillow("RGBA", RGBA), 0),
    "png-gray.png": (pillow("L", GRAY), 0),
    "png-gray-alpha.png": (pypng(np.dstack([GRAY, RGBA[..., 3:]])), 0),
    "png-palette.png": (lambda p: Image.fromarray(RGB).quantize(200).save(p), 0),
    "png-palette-trns.png": (palette_with_transparency, 0),
    "png-gray-1bit.png": (pypng((GRAY > 128).astype(np.uint8), bitdepth=1), 0),
    "png-gray-4bit.png": (pypng(GRAY >> 4, bitdepth=4), 0),
    "png-rgb-16.png": (pypng(photo(67, 93, 3, seed=4, bits=16)), 0),
    "png-gray-16.png": (pypng(photo(67, 93, 1, seed=5, bits=16)), 0),
    "png-rgba-16.png": (pypng(photo(67, 93, 4, seed=6, bits=16)), 0),
    "png-interlaced.png": (pypng(RGB, interlace=True), 0),
    "png-interlaced-16-alpha.png": (pypng(photo(67, 93, 4, seed=7, bits=16), interlace=True), 0),
    # TIFF
    "tiff-none.tif": (pillow("RGB", RGB, compression=None), 0),
    "tiff-deflate.tif": (pillow("RGB", RGB, compression="tiff_adobe_deflate"), 0),
    "tiff-lzw.tif": (pillow("RGB", RGB, compression="tiff_lzw"), 0),
    "tiff-rgba-lzw.tif": (pillow("RGBA", RGBA, compression="tiff_lzw"), 0),
    "tiff-gray.tif": (pillow("L", GRAY, compression="tiff_lzw"), 0),
    "tiff-jpeg.tif": (vips(pillow("RGB", RGB), "tif", "compression=jpeg,Q=95"), 2),
    "tiff-tiled-deflate.tif": (vips(pillow("RGB", RGB), "tif", "compression=deflate,tile,tile-width=32,tile-height=32"), 0),
    "tiff-16.tif": (vips(pypng(photo(67, 93, 3, seed=8, bits=16)), "tif", "compression=lzw"), 0),
    # WebP
    "webp-lossless.webp": (pillow("RGB", RGB, lossless=True), 0),
    "webp-lossless-alpha.webp": (pillow("RGBA", RGBA, lossless=True), 0),
    "webp-lossy.webp": (pillow("RGB", RGB, quality=90), 2),
    "webp-lossy-alpha.webp": (pillow("RGBA", RGBA, quality=90), 2),
    # BMP
    "bmp-24.bmp": (pillow("RGB", RGB), 0),
    "bmp-8.bmp": (lambda p: Image.fromarray(RGB).quantize(200).save(p), 0),
    "bmp-1.bmp": (pillow("1", GRAY), 0),
    "bmp-32.bmp": (pillow("RGBA", RGBA), 0),
    "bmp-rle8.bmp": (lambda p: Image.fromarray(RGB).quantize(100).save(p, compression="bmp_rle"), 0),
    # GIF
    "gif.gif": (lambda p: Image.fromarray(RGB).quantize(128).save(p), 0),
    "gif-transparent.gif": (palette_with_transparency, 0),
    "gif-interlaced.gif": (lambda p: Image.fromarray(RGB).quantize(64).save(p, interlace=True), 0),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_peer_written_file_decodes_like_the_peer(tessera, tmp_path, name):
    maker, tolerance = VARIANTS[name]
    if "vips" in maker.__qualname__ and shutil.which("vips") is None:
        pytest.skip("vips is not installed")
    source = tmp_path / name
    maker(source)
    output = tmp_path / "decoded.png"
    result = run(tessera, "convert", source, output)
    assert result.returncode == 0, result.stderr
    ours = read_png(output)
    if name.startswith("png") and "16" in name:
        expected = read_png(source)
    elif name == "tiff-16.tif":
        expected = read_png(source.with_name("vips-source.png"))
    else:
        expected = pillow_pixels(source, ours.shape[2])
    assert ours.shape == expected.shape
    ours, expected = ours.astype(np.int64), expected.astype(np.int64)
    if ours.shape[2] in (2, 4):
        # Colour under fully transparent pixels is not defined by any of these formats: compare alpha everywhere,
        # colour where it shows.
        assert np.array_equal(ours[..., -1], expected[..., -1])
        visible = expected[..., -1] > 0
        ours, expected = ours[visible][:, :-1], expected[visible][:, :-1]
    assert np.abs(ours - expected).max() <= tolerance
