"""What the tests that start real daemons share: a free loopback port, a bounded wait, and nginx run from a
configuration of the test's own in a temporary prefix, in the foreground so that the PID the test holds is the
master's and stopping it stops exactly what was started."""
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(condition, timeout, what):
    """Polls `condition` until it is true; raises TimeoutError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what} within {timeout} s")


def answers(url, timeout=1):
    """Whether `url` answers an HTTP GET at all (any status)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def stop(process, grace=15):
    """SIGTERM, then SIGKILL after `grace` seconds: for a process a test started, by its PID."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Nginx:
    """Debian's nginx with `http_block` (the text inside `http { }`, which may use `{port}` for the port it
    listens on) in a temporary prefix `root`; `base` is its URL. Use as a context manager, or call stop()."""

    def __init__(self, root, http_block, port=None):
        if shutil.which("nginx") is None:
            raise FileNotFoundError("nginx is not installed: scripts/install-deps installs it")
        self.root = Path(root)
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        for folder in ["logs", "temp"]:
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        temp = self.root / "temp"
        config = self.root / "nginx.conf"
        # Run as root (a container, CI), nginx's workers would be nobody, who cannot enter the test's temporary folders.
        user = "user root;\n" if os.geteuid() == 0 else ""
        config.write_text(f"""daemon off;
{user}master_process on;
worker_processes 2;
pid {self.root}/nginx.pid;
error_log {self.root}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log {self.root}/logs/access.log;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    types {{ image/tiff tif tiff; image/jpeg jpg jpeg; image/png png; application/xml dzi xml;
             application/json json; image/jp2 jp2; }}
    default_type application/octet-stream;
{http_block.replace("{port}", str(self.port))}
}}
""")
        self.log = open(self.root / "logs" / "stderr.log", "wb")
        self.process = subprocess.Popen(["nginx", "-p", str(self.root), "-c", str(config)], stdout=self.log,
                                        stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: self.process.poll() is not None or answers(self.base + "/"), 10, "nginx did not answer")
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx did not start: {self.errors()}")
        except BaseException:
            self.stop()
            raise

    def errors(self):
        """The end of nginx's own logs, for a failing test's message."""
        return "\n".join(path.read_text(errors="replace")[-1500:]
                         for path in [self.root / "logs" / "error.log", self.root / "logs" / "stderr.log"]
                         if path.exists())

    def stop(self):
        """Stops the master it started (which stops its workers), by PID."""
        stop(self.process)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()


def static_host(root, folder, port=None):
    """nginx serving `folder` as a static host with byte ranges, ETags and Last-Modified (as object storage and
    ordinary web servers answer), in the prefix `root`."""
    return Nginx(root, f"""    server {{
        listen 127.0.0.1:{{port}};
        root {folder};
        etag on;
        location / {{ }}
    }}""", port)
