"""Shared fixtures for the peer tests: the tessera binary, a runner, deterministic test images, libjpeg's decode,
and pixel readers that keep 16-bit samples (Pillow narrows 16-bit RGB to 8 bits, so PNGs are read with pypng)."""
import io
import os
import subprocess
from pathlib import Path

import numpy as np
import png
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tessera():
    # Absolute, as tests run it from other folders (a batch's, a Slurm job's).
    path = Path(os.environ.get("TESSERA", ROOT / ".build/release/tessera")).resolve()
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with 'make build'")
    return str(path)


def run(*args, timeout=120, **options):
    """Runs a command, returning the CompletedProcess with text output; `options` go to subprocess.run
    (`input=` for stdin, `cwd=`)."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **options)


def photo(height, width, channels=3, seed=0, bits=8):
    """A photo-like image: smooth gradients, soft blobs, an edge and mild noise, so lossy codecs behave
    as they do on photographs (pure noise would make every JPEG look bad)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    grain = rng.normal(0, 0.006, (height, width))  # sensor-like noise, shared by the channels as luma noise is
    planes = []
    for channel in range(channels):
        phase = rng.uniform(0, 2 * np.pi, 3)
        value = (0.5 + 0.25 * np.sin(x / (17 + 5 * channel) + phase[0]) * np.cos(y / (23 + 3 * channel) + phase[1])
                 + 0.15 * (x / max(width - 1, 1)) + 0.1 * np.sin((x + y) / 41 + phase[2]))
        value += np.where(x > width * 0.6, 0.08, -0.05)
        value += grain
        planes.append(value)
    stack = np.clip(np.stack(planes, axis=-1), 0, 1)
    top = 65535 if bits == 16 else 255
    dtype = np.uint16 if bits == 16 else np.uint8
    return np.round(stack * top).astype(dtype)


def read_png(path):
    """A PNG's pixels as an (h, w, c) array, 8- or 16-bit, palette expanded, as written."""
    reader = png.Reader(filename=str(path))
    width, height, rows, info = reader.asDirect()
    planes = info["planes"]
    dtype = np.uint16 if info["bitdepth"] > 8 else np.uint8
    return np.vstack([np.asarray(row, dtype=dtype) for row in rows]).reshape(height, width, planes)


def djpeg(*args):
    """libjpeg's own decode (`djpeg` with `args`, the file last), as an RGB array."""
    output = subprocess.run(["djpeg", "-ppm", *args], capture_output=True, check=True).stdout
    return np.asarray(Image.open(io.BytesIO(output)).convert("RGB"))


def write_png(path, array, **options):
    """Writes an (h, w, c) uint8/uint16 array as PNG with pypng (which can write every bit depth)."""
    height, width, planes = array.shape
    bitdepth = options.pop("bitdepth", 16 if array.dtype == np.uint16 else 8)
    writer = png.Writer(width, height, greyscale=planes < 3, alpha=planes in (2, 4), bitdepth=bitdepth, **options)
    with open(path, "wb") as handle:
        writer.write(handle, array.reshape(height, width * planes).tolist())


def pillow_pixels(path, channels):
    """Pillow's decode of a file, converted to the given channel count."""
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels]
    with Image.open(path) as image:
        image.seek(0)
        return np.asarray(image.convert(mode)).reshape(image.height, image.width, channels)


def psnr(a, b, peak=255.0):
    error = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if error == 0 else 10 * np.log10(peak * peak / error)
