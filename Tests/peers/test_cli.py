"""The command line's contract: help everywhere, a version, usage errors with exit status 2, failures with 1,
JSON for programs, and --stats."""
import json
import os
import subprocess

import numpy as np
import pytest

from conftest import photo, run, write_png

COMMANDS = ["info", "convert", "region", "resize", "thumbnail", "tile", "index", "serve", "view"]

# What each command's help must show: its own options' defaults and accepted values, rendered from the declarations.
HELP_DEFAULTS = {
    "info": ["--json", "--verify"],
    "convert": ["(1-100; default 85)", "(default 1)", "(0-65535; default 0)", "(default 420)", "(0-9; default 6)",
                "(default: the input's)", "(default ffffff)", "(none, deflate, lzw, jpeg or webp; default deflate)"],
    "region": ["in pixels (required)", "(1-100; default 85)", "(default 1)", "; default deflate)"],
    "resize": ["(default lanczos3)", "(1-100; default 85)", "; default deflate)"],
    "thumbnail": ["(default 128>)", "(default tn_%s.jpg)", "(centre, attention or entropy)", "(default lanczos3)",
                  "(1-256; default: one per core)", "(1-100; default 85)"],
    "tile": ["(dz, zoomify, xyz, iiif, grid or tiff; default dz)", "(1-8192; default: dz 254, iiif 512, others 256)",
             "(0-4096; default: dz 1, others 0)", "(onepixel, onetile or one; default: dz onepixel, grid one, others onetile)",
             "--format jpg|png|webp", "(default jpg)", "(default pages)", "(default: zip when OUT ends in .zip, else dir)",
             "(default http://localhost:8000/%s)", "(1-256; default: one per core)", "(1-256; default 1)",
             "(1-100; default 75)"],
    "index": ["--cache DIR", "(default "],
    "serve": ["(0-65535; default 8000)", "(default 127.0.0.1)", "(default /iiif)", "(1-1024; default: 2 per core)",
              "--cache DIR", "--cache-size SIZE", "(default 8G)", "--no-cache", "--response-cache SIZE", "(default 128M)"],
    "view": ["(default 1024x768)", "--memory-cache SIZE", "(default 256M)", "(1-256; default: one per core)",
             "--cache DIR", "--cache-size SIZE", "(default 8G)", "--no-cache"],
}


def test_tool_help_lists_every_command(tessera):
    result = run(tessera, "--help")
    assert result.returncode == 0
    for command in COMMANDS:
        assert f"  {command} " in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_its_defaults(tessera, command):
    for flag in ["--help", "-h"]:
        result = run(tessera, command, flag)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"usage: tessera {command}")
        for common in ["--stats", "--memory-limit SIZE", "(default 1G)", "-h, --help", "--block-cache SIZE",
                       "(default 256M)", "--block-cache-folder DIR", "--block-cache-folder-size SIZE", "(default 4G)"]:
            assert common in result.stdout
        for shown in HELP_DEFAULTS[command]:
            assert shown in result.stdout, shown


def test_help_is_shown_even_when_a_required_option_is_missing(tessera):
    result = run(tessera, "region", "--help")
    assert result.returncode == 0 and "--rect x,y,w,h" in result.stdout


@pytest.mark.parametrize("old, new", [("--pyramid-cache", "--cache"), ("--no-pyramid-cache", "--no-cache")])
def test_view_refuses_the_old_cache_names_with_the_new_ones(tessera, tmp_path, old, new):
    result = run(tessera, "view", tmp_path / "x.png", old, *([tmp_path] if old == "--pyramid-cache" else []))
    assert result.returncode == 2
    assert f"{old} is now {new}" in result.stderr.splitlines()[0]


def test_version(tessera):
    result = run(tessera, "--version")
    assert result.returncode == 0 and result.stdout.startswith("tessera ")


@pytest.mark.parametrize("args", [["nonsense"], ["convert", "only-one"], ["info", "--bogus", "x"],
                                  ["convert", "a.png", "b.png", "-Q", "500"], ["region", "a.png", "b.png"],
                                  ["region", "a.png", "b.png", "--rect", "1,2,3"], ["convert", "a", "b", "--scale", "2/3"],
                                  ["tile", "a", "b", "--layout", "nope"], ["serve", ".", "--port", "70000"],
                                  ["view", "x", "--size", "10x10"], ["thumbnail", "a", "--threads", "0"],
                                  ["resize", "a", "b", "--scale", "-1"], ["convert", "a", "b", "--quality"]])
def test_usage_errors_exit_with_status_2(tessera, args):
    result = run(tessera, *args)
    assert result.returncode == 2
    assert result.stderr.startswith("tessera: ")


def test_unknown_output_extension_is_a_usage_error_before_anything_is_written(tessera, tmp_path):
    source = tmp_path / "in.png"
    write_png(source, photo(10, 10))
    result = run(tessera, "convert", source, tmp_path / "out.xyz")
    assert result.returncode == 2 and "extension" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.png"]


def test_info_json_is_machine_readable_and_reports_failures_per_file(tessera, tmp_path):
    source = tmp_path / "in.png"
    write_png(source, photo(10, 20, 4))
    result = run(tessera, "info", "--json", source, tmp_path / "missing.png")
    assert result.returncode == 1
    reports = json.loads(result.stdout)
    assert reports[0]["width"] == 20 and reports[0]["height"] == 10 and reports[0]["hasAlpha"] is True
    assert "no such file" in reports[1]["error"]


