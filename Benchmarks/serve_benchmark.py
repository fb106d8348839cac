#!/usr/bin/env python3
"""Tiles per second and latency of `tessera serve` against iipsrv on the same pyramidal TIFF, under wrk.

    Benchmarks/serve_benchmark.py [--size 100mp|1gp|quick] [--duration 20] [--connections 64,256] [--markdown]
                                  [--tessera PATH]
    Benchmarks/serve_benchmark.py --jp2 [...]   # the same tiles from the sample as a JP2, tessera with --no-cache
    Benchmarks/serve_benchmark.py --zip [...]   # tessera serving the sample as a IIIF pyramid in one zip
    Benchmarks/serve_benchmark.py --deployment [...]  # one instance, against three behind nginx (deploy/nginx/)
    Benchmarks/serve_benchmark.py --remote [...]   # the TIFF served locally and read by ranges from nginx
    Benchmarks/serve_benchmark.py --never-seen [--before PATH] [...]   # the plain JPEG with an empty cache

The TIFF is libvips' `tiffsave --tile --pyramid --compression jpeg` of the benchmark sample (256-pixel tiles), the
form iipsrv is built for. The URLs are every tile of every level, in the IIIF form OpenSeadragon asks for them
(`x,y,w,h/w,/0/default.jpg`), shuffled once with a fixed seed and cycled by wrk's Lua script on every connection.
iipsrv (Debian's iipimage-server) runs as 4 FastCGI processes behind lighttpd, as its documentation suggests.
With `--jp2` both servers read the sample as `opj_compress -t 1024,1024 -n 7 -r 20 -p RPCL -PLT` wrote it
(iipsrv through its OpenJPEG decoder) and Tessera builds no pyramid, so both decode every tile with OpenJPEG.
With `--zip` Tessera serves the sample as `tile --layout iiif --tile-size 256 --container zip` wrote it (one zip,
its tiles read from it by offset) and iipsrv, which reads no zips, the TIFF.
With `--deployment` the peers are Tessera itself: one instance direct, against three instances behind nginx with
deploy/nginx's configuration (rendered by its render-config), without nginx's proxy_cache and with it (after one
warm-up pass, so the tiles repeat).
With `--remote` the peer is Tessera itself: `serve FILE` against `serve --source-url` reading the same TIFF by byte
ranges from Debian's nginx (Tests/peers/daemons.py's static host): one cold pass over every tile (16 clients, a fresh
server, range requests and bytes counted in nginx's access log), then wrk with the block cache warm, and the remote
server's peak resident memory (VmHWM); then the cold pass twice more by ranges, each a fresh server given one
`--block-cache-folder`: the first fills it, the second (a later process) reads its blocks from it.
With `--never-seen` the peer is Tessera itself: `serve` of the sample JPEG (not the TIFF) with an empty cache
folder, wrk asking the same shuffled tiles of every level from its first request (a 60 s timeout, so slow answers
count in the latency rather than as socket errors), with `--cache-mode pyramid` and `--cache-mode index`, and with
`--before PATH`'s binary (an older tessera, its own default) for comparison; each run a fresh server and cache.
Needs wrk, lighttpd, spawn-fcgi and iipimage-server (Debian packages); `--remote` and `--deployment` need wrk and
nginx only."""
import argparse
import concurrent.futures
import http.client
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import make_sample
from tables import print_table

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "peers"))
import daemons  # noqa: E402

BENCHMARKS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCHMARKS_DIR)
WORK_DIR = os.path.join(BENCHMARKS_DIR, "work")
TESSERA = os.path.join(REPO_DIR, ".build", "release", "tessera")
IIPSRV = "/usr/lib/iipimage-server/iipsrv.fcgi"
TILE = 256
# Free loopback ports, chosen once per run, so that two benchmarks (or a benchmark and a test) never collide.
TESSERA_PORT, LIGHTTPD_PORT, FCGI_PORT = daemons.free_port(), daemons.free_port(), daemons.free_port()
INSTANCE_PORTS, NGINX_PORT = (daemons.free_port(), daemons.free_port(), daemons.free_port()), daemons.free_port()
FOLDER_PORT = daemons.free_port()


