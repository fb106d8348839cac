"""libSDL2 and libcurl are opened on first use, not linked: a local command loads neither, and a command that needs
one it cannot load says which package to install and exits 1. A library is hidden by mounting /dev/null over it in a
private user and mount namespace (`unshare -rm`), so these tests skip where that is not allowed."""
import re
import subprocess

import pytest

from conftest import photo, run, write_png

LIBRARIES = {"sdl": "libSDL2-2.0.so.0", "curl": "libcurl.so.4"}


def library_file(soname):
    """The file the dynamic loader opens for `soname`, from ldconfig's cache."""
    listing = run("ldconfig", "-p").stdout
    match = re.search(rf"^\s*{re.escape(soname)} \(libc6[^)]*\) => (\S+)$", listing, re.M)
    assert match, f"{soname} is not installed"
    return match.group(1)


def hidden(soname, *command):
    """Runs `command` with `soname`'s file replaced by an empty one, in namespaces of its own."""
    script = 'mount --bind /dev/null "$1" && shift && exec "$@"'
    return run("unshare", "-rm", "sh", "-c", script, "sh", library_file(soname), *map(str, command))


@pytest.fixture(scope="module")
def namespaces():
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("user and mount namespaces are not allowed here")


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "small.png"
    write_png(path, photo(64, 96, 3, seed=3))
    return path


def test_the_binary_does_not_link_sdl_or_curl(tessera):
    linked = run("ldd", tessera).stdout
    assert all(soname not in linked for soname in LIBRARIES.values()), linked


def test_view_without_sdl_names_the_package_and_local_commands_still_work(tessera, namespaces, image, tmp_path):
    script = tmp_path / "script.json"
    for steps in ('[{"frames": 1}]', '[{"key": "i"}]'):
        script.write_text(steps)
        result = hidden(LIBRARIES["sdl"], tessera, "view", image, "--script", script)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith("tessera: ") and result.stderr.count("\n") == 1, result.stderr
        assert "libSDL2-2.0.so.0" in result.stderr and "apt-get install libsdl2-2.0-0" in result.stderr
    assert hidden(LIBRARIES["sdl"], tessera, "info", image).returncode == 0


def test_a_url_without_curl_names_the_package_and_local_commands_still_work(tessera, namespaces, image):
    result = hidden(LIBRARIES["curl"], tessera, "info", "http://127.0.0.1:9/small.png")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("tessera: ") and result.stderr.count("\n") == 1, result.stderr
    assert "libcurl.so.4" in result.stderr and "apt-get install libcurl4" in result.stderr
    assert hidden(LIBRARIES["curl"], tessera, "info", image).returncode == 0
