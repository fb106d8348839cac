"""tessera thumbnail and resize against vipsthumbnail and vips resize: the pixels of a Lanczos3 thumbnail, the
sizes of every size form and crop, and a failing input among several."""
import shutil

import numpy as np
import pytest
from PIL import Image

from conftest import photo, psnr, read_png, run

pytestmark = pytest.mark.skipif(shutil.which("vipsthumbnail") is None, reason="libvips tools are not installed")


@pytest.fixture(scope="module")
def jpeg(tmp_path_factory):
    path = tmp_path_factory.mktemp("thumbs") / "photo.jpg"
    Image.fromarray(photo(2000, 3000, 3, seed=7)).save(path, quality=92)
    return path


@pytest.fixture(scope="module")
def small_jpeg(tmp_path_factory):
    path = tmp_path_factory.mktemp("thumbs") / "small.jpg"
    Image.fromarray(photo(600, 900, 3, seed=8)).save(path, quality=90)
    return path


def size_of(path):
    with Image.open(path) as image:
        return image.size


def test_lanczos3_thumbnail_is_within_38_db_of_vipsthumbnail(tessera, tmp_path, jpeg):
    ours, theirs = tmp_path / "ours.png", tmp_path / "theirs.png"
    result = run(tessera, "thumbnail", jpeg, "-s", "256", "-o", ours)
    assert result.returncode == 0, result.stderr
    assert run("vipsthumbnail", jpeg, "-s", "256", "-o", theirs).returncode == 0
    a, b = read_png(ours), read_png(theirs)
    assert a.shape == b.shape == (171, 256, 3)
    assert psnr(a, b) >= 38


@pytest.mark.parametrize("size", ["256", "200x", "x100", "300x300!", "150x150", "1000x50", "2000<", "100<", "2000>", "2000"])
@pytest.mark.parametrize("crop", [None, "centre", "attention", "entropy"])
def test_size_forms_and_crops_give_vipsthumbnails_sizes(tessera, tmp_path, small_jpeg, size, crop):
    jpeg = small_jpeg
    ours, theirs = tmp_path / "ours.jpg", tmp_path / "theirs.jpg"
    extra = ["--crop", crop] if crop else []
    result = run(tessera, "thumbnail", jpeg, "-s", size, "-o", ours, *extra)
    peer = ["--smartcrop", crop] if crop else []
    # vipsthumbnail enlarges by default; ours only shrinks unless told (as ImageIO): say '>' to it explicitly.
    peer_size = size if size[-1] in "<>!" else size + ">"
    if run("vipsthumbnail", jpeg, "-s", peer_size, "-o", theirs, *peer).returncode != 0:
        # vipsthumbnail refuses a crop without both sides; so do we, as a usage error.
        assert result.returncode == 2 and not ours.exists()
        return
    assert result.returncode == 0, result.stderr
    assert size_of(ours) == size_of(theirs)


def test_a_failing_input_is_reported_and_skipped(tessera, tmp_path, jpeg):
    good = [tmp_path / "a.jpg", tmp_path / "c.jpg"]
    for path in good:
        shutil.copy(jpeg, path)
    bad = tmp_path / "b.jpg"
    bad.write_bytes(b"not an image at all")
    result = run(tessera, "thumbnail", good[0], bad, good[1], "-s", "64", "-o", "thumbs/%s.png")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "b.jpg" in lines[0]
    for name in ["a", "c"]:
        assert size_of(tmp_path / "thumbs" / f"{name}.png") == (64, 43)
    assert not (tmp_path / "thumbs" / "b.png").exists()


def test_default_output_is_tn_beside_the_input(tessera, tmp_path, jpeg):
    source = tmp_path / "holiday.jpg"
    shutil.copy(jpeg, source)
    assert run(tessera, "thumbnail", source).returncode == 0
    assert size_of(tmp_path / "tn_holiday.jpg") == (128, 85)


def test_resize_lanczos3_is_close_to_vips_resize(tessera, tmp_path, jpeg):
    ours, theirs = tmp_path / "ours.png", tmp_path / "theirs.png"
    result = run(tessera, "resize", jpeg, ours, "--scale", "0.37")
    assert result.returncode == 0, result.stderr
    assert run("vips", "resize", jpeg, theirs, "0.37", "--kernel", "lanczos3").returncode == 0
    a, b = read_png(ours), read_png(theirs)
    assert a.shape == b.shape == (740, 1110, 3)
    assert psnr(a, b) >= 38


def test_resize_to_an_exact_size_and_back_up(tessera, tmp_path, jpeg):
    small, large = tmp_path / "small.png", tmp_path / "large.png"
    assert run(tessera, "resize", jpeg, small, "--size", "301x77", "--kernel", "mitchell").returncode == 0
    assert read_png(small).shape == (77, 301, 3)
    assert run(tessera, "resize", small, large, "--scale", "2.5,1", "--linear").returncode == 0
    assert read_png(large).shape == (77, 753, 3)