# The sample's size for each --size, in megapixels.
MEGAPIXELS = {"quick": 4, "100mp": 100, "1gp": 1000}


def pyramid(size):
    jpeg = make_sample.cached_sample(WORK_DIR, MEGAPIXELS[size])
    tiff = jpeg.replace(".jpg", "-pyramid.tif")
    if not os.path.exists(tiff):
        subprocess.run(["vips", "tiffsave", jpeg, tiff, "--tile", "--pyramid", "--compression", "jpeg", "--Q", "75",
                        "--tile-width", str(TILE), "--tile-height", str(TILE)], check=True)
    return tiff


def zipped_pyramid(size):
    """The sample as a IIIF level-0 pyramid of 256-pixel JPEG tiles (Tessera's, levels halved rounding up) in one
    zip, made once and kept in the work folder."""
    jpeg = make_sample.cached_sample(WORK_DIR, MEGAPIXELS[size])
    zipped = jpeg.replace(".jpg", "-iiif.zip")
    if not os.path.exists(zipped):
        subprocess.run([TESSERA, "tile", jpeg, zipped[:-len(".zip")], "--layout", "iiif", "--tile-size", str(TILE),
                        "--quality", "75", "--container", "zip"], check=True, stdout=subprocess.DEVNULL)
    return zipped


