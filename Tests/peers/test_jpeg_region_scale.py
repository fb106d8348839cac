"""JPEG region and reduced-scale reads agree with libjpeg's own (djpeg) output for the same request."""
import shutil

import numpy as np
import pytest
from PIL import Image

from conftest import djpeg, photo, read_png, run

pytestmark = pytest.mark.skipif(shutil.which("djpeg") is None, reason="djpeg is not installed")


@pytest.fixture(scope="module")
def jpeg(tmp_path_factory):
    path = tmp_path_factory.mktemp("jpeg") / "photo.jpg"
    Image.fromarray(photo(613, 829, 3, seed=31)).save(path, quality=88)
    return path


@pytest.mark.parametrize("scale", [1, 2, 4, 8])
def test_reduced_scale_equals_djpeg_scale(tessera, tmp_path, jpeg, scale):
    target = tmp_path / "scaled.png"
    assert run(tessera, "convert", jpeg, target, "--scale", f"1/{scale}").returncode == 0
    expected = djpeg("-scale", f"1/{scale}", str(jpeg))
    assert np.abs(read_png(target).astype(int) - expected.astype(int)).max() == 0


@pytest.mark.parametrize("rect", [(0, 0, 829, 613), (100, 200, 300, 100), (5, 7, 1, 1), (828, 612, 1, 1),
                                  (401, 333, 428, 280)])
def test_region_equals_the_same_rectangle_of_a_full_decode(tessera, tmp_path, jpeg, rect):
    target = tmp_path / "region.png"
    result = run(tessera, "region", jpeg, target, "--rect", ",".join(map(str, rect)))
    assert result.returncode == 0, result.stderr
    x, y, w, h = rect
    full = djpeg(str(jpeg))
    assert np.abs(read_png(target).astype(int) - full[y:y + h, x:x + w].astype(int)).max() == 0


def test_region_outside_the_image_is_a_usage_error(tessera, tmp_path, jpeg):
    result = run(tessera, "region", jpeg, tmp_path / "x.png", "--rect", "800,600,100,100")
    assert result.returncode == 2
    assert "not inside the 829x613 image" in result.stderr
    assert not (tmp_path / "x.png").exists()
