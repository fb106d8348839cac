"""Images read from a web server by byte ranges (issue 15, parts 2 and 4): Debian's nginx serves a folder of a
pyramidal TIFF (libvips' and Tessera's), a plain JPEG, a PNG, a JP2, a Deep Zoom tree and a IIIF level-0 tree; every
command over their URLs gives what it gives over the files; `serve --source-url` answers as a local serve; tiles of a
remote pyramidal TIFF cost at most 1.2 range requests each, cold (counted in nginx's access log); a file replaced
while served is detected and opened afresh; a missing file, an unreachable host and a server without ranges each
give their one-line message and exit 1, and a host found down is not tried again for 2 s. Each nginx and server is
the test's own, on loopback, stopped by PID."""
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from PIL import Image

from conftest import photo, run
from daemons import Nginx, free_port, static_host, stop, wait_for

FILES = ["vips.tif", "ours.tif", "plain.jpg", "plain.png", "plain.jp2", "dz.dzi", "iiif/info.json", "zipped.zip"]


def public_folder():
    """A new folder outside pytest's (which only its owner may enter), as nginx's workers read it as an
    unprivileged user."""
    folder = Path(tempfile.mkdtemp(prefix="tessera-remote-"))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def site(tessera, tmp_path_factory):
    """The static host's folder, and nginx serving it."""
    folder = public_folder()
    source = tmp_path_factory.mktemp("source") / "photo.png"
    Image.fromarray(photo(2000, 3000, seed=15)).save(source)
    assert subprocess.run(["vips", "tiffsave", source, folder / "vips.tif", "--tile", "--pyramid", "--compression",
                           "jpeg", "--tile-width", "256", "--tile-height", "256"], capture_output=True).returncode == 0
    for arguments in [["tile", source, folder / "ours.tif", "--layout", "tiff", "--tile-size", "256"],
                      ["convert", source, folder / "plain.jpg"], ["convert", source, folder / "plain.png"],
                      ["convert", source, folder / "plain.jp2"], ["tile", source, folder / "dz"],
                      ["tile", source, folder / "iiif", "--layout", "iiif"],
                      ["tile", source, folder / "zipped", "--layout", "iiif", "--container", "zip"]]:
        result = run(tessera, *arguments)
        assert result.returncode == 0, result.stderr
    host = static_host(tmp_path_factory.mktemp("nginx"), folder)
    yield folder, host
    host.stop()
    shutil.rmtree(folder)


def requests_in_log(host, name):
    """The GETs nginx logged for `/name` so far."""
    log = host.root / "logs" / "access.log"
    return sum(1 for line in log.read_text().splitlines() if f'"GET /{name} ' in line)


def same_tree(left, right):
    """The files under two folders, by relative path, with their bytes (the build marker left out: it names the
    source, which differs)."""
    def files(root):
        return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*")
                if path.is_file() and path.name != ".tessera-pyramid"}
    return files(left) == files(right)


@pytest.mark.parametrize("name", FILES)
def test_commands_over_a_url_give_what_they_give_over_the_file(tessera, site, tmp_path, name):
    folder, host = site
    url, path = f"{host.base}/{name}", folder / name
    remote, local = run(tessera, "info", url), run(tessera, "info", path)
    assert remote.returncode == 0, remote.stderr
    assert remote.stdout.splitlines()[1:] == local.stdout.splitlines()[1:]
    for command in [["convert"], ["region", "--rect", "700,300,900,650"], ["region", "--rect", "0,0,3000,2000",
                                                                            "--scale", "1/4"]]:
        for label, source in [("remote", url), ("local", path)]:
            result = run(tessera, *command, source, tmp_path / f"{label}.png")
            assert result.returncode == 0, result.stderr
        assert (tmp_path / "remote.png").read_bytes() == (tmp_path / "local.png").read_bytes(), command