def tile_paths(width, height):
    """Every tile of every level as IIIF region/size paths, the way OpenSeadragon builds them from info.json."""
    paths, scale = [], 1
    while True:
        span = TILE * scale
        for y in range(0, height, span):
            for x in range(0, width, span):
                w, h = min(span, width - x), min(span, height - y)
                paths.append(f"{x},{y},{w},{h}/{-(-w // scale)},/0/default.jpg")
        if -(-width // scale) <= TILE and -(-height // scale) <= TILE:
            return paths
        scale *= 2


def wait_for(url):
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except Exception:
            time.sleep(0.1)
    sys.exit(f"no answer from {url}")


def start_iipsrv(folder):
    missing = [tool for tool in ["spawn-fcgi", "lighttpd", IIPSRV] if not shutil.which(tool)]
    if missing:
        sys.exit(f"iipsrv's benchmark needs {', '.join(missing)}: scripts/install-deps --bench installs them")
    config = os.path.join(folder, "lighttpd.conf")
    with open(config, "w") as file:
        file.write(f'''server.modules = ("mod_fastcgi")
server.document-root = "{folder}"
server.port = {LIGHTTPD_PORT}
server.bind = "127.0.0.1"
server.max-connections = 1024
server.max-fds = 4096
fastcgi.server = ("/fcgi-bin/iipsrv.fcgi" => (("host" => "127.0.0.1", "port" => {FCGI_PORT}, "check-local" => "disable")))
''')
    environment = dict(os.environ, LOGFILE="/dev/null", VERBOSITY="0", MAX_IMAGE_CACHE_SIZE="64", JPEG_QUALITY="75",
                       MAX_CVT="5000")
    fcgi = subprocess.run(["spawn-fcgi", "-a", "127.0.0.1", "-p", str(FCGI_PORT), "-F", "4", "-P",
                           os.path.join(folder, "fcgi.pid"), "--", IIPSRV], env=environment, capture_output=True)
    if fcgi.returncode != 0:
        sys.exit(f"spawn-fcgi failed: {fcgi.stderr.decode()}")
    lighttpd = subprocess.Popen(["lighttpd", "-D", "-f", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return lighttpd, os.path.join(folder, "fcgi.pid")


def run_wrk(base, paths, connections, duration, folder, timeout=None):
    """wrk cycling over `paths` (after `base`) on every connection; `timeout` (seconds) replaces wrk's 2 s before
    a request counts as a socket error. Returns tiles/s, p50, p99, non-2xx responses and the socket errors."""
    script = os.path.join(folder, "urls.lua")
    host, prefix = base.split("/")[2], "/" + base.split("/", 3)[3]
    with open(script, "w") as file:
        file.write("paths = {\n" + ",\n".join(f'"{prefix}{path}"' for path in paths) + "\n}\n")
        file.write('''counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", paths[(counter % #paths) + 1])
end
''')
    result = subprocess.run(["wrk", "-t", "2", "-c", str(connections), "-d", f"{duration}s", "--latency", "-s", script,
                             *(["--timeout", f"{timeout}s"] if timeout else []), f"http://{host}/"],
                            capture_output=True, text=True, timeout=duration + 60)
    output = result.stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    latency = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", output, re.MULTILINE))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(r"Socket errors: (.*)", output)
    return rate, latency.get("50", "-"), latency.get("99", "-"), \
        (int(errors.group(1)) if errors else 0), (socket_errors.group(1) if socket_errors else "none")


def never_seen(args, paths, connections_list):
    """Rows of `tessera serve JPEG` with an empty cache under wrk from its first request, per mode and binary."""
    jpeg = make_sample.cached_sample(WORK_DIR, {"quick": 4, "100mp": 100}[args.size])
    name = os.path.basename(jpeg)
    runs = [(f"tessera --cache-mode {mode}", args.tessera, ["--cache-mode", mode]) for mode in ("pyramid", "index")]
    if args.before:
        runs.insert(0, ("tessera before (its default)", args.before, []))
    rows = []
    for connections in connections_list:
        for label, binary, options in runs:
            folder = tempfile.mkdtemp(prefix="tessera-never-seen-")
            port = daemons.free_port()
            server = subprocess.Popen([binary, "serve", jpeg, "--port", str(port), "--quiet", "--cache",
                                       os.path.join(folder, "cache"), *options],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                daemons.wait_for(lambda: daemons.answers(f"http://127.0.0.1:{port}/health"), 30, "tessera serve")
                rate, p50, p99, errors, socket_errors = run_wrk(f"http://127.0.0.1:{port}/iiif/{name}/", paths,
                                                                connections, args.duration, folder, timeout=60)
            finally:
                daemons.stop(server)
            rows.append((label, connections, rate, p50, p99, errors, socket_errors))
            print(f"  {label}, {connections} connections: {rate:.0f} tiles/s, p50 {p50}, p99 {p99}, "
                  f"{errors} errors, socket errors {socket_errors}", file=sys.stderr)
    return rows


def deployment(tiff, paths, connections_list, duration, folder, tessera_binary):
    """Rows of one instance direct, and three behind nginx without and with its proxy_cache."""
    name = os.path.basename(tiff)
    instances = [subprocess.Popen([tessera_binary, "serve", tiff, "--port", str(port), "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for port in INSTANCE_PORTS]
    rows = []
    try:
        for port in INSTANCE_PORTS:
            wait_for(f"http://127.0.0.1:{port}/iiif/{name}/info.json")
        behind = f"http://127.0.0.1:{NGINX_PORT}/iiif/{name}/"
        # (label, render-config's flags or None for no nginx, whether a first pass warms nginx's cache, base URL)
        runs = [("one instance, direct", None, False, f"http://127.0.0.1:{INSTANCE_PORTS[0]}/iiif/{name}/"),
                ("three instances behind nginx, no proxy_cache", ["--no-proxy-cache"], False, behind),
                ("three instances behind nginx, proxy_cache (warm)", [], True, behind)]
        for connections in connections_list:
            for label, flags, warm, base in runs:
                nginx = None
                if flags is not None:
                    config = subprocess.run([os.path.join(REPO_DIR, "deploy", "nginx", "render-config"), *flags,
                                             "127.0.0.1:{port}", os.path.join(folder, "nginx-cache"),
                                             *[f"127.0.0.1:{port}" for port in INSTANCE_PORTS]],
                                            capture_output=True, text=True, check=True).stdout
                    nginx = daemons.Nginx(os.path.join(folder, "nginx"), config, port=NGINX_PORT)
                try:
                    if warm:
                        run_wrk(base, paths, connections, max(3, duration // 4), folder, timeout=30)
                    rate, p50, p99, errors, socket_errors = run_wrk(base, paths, connections, duration, folder,
                                                                    timeout=30)
                finally:
                    if nginx:
                        nginx.stop()
                rows.append((label, connections, rate, p50, p99, errors, socket_errors))
                print(f"  {label}, {connections} connections: {rate:.0f} tiles/s, p50 {p50}, p99 {p99}, "
                      f"{errors} errors, socket errors {socket_errors}", file=sys.stderr)
    finally:
        for instance in instances:
            instance.terminate()
            instance.wait()
    return rows


def cold_pass(base, paths, clients=16):
    """Every path once, `clients` at a time on kept-alive connections: tiles/s, p99 in ms and failures."""
    host, prefix = base.split("/")[2], "/" + base.split("/", 3)[3]
    chunks = [paths[index::clients] for index in range(clients)]

    def client(chunk):
        connection, times, failures = http.client.HTTPConnection(host, timeout=60), [], 0
        for path in chunk:
            start = time.perf_counter()
            connection.request("GET", prefix + path)
            response = connection.getresponse()
            response.read()
            times.append(time.perf_counter() - start)
            failures += response.status != 200
        connection.close()
        return times, failures

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, chunks))
    elapsed = time.perf_counter() - start
    times = sorted(t for result in results for t in result[0])
    return len(paths) / elapsed, times[int(0.99 * (len(times) - 1))] * 1000, sum(result[1] for result in results)


def ranges_logged(host, name):
    """The GETs of `/name` nginx has logged and the body bytes it sent for them."""
    requests = sent = 0
    with open(os.path.join(host.root, "logs", "access.log")) as log:
        for line in log:
            match = re.search(rf'"GET /{re.escape(name)} [^"]*" \d+ (\d+)', line)
            if match:
                requests += 1
                sent += int(match.group(1))
    return requests, sent


def peak_memory(pid):
    """VmHWM of a process, in MiB."""
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmHWM:\s+(\d+) kB", status.read()).group(1)) / 1024


def block_folder_pass(args, host, name, paths, blocks, run):
    """One cold pass of a fresh `serve --source-url` with `--block-cache-folder blocks`: its row, and the range
    requests and bytes nginx logged for it (the open's included)."""
    before = ranges_logged(host, name)
    server = subprocess.Popen([args.tessera, "serve", "--source-url", f"{host.base}/{{id}}", "--port", str(FOLDER_PORT),
                               "--quiet", "--no-cache", "--block-cache-folder", blocks],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{FOLDER_PORT}/iiif/{name}/"
        wait_for(base + "info.json")
        rate, p99, failures = cold_pass(base, paths)
    finally:
        daemons.stop(server)
    print(f"  nginx, block folder {run}: {rate:.0f} tiles/s, p99 {p99:.1f} ms", file=sys.stderr)
    logged = tuple(now - then for now, then in zip(ranges_logged(host, name), before))
    return ("nginx, block folder", run, 16, rate, "-", f"{p99:.1f}ms", failures), logged


def remote_main(args, tiff, paths, width, height):
    """Tessera serving the TIFF from its file and from nginx by byte ranges, side by side."""
    name, folder = os.path.basename(tiff), tempfile.mkdtemp(prefix="tessera-remote-bench-")
    host = daemons.static_host(os.path.join(folder, "nginx"), os.path.dirname(tiff))
    local = subprocess.Popen([args.tessera, "serve", tiff, "--port", str(TESSERA_PORT), "--quiet", "--no-cache"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    remote = subprocess.Popen([args.tessera, "serve", "--source-url", f"{host.base}/{{id}}", "--port",
                               str(LIGHTTPD_PORT), "--quiet", "--no-cache"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    servers = {"local file": f"http://127.0.0.1:{TESSERA_PORT}/iiif/{name}/",
               "nginx by ranges": f"http://127.0.0.1:{LIGHTTPD_PORT}/iiif/{name}/"}
    rows = []
    try:
        wait_for(servers["local file"] + "info.json")
        before = ranges_logged(host, name)
        wait_for(servers["nginx by ranges"] + "info.json")
        for label, base in servers.items():
            rate, p99, failures = cold_pass(base, paths)
            rows.append((label, "cold, one pass", 16, rate, "-", f"{p99:.1f}ms", failures))
            print(f"  {label} cold: {rate:.0f} tiles/s, p99 {p99:.1f} ms, {failures} failures", file=sys.stderr)
        requests, sent = (now - then for now, then in zip(ranges_logged(host, name), before))
        for connections in map(int, args.connections.split(",")):
            for label, base in servers.items():
                rate, p50, p99, errors, socket_errors = run_wrk(base, paths, connections, args.duration, folder)
                rows.append((label, "warm, wrk", connections, rate, p50, p99, errors))
                print(f"  {label} warm, {connections} connections: {rate:.0f} tiles/s, p99 {p99}", file=sys.stderr)
        memory = peak_memory(remote.pid), peak_memory(local.pid)
        folder_passes = [block_folder_pass(args, host, name, paths, os.path.join(folder, "blocks"), run)
                         for run in ["cold, folder empty", "cold, from folder"]]
        rows += [row for row, _ in folder_passes]
    finally:
        daemons.stop(local)
        daemons.stop(remote)
        host.stop()
    print(f"{len(paths)} {TILE}-pixel tile URLs of a {width}x{height} pyramidal TIFF ({os.path.getsize(tiff) >> 20} MiB),"
          f" cold pass with 16 clients, then {args.duration} s of wrk (2 threads) per run, on the same 2-core machine")
    print(f"cold, by ranges: {requests} range requests for {len(paths)} tiles ({requests / len(paths):.3f} per tile),"
          f" {sent / len(paths) / 1024:.1f} KiB fetched per tile ({sent >> 20} MiB in all)")
    print(f"peak resident memory (VmHWM): remote serve {memory[0]:.0f} MiB, local serve {memory[1]:.0f} MiB"
          " (block cache budget 256 MiB)")
    for row, (folder_requests, folder_sent) in folder_passes:
        print(f"{row[1]}: {folder_requests} range requests, {folder_sent >> 20} MiB fetched")
    by = {(row[0], row[1], row[2]): row[3] for row in rows}
    by.update({("local file", row[1], row[2]): by[("local file", "cold, one pass", 16)] for row, _ in folder_passes})
    print_table(["read from", "run", "connections", "tiles/s", "p50", "p99", "non-2xx", "remote/local"],
                [(*row[:3], f"{row[3]:,.0f}", *row[4:7], f"{row[3] / by[('local file', row[1], row[2])]:.2f}x")
                 for row in rows], args.markdown)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="100mp", choices=list(MEGAPIXELS))
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--connections", default="64,256")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--tessera", metavar="PATH", default=TESSERA, help="the tessera binary to serve with")
    parser.add_argument("--jp2", action="store_true", help="serve the sample as a tiled JP2, Tessera with --no-cache")
    parser.add_argument("--zip", action="store_true", help="Tessera serves the sample as a IIIF pyramid in one zip")
    parser.add_argument("--deployment", action="store_true",
                        help="one instance against three behind nginx (deploy/nginx/), with and without proxy_cache")
    parser.add_argument("--decoded-tiles", metavar="BYTES", help="tessera serve's --decoded-tiles (default: its own)")
    parser.add_argument("--remote", action="store_true",
                        help="Tessera over the TIFF's file against Tessera over nginx by byte ranges")
    parser.add_argument("--never-seen", action="store_true",
                        help="the plain JPEG with an empty cache, --cache-mode pyramid against index")
    parser.add_argument("--before", metavar="PATH", help="with --never-seen, an older tessera binary to compare")
    args = parser.parse_args()
    if args.never_seen:
        width, height = make_sample.dimensions({"quick": 4, "100mp": 100}[args.size])
        paths = tile_paths(width, height)
        random.Random(1).shuffle(paths)
        load = os.getloadavg()
        rows = never_seen(args, paths, list(map(int, args.connections.split(","))))
        print(f"load average before the runs: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        report(rows, paths, width, height, "never-seen baseline JPEG", args)
        return
    if args.jp2:
        tiff = make_sample.cached_jp2(make_sample.cached_sample(WORK_DIR, MEGAPIXELS[args.size]), "opj")
    else:
        tiff = pyramid(args.size)
    width, height = make_sample.dimensions(MEGAPIXELS[args.size])
    paths = tile_paths(width, height)
    random.Random(1).shuffle(paths)
    if args.remote:
        return remote_main(args, tiff, paths, width, height)
    folder = tempfile.mkdtemp(prefix="tessera-serve-bench-")
    if args.deployment:
        load = os.getloadavg()
        rows = deployment(tiff, paths, list(map(int, args.connections.split(","))), args.duration, folder, args.tessera)
        print(f"load average before the runs: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        report(rows, paths, width, height, "pyramidal TIFF", args)
        return
    served = zipped_pyramid(args.size) if args.zip else tiff
    tessera = subprocess.Popen([args.tessera, "serve", served, "--port", str(TESSERA_PORT), "--quiet",
                                *(["--no-cache"] if args.jp2 else []),
                                *(["--decoded-tiles", args.decoded_tiles] if args.decoded_tiles else [])],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lighttpd, pid_file = start_iipsrv(folder)
    servers = {
        "tessera serve" + (" (the zip)" if args.zip else ""): f"http://127.0.0.1:{TESSERA_PORT}/iiif/{os.path.basename(served)}/",
        "iipsrv (4 FastCGI processes, lighttpd)": f"http://127.0.0.1:{LIGHTTPD_PORT}/fcgi-bin/iipsrv.fcgi?IIIF={tiff}/",
    }
    try:
        for base in servers.values():
            wait_for(base + "info.json")
        rows = []
        for connections in map(int, args.connections.split(",")):
            for label, base in servers.items():
                rate, p50, p99, errors, socket_errors = run_wrk(base, paths, connections, args.duration, folder)
                rows.append((label, connections, rate, p50, p99, errors, socket_errors))
                print(f"  {label}, {connections} connections: {rate:.0f} tiles/s, p50 {p50}, p99 {p99}, "
                      f"{errors} errors, socket errors {socket_errors}", file=sys.stderr)
    finally:
        tessera.terminate()
        lighttpd.terminate()
        with open(pid_file) as file:
            for pid in file.read().split():
                os.kill(int(pid), signal.SIGTERM)
    kind = "tiled JP2 (1024-pixel codestream tiles)" if args.jp2 else "pyramidal TIFF"
    report(rows, paths, width, height, kind + (" (Tessera: its IIIF pyramid in a zip)" if args.zip else ""), args)


def report(rows, paths, width, height, kind, args):
    print(f"{len(paths)} {TILE}-pixel tile URLs of a {width}x{height} {kind}, "
          f"{args.duration} s per run, wrk with 2 threads on the same 2-core machine")
    print_table(["server", "connections", "tiles/s", "p50", "p99", "non-2xx", "socket errors"],
                [(row[0], row[1], f"{row[2]:,.0f}", *row[3:]) for row in rows], args.markdown)


if __name__ == "__main__":
    main()
