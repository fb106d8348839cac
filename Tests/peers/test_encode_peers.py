"""Images Tessera writes decode in Pillow (and pypng for 16-bit): exactly for lossless formats; JPEG at Q90
within PSNR 40 dB of the source."""
import numpy as np
import pytest
from PIL import Image

from conftest import photo, pillow_pixels, psnr, read_png, run, write_png

SOURCES = {
    "rgb": photo(301, 257, 3, seed=11),
    "rgba": photo(301, 257, 4, seed=12),
    "gray": photo(301, 257, 1, seed=13),
    "gray-alpha": photo(301, 257, 2, seed=14),
    "rgb16": photo(301, 257, 3, seed=15, bits=16),
    "rgba16": photo(301, 257, 4, seed=16, bits=16),
}

LOSSLESS = [
    ("rgb", "out.png", []), ("rgba", "out.png", []), ("gray", "out.png", []), ("gray-alpha", "out.png", []),
    ("rgb16", "out.png", []), ("rgba16", "out.png", []), ("rgb", "out.png", ["--level", "0"]),
    ("rgb", "out.png", ["--level", "9"]),
    ("rgb", "out.webp", ["--lossless"]), ("rgba", "out.webp", ["--lossless"]),
    ("rgb", "out.tif", ["--compression", "none"]), ("rgb", "out.tif", ["--compression", "deflate"]),
    ("rgb", "out.tif", ["--compression", "lzw"]), ("rgba", "out.tif", ["--compression", "lzw"]),
    ("gray", "out.tif", []), ("rgb", "out.tif", ["--tile-size", "64"]), ("rgb16", "out.tif", ["--compression", "lzw"]),
    ("rgba", "out.tif", ["--tile-size", "128", "--compression", "deflate"]),
]


def source_file(tmp_path, key):
    path = tmp_path / f"{key}.png"
    write_png(path, SOURCES[key])
    return path


@pytest.mark.parametrize("key,output,flags", LOSSLESS, ids=[f"{k}-{o}-{'_'.join(f)}" for k, o, f in LOSSLESS])
def test_lossless_output_decodes_exactly_in_peers(tessera, tmp_path, key, output, flags):
    source = source_file(tmp_path, key)
    target = tmp_path / output
    result = run(tessera, "convert", source, target, *flags)
    assert result.returncode == 0, result.stderr
    expected = SOURCES[key]
    if expected.dtype == np.uint16:
        if target.suffix == ".png":
            decoded = read_png(target)
        else:
            round_trip = tmp_path / "vips.png"
            assert run("vips", "copy", target, round_trip).returncode == 0
            decoded = read_png(round_trip)
    else:
        decoded = pillow_pixels(target, expected.shape[2])
    assert decoded.dtype == expected.dtype
    assert np.array_equal(decoded, expected)


@pytest.mark.parametrize("flags", [[], ["--progressive"], ["--subsampling", "444"], ["--optimize"],
                                   ["--progressive", "--optimize", "--subsampling", "444"]])
def test_jpeg_at_quality_90_is_within_40_db_of_the_source(tessera, tmp_path, flags):
    source = source_file(tmp_path, "rgb")
    target = tmp_path / "out.jpg"
    result = run(tessera, "convert", source, target, "-Q", "90", *flags)
    assert result.returncode == 0, result.stderr
    with Image.open(target) as image:
        assert image.format == "JPEG"
        assert ("progression" in image.info or "progressive" in image.info) == ("--progressive" in flags)
        decoded = np.asarray(image.convert("RGB"))
    ours = psnr(decoded, SOURCES["rgb"])
    assert ours >= 40
    pillows = tmp_path / "pillow.jpg"
    Image.fromarray(SOURCES["rgb"]).save(pillows, quality=90, subsampling=0 if "444" in flags else 2)
    assert ours >= psnr(pillow_pixels(pillows, 3), SOURCES["rgb"]) - 0.1


def test_jpeg_flattens_alpha_onto_the_background(tessera, tmp_path):
    array = np.zeros((16, 16, 4), np.uint8)
    array[..., 0] = 200
    array[:8, :, 3] = 255
    source = tmp_path / "half.png"
    write_png(source, array)
    target = tmp_path / "out.jpg"
    assert run(tessera, "convert", source, target, "--background", "0000ff", "-Q", "100",
               "--subsampling", "444").returncode == 0
    decoded = pillow_pixels(target, 3).astype(int)
    assert np.abs(decoded[2, 8] - [200, 0, 0]).max() <= 3
    assert np.abs(decoded[12, 8] - [0, 0, 255]).max() <= 3


def test_lossy_webp_and_jpeg_tiff_stay_close_to_the_source(tessera, tmp_path):
    source = source_file(tmp_path, "rgb")
    for name, flags in [("out.webp", ["-Q", "95"]), ("out.tif", ["--compression", "jpeg", "-Q", "95"])]:
        target = tmp_path / name
        result = run(tessera, "convert", source, target, *flags)
        assert result.returncode == 0, result.stderr
        assert psnr(pillow_pixels(target, 3), SOURCES["rgb"]) >= 38, name


def test_region_and_scale_match_a_crop_of_the_full_decode(tessera, tmp_path):
    source = tmp_path / "big.png"
    write_png(source, photo(517, 389, 3, seed=21))
    region = tmp_path / "region.png"
    assert run(tessera, "region", source, region, "--rect", "33,71,200,300").returncode == 0
    assert np.array_equal(read_png(region), photo(517, 389, 3, seed=21)[71:371, 33:233])
    shrunk = tmp_path / "shrunk.png"
    assert run(tessera, "convert", source, shrunk, "--scale", "1/4").returncode == 0
    assert read_png(shrunk).shape == (130, 98, 3)
