"""The entropy index on the kinds of JPEG the peers' test suites hold (libjpeg-turbo's `cjpeg` options, Pillow's
CMYK and tagged files, ImageMagick's output, tiny and odd sizes): `tessera index` builds an index or refuses the
file as unsupported, naming it, and every region at every scale then equals the same rectangle of libjpeg's decode,
through the index where there is one."""
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image

from conftest import djpeg, photo, read_png, run

pytestmark = pytest.mark.skipif(shutil.which("djpeg") is None or shutil.which("cjpeg") is None,
                                reason="djpeg and cjpeg are not installed")


def grainy(height, width, seed):
    """A photograph with grain enough that its JPEG is a photograph's size (an index must fit 0.5% of it)."""
    image = photo(height, width, 3, seed=seed).astype(np.int32)
    image += np.random.default_rng(seed).integers(-24, 24, image.shape)
    return np.clip(image, 0, 255).astype(np.uint8)


def cjpeg(folder, name, size, *arguments):
    ppm, path = folder / f"{name}.ppm", folder / f"{name}.jpg"
    Image.fromarray(grainy(size[1], size[0], seed=len(name))).save(ppm)
    subprocess.run(["cjpeg", "-quality", "88", *arguments, "-outfile", str(path), str(ppm)], check=True)
    return path


def pillow(folder, name, size, mode="RGB", **options):
    path = folder / f"{name}.jpg"
    Image.fromarray(grainy(size[1], size[0], seed=len(name))).convert(mode).save(path, **options)
    return path


def magick(folder, name, size, *arguments):
    ppm, path = folder / f"{name}.ppm", folder / f"{name}.jpg"
    Image.fromarray(grainy(size[1], size[0], seed=len(name))).save(ppm)
    subprocess.run(["convert", str(ppm), *arguments, str(path)], check=True)
    return path


def icc_profile():
    from PIL import ImageCms
    return ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


# name -> how to make it in a folder; the index is refused (unsupported) for arithmetic coding and tiny files.
CORPUS = {
    "cjpeg-rgb": lambda f: cjpeg(f, "cjpeg-rgb", (1203, 901), "-rgb"),
    "cjpeg-float-smooth": lambda f: cjpeg(f, "cjpeg-float-smooth", (1203, 901), "-dct", "float", "-smooth", "30"),
    "cjpeg-fast-q100-optimized": lambda f: cjpeg(f, "cjpeg-fast-q100-optimized", (1001, 777), "-dct", "fast",
                                                 "-quality", "100", "-optimize"),
    "cjpeg-restart-3-rows": lambda f: cjpeg(f, "cjpeg-restart-3-rows", (1203, 901), "-sample", "2x2", "-restart", "3"),
    "cjpeg-411-odd": lambda f: cjpeg(f, "cjpeg-411-odd", (1199, 903), "-sample", "4x1"),
    "cjpeg-mixed-sampling": lambda f: cjpeg(f, "cjpeg-mixed-sampling", (1203, 901), "-sample", "2x2,1x1,2x1"),
    "cjpeg-arithmetic": lambda f: cjpeg(f, "cjpeg-arithmetic", (1203, 901), "-arithmetic"),
    "pillow-444-exif-icc": lambda f: pillow(f, "pillow-444-exif-icc", (1203, 901), quality=95, subsampling=0,
                                            exif=Image.Exif().tobytes(), icc_profile=icc_profile()),
    "pillow-gray-optimized": lambda f: pillow(f, "pillow-gray-optimized", (1203, 901), "L", optimize=True),
    "pillow-cmyk": lambda f: pillow(f, "pillow-cmyk", (1203, 901), "CMYK", quality=90),
    "imagemagick-420": lambda f: magick(f, "imagemagick-420", (1203, 901), "-sampling-factor", "2x2", "-quality", "82"),
    "tiny-1x1": lambda f: cjpeg(f, "tiny-1x1", (1, 1)),
    "tiny-17x33": lambda f: cjpeg(f, "tiny-17x33", (17, 33), "-sample", "2x2"),
}
REFUSED = {"cjpeg-arithmetic", "tiny-1x1", "tiny-17x33"}


@pytest.mark.parametrize("name", list(CORPUS))
def test_the_index_is_built_or_refused_and_regions_equal_libjpegs(tessera, tmp_path, name):
    if name.startswith("imagemagick") and shutil.which("convert") is None:
        pytest.skip("ImageMagick is not installed")
    path = CORPUS[name](tmp_path)
    cache = tmp_path / "cache"
    built = run(tessera, "index", path, "--cache", cache)
    if name in REFUSED:
        assert built.returncode == 1 and str(path) in built.stderr and "unsupported" in built.stderr, built.stderr
    else:
        assert built.returncode == 0, built.stderr
        assert len(list(cache.glob("*.jpegindex"))) == 1
    width, height = Image.open(path).size
    rects = [(0, 0, width, height), (width // 3, height // 2, width // 2 + 1, height // 3 + 1),
             (width - 1, height - 1, 1, 1)]
    for scale in [1, 2, 4, 8]:
        # libjpeg converts no CMYK to RGB: there Tessera's own decode without the index is the reference.
        full = None if name == "pillow-cmyk" else djpeg("-scale", f"1/{scale}", str(path))
        for x, y, w, h in rects:
            target = tmp_path / "region.png"
            result = run(tessera, "region", path, target, "--rect", f"{x},{y},{w},{h}", "--scale", f"1/{scale}",
                         "--cache", cache)
            assert result.returncode == 0, result.stderr
            got = read_png(target).astype(int)
            if full is None:
                plain = tmp_path / "plain.png"
                assert run(tessera, "region", path, plain, "--rect", f"{x},{y},{w},{h}", "--scale",
                           f"1/{scale}").returncode == 0
                expected = read_png(plain).astype(int)
            else:
                left, top = x // scale, y // scale
                right, bottom = -(-(x + w) // scale), -(-(y + h) // scale)
                expected = full[top:bottom, left:right].astype(int)
                if got.ndim == 2 or got.shape[-1] == 1:  # gray, where the RGB of djpeg's decode repeats it
                    expected = expected[..., 0].reshape(got.shape)
            assert got.shape == expected.shape and np.abs(got - expected).max() == 0, (name, scale, x, y, w, h)
