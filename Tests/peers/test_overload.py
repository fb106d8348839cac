"""`tessera serve` under overload, on loopback: 64 concurrent `full/max` renders of a 100 MP JPEG each answered
with an image or a 503 with Retry-After and the peak RSS within the render budget plus a fixed overhead; a render
longer than the connection timeout holding up none of the other connections of its polling thread; SIGTERM
under load answering every request sent before it, then exiting 0 within the grace period; /metrics in
Prometheus' text format agreeing with the requests made; the access log keeping the query string; 1,000
concurrent connections over a pyramid's tiles all answered, by a server started with a soft limit of open files
below that (Linux starts processes at 1,024), which it raises."""
import http.client
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import photo, run
from daemons import free_port, stop, wait_for, answers

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Benchmarks"))
import serve_benchmark  # noqa: E402  (tile_paths and run_wrk, as the benchmark drives wrk)

WIDTH, HEIGHT = 12000, 8333
LINKS = 64
RENDER_MEMORY = 256 << 20
# What the process holds besides renders: the executable and its libraries, 64 request threads' stacks and
# malloc arenas, libmicrohttpd's buffers, the open images.
OVERHEAD = 160 << 20


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """A folder of one 12000 x 8333 JPEG under LINKS names (hard links: distinct paths, so distinct renders that
    the response cache cannot coalesce), and a small image."""
    root = tmp_path_factory.mktemp("overload")
    small = np.random.default_rng(19).integers(0, 256, (834, 1200, 3), dtype=np.uint8)
    big = Image.fromarray(small).resize((WIDTH, HEIGHT), Image.BILINEAR)
    big.save(root / "big_00.jpg", quality=85)
    for index in range(1, LINKS):
        os.link(root / "big_00.jpg", root / f"big_{index:02}.jpg")
    Image.fromarray(small[:300, :400]).save(root / "small.png")
    return root


class Server:
    """A `tessera serve` of `root` on a free loopback port with `options`; its stderr (the access log) in a file."""

    def __init__(self, tessera, root, tmp_path, *options):
        self.port = free_port()
        self.log = tmp_path / f"serve-{self.port}.log"
        self.stderr = open(self.log, "w")
        self.process = subprocess.Popen([tessera, "serve", str(root), "--port", str(self.port), "--no-cache",
                                         *map(str, options)], stdout=subprocess.DEVNULL, stderr=self.stderr)
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for(lambda: self.process.poll() is not None or answers(self.base + "/metrics"), 20, "tessera serve answers")
        assert self.process.poll() is None, self.log.read_text()

    def peak_rss(self):
        """VmHWM from /proc/PID/status, in bytes."""
        status = open(f"/proc/{self.process.pid}/status").read()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024

    def close(self):
        stop(self.process)
        self.stderr.close()


