"""libSDL2, libcurl, libmicrohttpd and the codec libraries other than libjpeg and libpng (libtiff, libwebp, libwebpdemux,
OpenJPEG, libxml2) are opened on first use, not linked: a command loads only what it needs, and a command that needs one
it cannot load says which package to install and exits 1, leaving no output behind. A library is made unloadable by an empty file of its
name in a folder on LD_LIBRARY_PATH, which the dynamic loader searches first and then refuses ("file too short"):
no privileges or namespaces needed, so the tests run in a chroot too."""
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import photo, run, write_png
from daemons import stop

LIBRARIES = {"sdl": "libSDL2-2.0.so.0", "curl": "libcurl.so.4", "microhttpd": "libmicrohttpd.so.12"}
CODECS = ["libtiff.so.6", "libwebp.so.7", "libwebpdemux.so.2", "libopenjp2.so.7", "libxml2.so.2"]


def hidden(soname, folder, *command):
    """Runs `command` with `soname` replaced by an empty file in `folder`, ahead of the system's copy."""
    folder.mkdir(exist_ok=True)
    (folder / soname).write_bytes(b"")
    return run(*command, env={**os.environ, "LD_LIBRARY_PATH": str(folder)})


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "small.png"
    write_png(path, photo(64, 96, 3, seed=3))
    return path


def test_the_binary_does_not_link_sdl_curl_microhttpd_or_the_optional_codecs(tessera):
    linked = run("ldd", tessera).stdout
    assert all(soname not in linked for soname in [*LIBRARIES.values(), *CODECS]), linked


def test_view_without_sdl_names_the_package_and_local_commands_still_work(tessera, image, tmp_path):
    script = tmp_path / "script.json"
    for steps in ('[{"frames": 1}]', '[{"key": "i"}]'):
        script.write_text(steps)
        result = hidden(LIBRARIES["sdl"], tmp_path / "libraries", tessera, "view", image, "--script", script)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith("tessera: ") and result.stderr.count("\n") == 1, result.stderr
        assert "libSDL2-2.0.so.0" in result.stderr and "apt-get install libsdl2-2.0-0" in result.stderr
    assert hidden(LIBRARIES["sdl"], tmp_path / "libraries", tessera, "info", image).returncode == 0


def test_a_url_without_curl_names_the_package_and_local_commands_still_work(tessera, image, tmp_path):
    result = hidden(LIBRARIES["curl"], tmp_path / "libraries", tessera, "info", "http://127.0.0.1:9/small.png")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("tessera: ") and result.stderr.count("\n") == 1, result.stderr
    assert "libcurl.so.4" in result.stderr and "apt-get install libcurl4" in result.stderr
    assert hidden(LIBRARIES["curl"], tmp_path / "libraries", tessera, "info", image).returncode == 0


def test_serve_without_microhttpd_names_the_package_and_local_commands_still_work(tessera, image, tmp_path):
    result = hidden(LIBRARIES["microhttpd"], tmp_path / "libraries", tessera, "serve", image.parent, "--port", "0")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("tessera: ") and result.stderr.count("\n") == 1, result.stderr
    assert "libmicrohttpd.so.12" in result.stderr and "apt-get install libmicrohttpd12" in result.stderr
    assert hidden(LIBRARIES["microhttpd"], tmp_path / "libraries", tessera, "info", image).returncode == 0


@pytest.mark.parametrize("soname, package, make, command", [
    ("libtiff.so.6", "libtiff6", None, ["convert", "{image}", "{out}.tif"]),
    ("libtiff.so.6", "libtiff6", ["convert", "{image}", "{out}.tif"], ["info", "{out}.tif"]),
    ("libwebp.so.7", "libwebp7", None, ["convert", "{image}", "{out}.webp"]),
    ("libwebp.so.7", "libwebp7", ["convert", "{image}", "{out}.webp"], ["info", "{out}.webp"]),
    ("libwebpdemux.so.2", "libwebpdemux2", ["convert", "{image}", "{out}.webp"], ["info", "{out}.webp"]),
    ("libopenjp2.so.7", "libopenjp2-7", None, ["convert", "{image}", "{out}.jp2"]),
    ("libopenjp2.so.7", "libopenjp2-7", ["convert", "{image}", "{out}.jp2"], ["info", "{out}.jp2"]),
    ("libxml2.so.2", "libxml2", ["tile", "{image}", "{out}"], ["info", "{out}.dzi"]),
])
def test_a_codec_it_cannot_load_names_the_package_and_local_commands_still_work(tessera, image, tmp_path, soname,
                                                                                package, make, command):
    out = tmp_path / "out"
    fill = lambda words: [word.format(image=image, out=out) for word in words]
    if make:
        assert run(tessera, *fill(make)).returncode == 0
    before = sorted(tmp_path.iterdir())
    result = hidden(soname, tmp_path / "libraries", tessera, *fill(command))
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("tessera: ") and result.stderr.count("\n") == 1, result.stderr
    assert soname in result.stderr and f"apt-get install {package}" in result.stderr, result.stderr
    assert sorted(path for path in tmp_path.iterdir() if path.name != "libraries") == before
    assert hidden(soname, tmp_path / "libraries", tessera, "info", image).returncode == 0


def serving(tessera, root, env=None):
    """`tessera serve root` on a free port, its process and its base URL once it has printed its banner."""
    process = subprocess.Popen([tessera, "serve", root, "--port", "0", "--no-cache", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    banner = process.stdout.readline()
    if "serving" not in banner:
        stop(process)
        raise AssertionError(process.stderr.read())
    return process, banner.split(" at ")[1].split()[0].rstrip("/")


def test_serve_opens_the_codecs_before_its_first_request(tessera, image, tmp_path):
    process, _ = serving(tessera, image.parent)
    try:
        # Mapped under the files' own names (libopenjp2.so.7 is libopenjp2.so.2.5.0).
        mapped = Path(f"/proc/{process.pid}/maps").read_text()
        assert all(f"/{soname.split('.so')[0]}.so" in mapped for soname in CODECS), mapped
    finally:
        stop(process)


def test_serve_without_a_codec_it_cannot_load_fails_only_the_images_that_need_it(tessera, image, tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    shutil.copy(image, root / "plain.png")
    assert run(tessera, "convert", image, root / "tiled.tif").returncode == 0
    folder = tmp_path / "libraries"
    folder.mkdir()
    (folder / "libtiff.so.6").write_bytes(b"")
    process, base = serving(tessera, root, env={**os.environ, "LD_LIBRARY_PATH": str(folder)})
    try:
        with urllib.request.urlopen(f"{base}/plain/info.json", timeout=10) as response:
            assert response.status == 200
        with pytest.raises(urllib.error.HTTPError) as failure:
            urllib.request.urlopen(f"{base}/tiled/info.json", timeout=10)
        assert failure.value.code == 500
        assert "apt-get install libtiff6" in failure.value.read().decode()
    finally:
        stop(process)
