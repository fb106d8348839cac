"""`tessera serve`'s progressive JPEG stream (GET /stream/{id}/{size}), read as it arrives over a raw socket: it is
sent with chunked transfer encoding, its first scans decode (with Pillow) into the whole picture before the rest
has been read, the whole equals the IIIF rendering of the same size, and clients that hang up mid-stream do not
disturb the server."""
import io
import socket
import subprocess
import urllib.request

import numpy as np
import pytest
from PIL import Image, ImageFile

from conftest import photo, psnr

SOURCE = photo(1800, 2400, 3, seed=61)


@pytest.fixture(scope="module")
def server(tessera, tmp_path_factory):
    root = tmp_path_factory.mktemp("streamed")
    Image.fromarray(SOURCE).save(root / "big.png")
    process = subprocess.Popen([tessera, "serve", str(root), "--port", "0", "--no-cache", "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    banner = process.stdout.readline()
    assert "serving" in banner, process.stderr.read()
    address = banner.split(" at ")[1].split()[0].split("/")[2]
    host, port = address.split(":")
    yield host, int(port)
    process.terminate()
    assert process.wait(timeout=10) == 0


class ChunkedResponse:
    """A response read from a socket piece by piece: the status line and headers, then one chunk at a time."""

    def __init__(self, address, path, receive_buffer=8192):
        self.socket = socket.socket()
        # A small receive window, so the server can only run a little ahead of this reader.
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.socket.connect(address)
        self.socket.sendall(f"GET {path} HTTP/1.1\r\nHost: {address[0]}\r\n\r\n".encode())
        self.file = self.socket.makefile("rb")
        self.status = int(self.file.readline().split()[1])
        self.headers = {}
        while (line := self.file.readline().decode().strip()):
            name, value = line.split(":", 1)
            self.headers[name.lower()] = value.strip()

    def chunk(self):
        """The next chunk's bytes, or None after the last."""
        size = int(self.file.readline().split(b";")[0], 16)
        if size == 0:
            self.file.readline()
            return None
        data = self.file.read(size)
        assert self.file.read(2) == b"\r\n"
        return data

    def close(self):
        self.file.close()
        self.socket.close()


def decode(data):
    """Pillow's decode of JPEG data, cut short or not, as an RGB array."""
    ImageFile.LOAD_TRUNCATED_IMAGES = True
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            return np.asarray(image.convert("RGB")), image.info
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = False


def test_stream_is_chunked_and_its_first_scans_show_the_whole_picture(server):
    response = ChunkedResponse(server, "/stream/big.png/1600")
    assert response.status == 200
    assert response.headers["transfer-encoding"] == "chunked" and "content-length" not in response.headers
    assert response.headers["content-type"] == "image/jpeg"
    body, chunks, early = b"", 0, None
    while (data := response.chunk()) is not None:
        body += data
        chunks += 1
        # The second start-of-scan marker: the first scan is complete. Decode what has arrived, before reading on.
        if early is None and body.count(b"\xff\xda") >= 2:
            early = decode(body[:body.rindex(b"\xff\xda")] + b"\xff\xd9")[0]
            early_bytes = len(body)
    response.close()
    final, info = decode(body)
    assert info.get("progressive") or info.get("progression")
    assert final.shape == (1200, 1600, 3)
    assert chunks >= 8
    assert early is not None and early.shape == final.shape and early_bytes < len(body) / 2
    # The first scan is the DC scan: the whole frame at 1/8 resolution, close to the final picture.
    assert psnr(early, final) > 20
    with urllib.request.urlopen(f"http://{server[0]}:{server[1]}/iiif/big.png/full/1600,/0/default.jpg") as reply:
        rendered = np.asarray(Image.open(io.BytesIO(reply.read())).convert("RGB"))
    assert psnr(final, rendered) > 35
    expected = np.asarray(Image.fromarray(SOURCE).resize((1600, 1200), Image.LANCZOS))
    assert psnr(final, expected) > 33


def test_clients_that_hang_up_mid_stream_leave_the_server_serving(server):
    for _ in range(6):
        response = ChunkedResponse(server, "/stream/big.png/max", receive_buffer=4096)
        assert response.status == 200
        assert response.chunk()
        response.close()
    response = ChunkedResponse(server, "/stream/big.png/300")
    body = b""
    while (data := response.chunk()) is not None:
        body += data
    response.close()
    assert decode(body)[0].shape == (225, 300, 3)


@pytest.mark.parametrize("path,status", [
    ("/stream/missing.png/100", 404),
    ("/stream/big.png/lots", 400),
    ("/stream/big.png", 404),
    ("/stream/big.png/0", 400),
])
def test_bad_stream_requests_are_refused(server, path, status):
    response = ChunkedResponse(server, path)
    assert response.status == status
    assert response.headers["access-control-allow-origin"] == "*"
    response.close()