def get(port, path, timeout=120):
    """status, headers (lower-case names), body of one GET on a connection of its own."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Connection": "close"})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def assert_image_or_busy(status, headers, body):
    """A whole JPEG, or a 503 telling the client when to come back."""
    if status == 200:
        assert headers["content-type"] == "image/jpeg"
        assert body[:2] == b"\xff\xd8" and body[-2:] == b"\xff\xd9", "a whole JPEG"
    else:
        assert status == 503, (status, body[:200])
        assert int(headers["retry-after"]) >= 1


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*\})? '
                    r'([-+]?(?:[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|Inf|NaN))$')


def parse_metrics(text):
    """Prometheus' text exposition format 0.0.4, strictly: HELP and TYPE lines before their samples, each family's
    samples together, every line a comment or a sample. Returns {(name, frozenset(labels)): value}."""
    assert text.endswith("\n")
    samples, types, seen = {}, {}, []
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in {"counter", "gauge", "histogram", "summary", "untyped"} and name not in types
            types[name] = kind
            seen.append(name)
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name, labels, value = match.group(1), match.group(2) or "", match.group(3)
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        assert family == seen[-1], f"{name} outside its family's block"
        pairs = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', labels))
        samples[(name, pairs)] = float(value)
    for name, kind in types.items():
        if kind == "histogram":
            for key, count in samples.items():
                if key[0] == name + "_count":
                    labels = dict(key[1])
                    infinity = frozenset({**labels, "le": "+Inf"}.items())
                    assert samples[(name + "_bucket", infinity)] == count
    return samples


def total(samples, name, **labels):
    return sum(value for (sample, pairs), value in samples.items()
               if sample == name and all((key, value) in pairs for key, value in labels.items()))


def test_64_full_max_renders_are_answered_within_the_render_budget(tessera, images, tmp_path):
    server = Server(tessera, images, tmp_path, "--threads", 64, "--response-cache", "1K", "--quiet",
                    "--render-memory", RENDER_MEMORY, "--render-queue", 16, "--render-wait", 5)
    try:
        baseline = server.peak_rss()
        results = [None] * LINKS

        def fetch(index):
            results[index] = get(server.port, f"/iiif/big_{index:02}.jpg/full/max/0/default.jpg")

        threads = [threading.Thread(target=fetch, args=(index,)) for index in range(LINKS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=90)
        assert all(result is not None for result in results), "every request answered"
        for result in results:
            assert_image_or_busy(*result)
        images_sent = sum(result[0] == 200 for result in results)
        assert images_sent >= 1
        peak = server.peak_rss()
        print(f"\n64 x full/max: {images_sent} images, {LINKS - images_sent} 503s, peak RSS {peak >> 20} MiB "
              f"(idle {baseline >> 20} MiB), budget {RENDER_MEMORY >> 20} MiB + overhead {OVERHEAD >> 20} MiB")
        assert peak <= RENDER_MEMORY + OVERHEAD
        samples = parse_metrics(get(server.port, "/metrics")[2].decode())
        assert total(samples, "tessera_http_requests_total", route="iiif", status="200") == images_sent
        assert total(samples, "tessera_http_requests_total", route="iiif", status="503") == LINKS - images_sent
        # A 503 comes from the workers' queue (waited too long) or from the render budget's.
        worker_refusals = total(samples, "tessera_worker_refusals_total")
        assert worker_refusals + total(samples, "tessera_render_refusals_total") == LINKS - images_sent
        assert total(samples, "tessera_response_cache_misses_total") == LINKS - worker_refusals
        assert total(samples, "tessera_workers_busy") == 0 and total(samples, "tessera_workers_queued") == 0
        assert total(samples, "tessera_http_request_duration_seconds_count", route="iiif") == LINKS
        assert total(samples, "tessera_renders_in_flight") == 0 and total(samples, "tessera_render_memory_bytes") == 0
        assert total(samples, "tessera_render_memory_limit_bytes") == RENDER_MEMORY
        sent = sum(len(result[2]) for result in results if result[0] == 200)
        assert total(samples, "tessera_http_response_bytes_total", route="iiif") >= sent
    finally:
        server.close()


def test_a_long_render_holds_up_no_other_connection_of_its_polling_thread(tessera, images, tmp_path):
    """One polling thread and a 1 s connection timeout: while a render longer than that runs (on a worker), the
    thread's other kept-alive connections are answered at once, every time, on the same sockets. Before, their
    requests waited unread behind the render, and were closed unanswered once it ended."""
    timeout = 1
    server = Server(tessera, images, tmp_path, "--threads", 1, "--connection-timeout", timeout, "--quiet")
    kept = [http.client.HTTPConnection("127.0.0.1", server.port, timeout=60) for _ in range(4)]

    def ask(connection, path):
        start = time.monotonic()
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - start

    try:
        for connection in kept:
            assert ask(connection, "/iiif/small.png/info.json")[0] == 200
        sockets = [connection.sock for connection in kept]
        render = {}

        def slow():
            start = time.monotonic()
            # A 25 MP WebP: several seconds of decoding and encoding (a PNG's 1.8 s fell short of twice the
            # timeout on a faster machine).
            render["answer"] = get(server.port, "/iiif/big_00.jpg/full/max/0/default.webp")
            render["seconds"] = time.monotonic() - start

        thread = threading.Thread(target=slow)
        thread.start()
        time.sleep(0.2)
        latencies = []
        while thread.is_alive():
            for connection in kept:
                for path in ["/health", "/iiif/small.png/info.json", "/iiif/small.png/0,0,256,256/256,/0/default.jpg"]:
                    status, seconds = ask(connection, path)
                    assert status == 200, path
                    latencies.append(seconds)
            time.sleep(0.1)
        thread.join()
        status, headers, body = render["answer"]
        assert status == 200 and body[:4] == b"RIFF" and body[8:12] == b"WEBP"
        print(f"\nduring a {render['seconds']:.1f} s render: {len(latencies)} requests on 4 kept connections, "
              f"slowest {max(latencies) * 1000:.0f} ms")
        assert render["seconds"] > 2 * timeout, "the render outlasts the connection timeout"
        assert len(latencies) >= 2 * 4 * 3, "requests answered while the render ran"
        assert max(latencies) < render["seconds"] / 2, "no request waited for the render"
        assert [connection.sock for connection in kept] == sockets, "every connection kept alive"
    finally:
        for connection in kept:
            connection.close()
        server.close()


def test_a_render_larger_than_the_whole_budget_is_a_400_saying_so(tessera, images, tmp_path):
    server = Server(tessera, images, tmp_path, "--render-memory", "4M", "--quiet")
    try:
        status, headers, body = get(server.port, "/iiif/big_00.jpg/full/max/0/default.jpg")
        assert status == 400 and "retry-after" not in headers
        assert b"--render-memory" in body
        assert get(server.port, "/iiif/small.png/full/max/0/default.jpg")[0] == 200
    finally:
        server.close()


def test_sigterm_answers_every_request_sent_before_it_then_exits_0(tessera, images, tmp_path):
    grace = 40
    server = Server(tessera, images, tmp_path, "--threads", 32, "--response-cache", "1K", "--quiet",
                    "--drain-grace", grace, "--render-wait", grace)
    count = 12
    connections = [http.client.HTTPConnection("127.0.0.1", server.port, timeout=grace + 20) for _ in range(count)]
    results = [None] * count
    try:
        for index, connection in enumerate(connections):
            connection.request("GET", f"/iiif/big_{index:02}.jpg/full/2000,/0/default.jpg")

        def receive(index):
            response = connections[index].getresponse()
            results[index] = (response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())

        threads = [threading.Thread(target=receive, args=(index,)) for index in range(count)]
        for thread in threads:
            thread.start()
        # Every request is in the server's socket buffers; give its threads a moment to take the connections.
        time.sleep(0.5)
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        wait_for(lambda: not answers(server.base + "/metrics", timeout=0.5) or server.process.poll() is not None,
                 10, "the listening socket closed")
        assert server.process.wait(timeout=grace + 10) == 0
        assert time.monotonic() - signalled <= grace
        for thread in threads:
            thread.join(timeout=5)
        for result in results:
            assert result is not None, "every request sent before the signal answered"
            assert_image_or_busy(*result)
        assert sum(result[0] == 200 for result in results) >= 1
    finally:
        for connection in connections:
            connection.close()
        server.close()


def test_the_access_log_keeps_the_query_string(tessera, images, tmp_path):
    server = Server(tessera, images, tmp_path)
    try:
        assert get(server.port, "/iiif/small.png/info.json?from=test&x=%2F1")[0] == 200
    finally:
        server.close()
    log = server.log.read_text()
    assert "GET /iiif/small.png/info.json?from=test&x=%2F1 200 " in log, log


def photo_pyramid(tessera, tmp_path, height, width, seed):
    """A pyramidal TIFF of a photo-like image `width` x `height`, alone in a folder to serve."""
    source = tmp_path / "map.jpg"
    Image.fromarray(photo(height, width, seed=seed)).save(source, quality=85)
    pyramid = tmp_path / "images" / "map.tif"
    pyramid.parent.mkdir()
    result = run(tessera, "tile", source, pyramid, "--layout", "tiff")
    assert result.returncode == 0, result.stderr
    return pyramid


def wrk_at_a_file_limit(tessera, pyramid, tmp_path, limit, connections, seconds, size, stderr=subprocess.DEVNULL):
    """wrk's (rate, p50, p99, non-2xx, socket errors) over every tile of `pyramid` (`size` pixels) from a server
    started with the open-files limit `limit` (soft, hard)."""
    port = free_port()
    server = subprocess.Popen([tessera, "serve", str(pyramid.parent), "--port", str(port), "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=stderr,
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, limit))
    try:
        base = f"http://127.0.0.1:{port}/iiif/{pyramid.name}/"
        wait_for(lambda: answers(base + "info.json"), 20, "tessera serve answers")
        return serve_benchmark.run_wrk(base, serve_benchmark.tile_paths(*size), connections, seconds, str(tmp_path),
                                       timeout=30)
    finally:
        stop(server)


@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk (scripts/install-deps)")
def test_1000_connections_over_tiles_are_all_answered(tessera, tmp_path):
    pyramid = photo_pyramid(tessera, tmp_path, 3000, 4000, seed=5)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 4096:
        pytest.skip(f"the hard limit on open files is {hard}: 1,000 connections need more")
    # wrk inherits this process's limit; the server starts with too few descriptors for the connections and must
    # raise its own limit (a process may, up to the hard limit).
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        rate, _, p99, errors, socket_errors = wrk_at_a_file_limit(tessera, pyramid, tmp_path, (512, hard), 1000, 10,
                                                                  (4000, 3000))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print(f"1,000 connections: {rate:.0f} tiles/s, p99 {p99}")
    assert rate > 0 and errors == 0 and socket_errors == "none", f"{errors} non-2xx, socket errors {socket_errors}"


@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk (scripts/install-deps)")
def test_more_connections_than_descriptors_wait_instead_of_failing(tessera, tmp_path):
    """A server whose hard limit on open files is 300 asked by 400 connections at once: it holds what its descriptors
    allow with some left for the files it reads (the rest wait in the listen queue), so every tile is answered and
    nothing is reported. At libmicrohttpd's own connection limit (4,096) it ran out of descriptors instead: each
    accept failed and was reported, and tiles failed for want of a descriptor to read them with."""
    pyramid = photo_pyramid(tessera, tmp_path, 1500, 2000, seed=6)
    errors_log = tmp_path / "stderr.txt"
    with open(errors_log, "wb") as errors:
        rate, _, _, failed, _ = wrk_at_a_file_limit(tessera, pyramid, tmp_path, (300, 300), 400, 4, (2000, 1500),
                                                    stderr=errors)
    assert rate > 0 and failed == 0, f"{failed} non-2xx"
    assert "Too many open files" not in errors_log.read_text()