@pytest.mark.parametrize("name", ["vips.tif", "plain.jpg", "plain.png"])
def test_thumbnails_and_tiles_over_a_url_match_the_file(tessera, site, tmp_path, name):
    folder, host = site
    for label, source in [("remote", f"{host.base}/{name}"), ("local", folder / name)]:
        (tmp_path / label).mkdir()
        result = run(tessera, "thumbnail", source, "-s", "300", "-o", str(tmp_path / label / "tn_%s.png"))
        assert result.returncode == 0, result.stderr
        result = run(tessera, "tile", source, tmp_path / label / "pyramid")
        assert result.returncode == 0, result.stderr
    assert same_tree(tmp_path / "remote", tmp_path / "local")


def test_tile_from_a_list_of_urls_names_outputs_by_the_last_path_component(tessera, site, tmp_path):
    _, host = site
    (tmp_path / "list.txt").write_text(f"{host.base}/plain.jpg\n{host.base}/vips.tif?version=1\n")
    result = run(tessera, "tile", "--from", tmp_path / "list.txt", "-o", "out/%s", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "plain.dzi").exists() and (tmp_path / "out" / "vips.dzi").exists()


def serve(tessera, *arguments):
    """`tessera serve` with `arguments` on a free port: the process and its base URL (before `/iiif`)."""
    process = subprocess.Popen([tessera, "serve", *map(str, arguments), "--port", "0", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    banner = process.stdout.readline()
    if "serving" not in banner:
        stop(process)
        pytest.fail(f"serve did not start: {process.stderr.read()}")
    return process, banner.split(" at ")[1].split()[0].rstrip("/").removesuffix("/iiif")


def fetch(url):
    """Status and body of a GET, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def without_id(info):
    document = json.loads(info)
    document.pop("id")
    return document


def tiles(width, height, side=256):
    """Every full-resolution tile's IIIF path of a `width` x `height` image."""
    return [f"{x},{y},{min(side, width - x)},{min(side, height - y)}/{min(side, width - x)},/0/default.jpg"
            for y in range(0, height, side) for x in range(0, width, side)]


@pytest.mark.parametrize("name, local_identifier", [("vips.tif", "vips.tif"), ("ours.tif", "ours.tif"),
                                                   ("plain.jpg", "plain.jpg"), ("dz.dzi", "dz.dzi"),
                                                   ("iiif/info.json", "iiif"), ("zipped.zip", "zipped.zip")])
def test_serve_over_urls_answers_as_a_local_serve(tessera, site, tmp_path, name, local_identifier):
    folder, host = site
    (tmp_path / "catalog.txt").write_text(f"# identifier URL\nimage {host.base}/{name}\n")
    remote, remote_base = serve(tessera, "--source-url", f"{host.base}/{{id}}", "--cache", tmp_path / "cache")
    listed, listed_base = serve(tessera, "--source-catalog", tmp_path / "catalog.txt", "--cache", tmp_path / "cache2")
    local, local_base = serve(tessera, folder, "--cache", tmp_path / "cache3")
    try:
        identifier = name.replace("/", "%2F")
        paths = ["info.json", *tiles(3000, 2000)[::9], "full/600,/0/default.png", "1000,500,800,600/400,/0/gray.png"]
        for path in paths:
            expected = fetch(f"{local_base}/iiif/{local_identifier}/{path}")
            assert expected[0] == 200, path
            for answer in [fetch(f"{remote_base}/iiif/{identifier}/{path}"), fetch(f"{listed_base}/iiif/image/{path}")]:
                assert answer[0] == 200, (path, answer[1][:200])
                if path == "info.json":
                    assert without_id(answer[1]) == without_id(expected[1])
                else:
                    assert answer[1] == expected[1], path
        assert b"cannot be listed" in fetch(remote_base + "/")[1]
        assert b"/iiif/image/info.json" in fetch(listed_base + "/")[1]
        assert fetch(f"{remote_base}/iiif/missing.tif/info.json")[0] == 404
    finally:
        for process in [remote, listed, local]:
            stop(process)


@pytest.mark.parametrize("name", ["vips.tif", "ours.tif"])
def test_tiles_of_a_remote_pyramidal_tiff_cost_at_most_1_2_range_requests_each_cold(tessera, site, tmp_path, name):
    _, host = site
    process, base = serve(tessera, "--source-url", f"{host.base}/{{id}}", "--cache", tmp_path / "cache")
    try:
        before = requests_in_log(host, name)
        paths = tiles(3000, 2000)
        for path in paths:
            status, _ = fetch(f"{base}/iiif/{name}/{path}")
            assert status == 200, path
        requests = requests_in_log(host, name) - before
        assert requests / len(paths) <= 1.2, f"{requests} range requests for {len(paths)} tiles"
    finally:
        stop(process)


@pytest.mark.parametrize("name", ["vips.tif", "plain.jpg"])
def test_a_second_run_reads_its_blocks_from_the_block_cache_folder(tessera, site, tmp_path, name):
    """Blocks kept in --block-cache-folder outlive the run: the same region again costs only the open's request
    (which learns the ETag the blocks are kept under), and gives the same bytes."""
    _, host = site
    url, blocks = f"{host.base}/{name}", tmp_path / "blocks"
    counts = []
    for run_number in range(2):
        before = requests_in_log(host, name)
        result = run(tessera, "region", url, tmp_path / f"run{run_number}.png", "--rect", "700,1300,900,650",
                     "--block-cache-folder", blocks)
        assert result.returncode == 0, result.stderr
        counts.append(requests_in_log(host, name) - before)
    assert counts[0] > 1 and counts[1] == 1, counts
    assert (tmp_path / "run0.png").read_bytes() == (tmp_path / "run1.png").read_bytes()
    assert any(path.suffix == ".block" for path in blocks.iterdir())


def test_processes_sharing_a_block_cache_folder_write_it_whole(tessera, site, tmp_path):
    """Two runs filling one --block-cache-folder at once each give the region; a third finds every block whole."""
    _, host = site
    url, blocks = f"{host.base}/ours.tif", tmp_path / "blocks"
    arguments = ["--rect", "100,200,2800,1700", "--block-cache-folder", str(blocks)]
    runs = [subprocess.Popen([tessera, "region", url, tmp_path / f"run{number}.png", *arguments],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for number in range(2)]
    for process in runs:
        _, error = process.communicate(timeout=120)
        assert process.returncode == 0, error
    before = requests_in_log(host, "ours.tif")
    result = run(tessera, "region", url, tmp_path / "run2.png", *arguments)
    assert result.returncode == 0, result.stderr
    assert requests_in_log(host, "ours.tif") - before == 1
    assert len({(tmp_path / f"run{number}.png").read_bytes() for number in range(3)}) == 1


def test_a_file_replaced_while_served_is_detected_and_opened_afresh(tessera, site, tmp_path):
    folder, host = site
    shutil.copy(folder / "vips.tif", folder / "changing.tif")
    process, base = serve(tessera, "--source-url", f"{host.base}/{{id}}", "--cache", tmp_path / "cache")
    try:
        paths = tiles(3000, 2000)
        assert fetch(f"{base}/iiif/changing.tif/{paths[0]}")[0] == 200
        replacement = tmp_path / "replacement.tif"
        shutil.copy(folder / "ours.tif", replacement)
        os.replace(replacement, folder / "changing.tif")
        answers = [fetch(f"{base}/iiif/changing.tif/{path}") for path in paths[-1:0:-9]]
        changed = [body for status, body in answers if status == 502]
        assert changed, "no request noticed the replacement"
        assert b"changing.tif: changed while being read (ETag " in changed[0] and b" became " in changed[0]
        local, local_base = serve(tessera, folder, "--cache", tmp_path / "cache2")
        try:
            for path in paths[::11]:
                assert fetch(f"{base}/iiif/changing.tif/{path}") == fetch(f"{local_base}/iiif/ours.tif/{path}"), path
        finally:
            stop(local)
    finally:
        stop(process)
        (folder / "changing.tif").unlink()


def one_line_failure(result):
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_missing_file_and_an_unreachable_host_give_one_line_and_exit_1(tessera, site, tmp_path):
    _, host = site
    line = one_line_failure(run(tessera, "info", f"{host.base}/missing.jpg"))
    assert line == f"tessera: {host.base}/missing.jpg: HTTP 404 Not Found"
    nowhere = f"http://127.0.0.1:{free_port()}/image.jpg"
    line = one_line_failure(run(tessera, "convert", nowhere, tmp_path / "out.png", timeout=60))
    assert line.startswith(f"tessera: {nowhere}: ") and "connect" in line
    assert not (tmp_path / "out.png").exists()


def test_an_unreachable_source_is_a_502_naming_the_image_not_the_host(tessera, tmp_path):
    """Served from a host that refuses connections, every request is a 502 whose body names the image and not
    the host or port; the server's log line has the URL and libcurl's words in full."""
    port = free_port()
    process = subprocess.Popen([tessera, "serve", "--source-url", f"http://127.0.0.1:{port}/images/{{id}}",
                                "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = process.stdout.readline().split(" at ")[1].split()[0].rstrip("/").removesuffix("/iiif")
        for path in ["/iiif/x.jpg/info.json", "/iiif/x.jpg/full/max/0/default.jpg", "/stream/x.jpg/100"]:
            status, body = fetch(base + path)
            assert status == 502, (path, status, body)
            assert body.decode().startswith("x.jpg: ") and "127.0.0.1" not in body.decode(), body
            assert str(port) not in body.decode(), body
    finally:
        stop(process)
    log = process.stderr.read()
    assert "GET /iiif/x.jpg/info.json 502 " in log and f"http://127.0.0.1:{port}/images/x.jpg: " in log, log
    # --quiet keeps a failure's line, and only that.
    process, base = serve(tessera, "--source-url", f"http://127.0.0.1:{port}/images/{{id}}")
    try:
        assert fetch(f"{base}/health")[0] == 200 and fetch(f"{base}/iiif/x.jpg/info.json")[0] == 502
    finally:
        stop(process)
    requests = [line for line in process.stderr.read().splitlines() if line.startswith("GET ")]
    assert len(requests) == 1 and "/info.json 502 " in requests[0], requests


def test_a_host_found_down_is_not_tried_again_for_two_seconds(tessera, tmp_path):
    """A request that finds its source's host refusing connections (after its retries) has the server take the
    host as down: a request within 2 s fails at once, untried, though the host is up again; after that it is tried
    and answers. The host is a socket bound but not listening (refusing), then listening."""
    folder = tmp_path / "images"
    folder.mkdir()
    Image.new("RGB", (300, 200), (10, 120, 200)).save(folder / "x.png")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler, bind_and_activate=False)
    host.server_bind()
    port = host.server_address[1]
    process = subprocess.Popen([tessera, "serve", "--source-url", f"http://127.0.0.1:{port}/{{id}}", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    serving = None
    try:
        base = process.stdout.readline().split(" at ")[1].split()[0].rstrip("/").removesuffix("/iiif")
        assert fetch(f"{base}/iiif/x.png/info.json")[0] == 502
        host.server_activate()
        serving = threading.Thread(target=host.serve_forever, daemon=True)
        serving.start()
        status, body = fetch(f"{base}/iiif/x.png/info.json")
        assert status == 502 and b"(not tried again within 2 s)" in body, body
        time.sleep(2.5)
        status, body = fetch(f"{base}/iiif/x.png/info.json")
        assert status == 200 and json.loads(body)["width"] == 300, body
    finally:
        stop(process)
        if serving:
            host.shutdown()
        host.server_close()


def test_a_server_without_ranges_is_read_whole_within_the_budget(tessera, site, tmp_path):
    folder, _ = site
    with Nginx(tmp_path / "nginx", f"""    server {{
        listen 127.0.0.1:{{port}};
        root {folder};
        max_ranges 0;
        location / {{ }}
    }}""") as plain:
        result = run(tessera, "convert", f"{plain.base}/plain.png", tmp_path / "remote.png")
        assert result.returncode == 0, result.stderr
        assert run(tessera, "convert", folder / "plain.png", tmp_path / "local.png").returncode == 0
        assert (tmp_path / "remote.png").read_bytes() == (tmp_path / "local.png").read_bytes()
        line = one_line_failure(run(tessera, "info", f"{plain.base}/vips.tif", "--memory-limit", "100k"))
        assert line.startswith(f"tessera: {plain.base}/vips.tif: the whole file (the server does not serve byte ranges)"
                               " needs "), line


def test_s3_objects_are_read_from_a_custom_endpoint_signed_only_with_credentials(tessera, site, tmp_path):
    """`s3://bucket/key` through an S3-compatible endpoint (nginx here, path style: ENDPOINT/BUCKET/KEY): with the
    AWS variables every request carries libcurl's SigV4 Authorization and the payload hash; without them none."""
    folder, _ = site
    with Nginx(tmp_path / "nginx", f"""    log_format signed '$request|$http_authorization|$http_x_amz_content_sha256';
    server {{
        listen 127.0.0.1:{{port}};
        access_log {tmp_path}/signed.log signed;
        location /scans/ {{ alias {folder}/; }}
    }}""") as store:
        local = run(tessera, "info", folder / "vips.tif")
        for credentials in [True, False]:
            environment = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
            environment["AWS_ENDPOINT_URL"] = store.base
            if credentials:
                environment.update(AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="secret", AWS_REGION="eu-west-1")
            logged = (tmp_path / "signed.log").read_text().splitlines()
            remote = run(tessera, "info", "s3://scans/vips.tif", env=environment)
            assert remote.returncode == 0, remote.stderr
            assert remote.stdout.splitlines()[1:] == local.stdout.splitlines()[1:]
            lines = (tmp_path / "signed.log").read_text().splitlines()[len(logged):]
            assert lines and all(line.startswith("GET /scans/vips.tif ") for line in lines)
            for line in lines:
                _, authorization, content_hash = line.split("|")
                if credentials:
                    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), line
                    assert "/eu-west-1/s3/aws4_request" in authorization and content_hash != "-", line
                else:
                    assert authorization == "-" and content_hash == "-", line


def test_a_file_replaced_during_a_long_tile_run_fails_clearly_and_leaves_nothing(tessera, site, tmp_path):
    folder, _ = site
    www = public_folder()
    # Throttled so that the open's first 64 KiB take two seconds: the file is replaced after one, and every read
    # after the open asks the new version.
    shutil.copy(folder / "vips.tif", www / "long.tif")
    rate = 32
    with Nginx(tmp_path / "nginx", f"""    server {{
        listen 127.0.0.1:{{port}};
        root {www};
        limit_rate {rate}k;
        location / {{ }}
    }}""") as slow:
        process = subprocess.Popen([tessera, "tile", f"{slow.base}/long.tif", tmp_path / "out"],
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        shutil.copy(folder / "plain.png", tmp_path / "replacement")
        os.replace(tmp_path / "replacement", www / "long.tif")
        _, errors = process.communicate(timeout=60)
    shutil.rmtree(www)
    assert process.returncode == 1
    assert errors.strip().splitlines() == [errors.strip()]
    assert f"{slow.base}/long.tif: changed while being read (ETag " in errors and " became " in errors, errors
    assert not (tmp_path / "out.dzi").exists() and not (tmp_path / "out_files").exists()