def test_info_verify_decodes_every_pixel_and_names_a_cut_file(tessera, tmp_path):
    """A plain JPEG large enough to be decoded on every core through its index: intact it verifies; cut short in
    its image data it does not, with exit status 1 and an error naming the file."""
    from PIL import Image
    source = tmp_path / "big.jpg"
    Image.fromarray(np.tile(photo(1025, 1000), (4, 4, 1))).save(source, quality=85)
    cache = tmp_path / "cache"
    assert run(tessera, "index", source, "--cache", cache).returncode == 0
    result = run(tessera, "info", "--json", "--verify", source, "--cache", cache)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["verified"] is True
    cut = tmp_path / "cut.jpg"
    data = source.read_bytes()
    cut.write_bytes(data[:len(data) * 3 // 5])
    result = run(tessera, "info", "--json", "--verify", cut, "--cache", cache)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["verified"] is False and str(cut) in report["error"]


def test_stats_prints_time_and_peak_memory(tessera, tmp_path):
    source = tmp_path / "in.png"
    write_png(source, photo(10, 10))
    result = run(tessera, "info", source, "--stats")
    assert result.returncode == 0
    assert "stats: wall" in result.stderr and "peak RSS" in result.stderr


def test_info_reports_orientation_icc_and_progressive_from_the_header(tessera, tmp_path):
    from PIL import Image, ImageCms
    image = Image.fromarray(photo(30, 40))
    exif = Image.Exif()
    exif[0x0112] = 6
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    image.save(tmp_path / "tagged.jpg", exif=exif, icc_profile=icc, progressive=True)
    image.save(tmp_path / "tagged.png", exif=exif, icc_profile=icc)
    image.save(tmp_path / "tagged.webp", exif=exif, icc_profile=icc)
    for name in ["tagged.jpg", "tagged.png", "tagged.webp"]:
        result = run(tessera, "info", "--json", tmp_path / name)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["orientation"] == 6, name
        assert report["hasICCProfile"] is True, name
    assert json.loads(run(tessera, "info", "--json", tmp_path / "tagged.jpg").stdout)["isProgressive"] is True


def test_a_dash_reads_standard_input_and_writes_standard_output_once_complete(tessera, tmp_path):
    """IN - is the image piped in (read whole); OUT - sends the image to standard output in --format's format once
    it is complete: the bytes a file of that extension gets, and nothing, not even a temporary file, on a failure.
    A thumbnail of standard input is named stdin in the current folder; tile refuses it (it reads as needed)."""
    write_png(tmp_path / "in.png", photo(200, 300))
    png = (tmp_path / "in.png").read_bytes()
    (tmp_path / "tmp").mkdir()
    environment = dict(os.environ, TMPDIR=str(tmp_path / "tmp"))

    def piped(*args, stdin=b""):
        return subprocess.run([tessera, *map(str, args)], input=stdin, capture_output=True, timeout=60,
                              env=environment, cwd=tmp_path)

    for extension in ["jpg", "png", "webp", "tif", "jp2", "jph", "j2c"]:
        assert run(tessera, "convert", tmp_path / "in.png", tmp_path / f"file.{extension}").returncode == 0
        result = piped("convert", "-", "-", "--format", extension, stdin=png)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (tmp_path / f"file.{extension}").read_bytes(), extension
    region = piped("region", "-", "-", "--rect", "10,20,64,48", "--format", "png", stdin=png)
    resized = piped("resize", tmp_path / "in.png", "-", "--scale", "0.5", "--format", "webp")
    for result, size in [(region, (64, 48)), (resized, (150, 100))]:
        assert result.returncode == 0, result.stderr
        info = json.loads(piped("info", "-", "--json", stdin=result.stdout).stdout)
        assert (info["width"], info["height"]) == size
    assert piped("thumbnail", tmp_path / "in.png", "-s", "64").returncode == 0
    assert piped("thumbnail", "-", "-s", "64", stdin=png).returncode == 0
    assert (tmp_path / "tn_stdin.jpg").read_bytes() == (tmp_path / "tn_in.jpg").read_bytes()
    failures = [
        (piped("convert", tmp_path / "in.png", "-"), 2, "name its format with --format"),
        (piped("convert", tmp_path / "in.png", tmp_path / "x.jpg", "--format", "png"), 2, "--format is for OUT -"),
        (piped("convert", "-", "-", "--format", "png", stdin=b"not an image"), 1, "tessera: standard input: "),
        (piped("convert", "-", "-", "--format", "png", stdin=png[:len(png) // 2]), 1, "tessera: standard input: "),
        (piped("info", "-", "--memory-limit", "1K", stdin=png), 1, "over the memory limit"),
        (piped("info", "-", "-", stdin=png), 2, "read once"),
        (piped("thumbnail", "-", "-", stdin=png), 2, "read once"),
        (piped("thumbnail", "-", "-o", "cut.jpg", stdin=png[:len(png) // 2]), 1, "tessera: standard input: "),
        (piped("tile", "-", tmp_path / "pyramid", stdin=png), 2, "standard input (-) is not an input here"),
        (piped("tile", "--from", "-", "-o", "%s", stdin=b"-\n"), 2, "standard input (-) is not an input here"),
    ]
    for result, status, words in failures:
        assert result.returncode == status and words in result.stderr.decode(), result.stderr
        assert result.stdout == b"" or result.args[1] == "info"
    assert not os.listdir(tmp_path / "tmp") and not (tmp_path / "x.jpg").exists() and not (tmp_path / "cut.jpg").exists()
    assert not (tmp_path / "pyramid").exists() and not (tmp_path / "pyramid_files").exists()
