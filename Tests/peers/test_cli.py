"""The command line's contract: help everywhere, a version, usage errors with exit status 2, failures with 1,
JSON for programs, and --stats."""
import json

import pytest

from conftest import photo, run, write_png

COMMANDS = ["info", "convert", "region"]


def test_tool_help_lists_every_command(tessera):
    result = run(tessera, "--help")
    assert result.returncode == 0
    for command in COMMANDS:
        assert f"  {command} " in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(tessera, command):
    result = run(tessera, command, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith(f"usage: tessera {command}")
    assert "--stats" in result.stdout


def test_version(tessera):
    result = run(tessera, "--version")
    assert result.returncode == 0 and result.stdout.startswith("tessera ")


@pytest.mark.parametrize("args", [["nonsense"], ["convert", "only-one"], ["info", "--bogus", "x"],
                                  ["convert", "a.png", "b.png", "-Q", "500"], ["region", "a.png", "b.png"],
                                  ["region", "a.png", "b.png", "--rect", "1,2,3"], ["convert", "a", "b", "--scale", "2/3"]])
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
