#!/usr/bin/env python3
"""Deterministic synthetic photographs for the Tessera benchmarks.

Makes a large RGB JPEG (quality 85) with photographic statistics rather than flat colour: multi-octave smooth
noise (random lattices upsampled), gradients and a vignette, random shapes with sharp edges, striped and grainy
textures, and fine per-pixel noise, tuned to about 2 bits per pixel. The image is generated in horizontal bands
and streamed as PPM into `cjpeg`, so memory stays bounded by one band even at a gigapixel (Pillow would need the
whole image, and cannot write JPEGs wider than 65,535 pixels anyway). Every random draw is keyed by the seed and
by its lattice row, shape or band, so the same parameters always give the same bytes.

    Benchmarks/make_sample.py OUT.jpg [--megapixels 100] [--seed 1] [--png OUT.png]

prints the size and the achieved bits per pixel. `cached_sample()` and `cached_png()` are what the harness uses:
they keep files in a work folder, named by their parameters, and reuse them.
"""
import argparse
import math
import os
import subprocess
import sys
from dataclasses import dataclass

import numpy as np

# Bump when the generator changes, so cached samples made by an older one are not reused.
GENERATOR_VERSION = 1
QUALITY = 85
BAND_ROWS = 256
ASPECT = 1.44  # 12000 x 8333 at 100 MP, like a camera's 3:2-ish frame

# Luminance octaves: (wavelength in pixels, amplitude in grey levels). In pixels, not fractions of the image,
# so the texture and the bits per pixel are the same at every image size.
LUMA_OCTAVES = [(2048, 38.0), (512, 26.0), (128, 16.0), (32, 9.0), (8, 5.0)]
CHROMA_OCTAVES = [(3072, 22.0), (384, 9.0)]
GRAIN_OCTAVE = (3, 16.0)  # a fine texture, switched on and off by a smooth mask:
GRAIN_MASK_WAVELENGTH = 700  # grain where that mask is positive
FINE_NOISE_SIGMA = 6.5
PIXELS_PER_SHAPE = 200_000


def dimensions(megapixels):
    """Width (a multiple of 16) and height for about `megapixels` million pixels at ASPECT."""
    width = 16 * round(math.sqrt(megapixels * 1e6 * ASPECT) / 16)
    return width, round(megapixels * 1e6 / width)


class SmoothNoise:
    """One octave of value noise: a random lattice every `wavelength` pixels, smoothly interpolated.

    Lattice rows are drawn from their own seeded generators, so any band can be made without the others."""

    def __init__(self, seed, octave_id, wavelength, width):
        self.key = (seed, octave_id)
        self.wavelength = wavelength
        self.columns = width // wavelength + 2
        position = np.arange(width, dtype=np.float32) / wavelength
        self.column0 = position.astype(np.int64)
        self.column_weight = smoothstep(position - self.column0)

    def band(self, y0, y1):
        position = np.arange(y0, y1, dtype=np.float32) / self.wavelength
        row0 = position.astype(np.int64)
        first = int(row0[0])
        lattice = np.stack([self._lattice_row(r) for r in range(first, int(row0[-1]) + 2)])
        rows = lattice[:, self.column0] * (1 - self.column_weight) + lattice[:, self.column0 + 1] * self.column_weight
        weight = smoothstep(position - row0)[:, None]
        return rows[row0 - first] * (1 - weight) + rows[row0 - first + 1] * weight

    def _lattice_row(self, row):
        return np.random.default_rng([*self.key, row]).standard_normal(self.columns, dtype=np.float32)


def smoothstep(t):
    return t * t * (3 - 2 * t)


@dataclass
class Shape:
    """A circle or a rotated rectangle that shifts the colour inside it: the image's sharp edges."""
    cx: float
    cy: float
    half_width: float
    half_height: float
    angle: float
    is_circle: bool
    colour_shift: np.ndarray  # (luma, chroma a, chroma b)
    stripe_period: float  # 0 for no stripes
    stripe_angle: float

    def bounds(self):
        reach = math.hypot(self.half_width, self.half_height)
        return self.cx - reach, self.cy - reach, self.cx + reach, self.cy + reach


def random_shapes(seed, width, height):
    rng = np.random.default_rng([seed, 7])
    shapes = []
    for _ in range(max(1, width * height // PIXELS_PER_SHAPE)):
        half_width = float(np.exp(rng.uniform(np.log(20), np.log(900))))
        shapes.append(Shape(
            cx=float(rng.uniform(0, width)), cy=float(rng.uniform(0, height)),
            half_width=half_width, half_height=half_width * float(rng.uniform(0.3, 1.5)),
            angle=float(rng.uniform(0, math.pi)), is_circle=bool(rng.random() < 0.5),
            colour_shift=rng.normal(0, [40, 15, 15]).astype(np.float32),
            stripe_period=float(rng.uniform(3, 24)) if rng.random() < 0.35 else 0.0,
            stripe_angle=float(rng.uniform(0, math.pi))))
    return shapes


class SampleImage:
    """The synthetic photograph, produced band by band as (rows, width, 3) uint8 arrays."""

    def __init__(self, width, height, seed):
        self.width, self.height, self.seed = width, height, seed
        self.luma = [(SmoothNoise(seed, i, w, width), a) for i, (w, a) in enumerate(LUMA_OCTAVES)]
        self.chroma = [(SmoothNoise(seed, 100 + i, w, width), SmoothNoise(seed, 200 + i, w, width), a)
                       for i, (w, a) in enumerate(CHROMA_OCTAVES)]
        self.grain = SmoothNoise(seed, 300, GRAIN_OCTAVE[0], width)
        self.grain_mask = SmoothNoise(seed, 301, GRAIN_MASK_WAVELENGTH, width)
        self.shapes = random_shapes(seed, width, height)

    def bands(self):
        for index, y0 in enumerate(range(0, self.height, BAND_ROWS)):
            yield self.band(index, y0, min(y0 + BAND_ROWS, self.height))

    def band(self, index, y0, y1):
        luma, chroma_a, chroma_b = self._gradients(y0, y1)
        for noise, amplitude in self.luma:
            luma += amplitude * noise.band(y0, y1)
        for noise_a, noise_b, amplitude in self.chroma:
            chroma_a += amplitude * noise_a.band(y0, y1)
            chroma_b += amplitude * noise_b.band(y0, y1)
        luma += GRAIN_OCTAVE[1] * self.grain.band(y0, y1) * np.clip(self.grain_mask.band(y0, y1), 0, None)
        self._draw_shapes(y0, y1, luma, chroma_a, chroma_b)
        fine = np.random.default_rng([self.seed, 400, index]).standard_normal(luma.shape, dtype=np.float32)
        luma += FINE_NOISE_SIGMA * fine
        return to_rgb(luma, chroma_a, chroma_b)

    def _gradients(self, y0, y1):
        """A sky-to-ground luminance ramp, a diagonal colour ramp and a vignette."""
        x = np.linspace(-1, 1, self.width, dtype=np.float32)[None, :]
        y = (np.arange(y0, y1, dtype=np.float32)[:, None] / self.height) * 2 - 1
        luma = 128 - 30 * y - 45 * (x * x + y * y) / 2
        chroma_a = 10 * (x + y)
        chroma_b = np.broadcast_to(-25 * y, luma.shape).copy()
        return luma, chroma_a, chroma_b

    def _draw_shapes(self, y0, y1, luma, chroma_a, chroma_b):
        for shape in self.shapes:
            left, top, right, bottom = shape.bounds()
            if bottom < y0 or top >= y1 or right < 0 or left >= self.width:
                continue
            rows = slice(max(y0, int(top)) - y0, min(y1, int(bottom) + 1) - y0)
            cols = slice(max(0, int(left)), min(self.width, int(right) + 1))
            dy = np.arange(rows.start + y0, rows.stop + y0, dtype=np.float32)[:, None] - shape.cy
            dx = np.arange(cols.start, cols.stop, dtype=np.float32)[None, :] - shape.cx
            inside, shift = shape_mask(shape, dx, dy), shape.colour_shift
            luma[rows, cols] += inside * (shift[0] + stripes(shape, dx, dy))
            chroma_a[rows, cols] += inside * shift[1]
            chroma_b[rows, cols] += inside * shift[2]


def shape_mask(shape, dx, dy):
    cos, sin = math.cos(shape.angle), math.sin(shape.angle)
    u = (dx * cos + dy * sin) / shape.half_width
    v = (dy * cos - dx * sin) / shape.half_height
    inside = (u * u + v * v <= 1) if shape.is_circle else (np.abs(u) <= 1) & (np.abs(v) <= 1)
    return inside.astype(np.float32)


def stripes(shape, dx, dy):
    if shape.stripe_period == 0:
        return np.float32(0)
    phase = (dx * math.cos(shape.stripe_angle) + dy * math.sin(shape.stripe_angle)) * (2 * math.pi / shape.stripe_period)
    return 18 * np.sin(phase)


def to_rgb(luma, chroma_a, chroma_b):
    rgb = np.empty(luma.shape + (3,), dtype=np.uint8)
    rgb[..., 0] = np.clip(luma + chroma_a, 0, 255)
    rgb[..., 1] = np.clip(luma - 0.5 * chroma_a - 0.3 * chroma_b, 0, 255)
    rgb[..., 2] = np.clip(luma + chroma_b, 0, 255)
    return rgb


def write_jpeg(image, path):
    """Streams the bands as one PPM into cjpeg; the file appears only when complete."""
    partial = path + ".partial"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with subprocess.Popen(["cjpeg", "-quality", str(QUALITY), "-outfile", partial], stdin=subprocess.PIPE) as cjpeg:
        cjpeg.stdin.write(b"P6\n%d %d\n255\n" % (image.width, image.height))
        for band in image.bands():
            cjpeg.stdin.write(band.tobytes())
        cjpeg.stdin.close()
    if cjpeg.returncode != 0:
        sys.exit(f"cjpeg failed with status {cjpeg.returncode} writing {partial}")
    os.replace(partial, path)


def make_jpeg(path, megapixels=100, seed=1):
    width, height = dimensions(megapixels)
    write_jpeg(SampleImage(width, height, seed), path)
    bits_per_pixel = os.path.getsize(path) * 8 / (width * height)
    print(f"{path}: {width}x{height}, {os.path.getsize(path) / 1e6:.1f} MB, {bits_per_pixel:.2f} bits/pixel",
          file=sys.stderr)


def make_png(jpeg_path, png_path):
    """The same pixels as PNG, written by libvips at its default deflate level (6)."""
    partial = png_path + ".partial.png"
    subprocess.run(["vips", "copy", jpeg_path, partial], check=True)
    os.replace(partial, png_path)
    print(f"{png_path}: {os.path.getsize(png_path) / 1e6:.1f} MB", file=sys.stderr)


def cached_sample(work_dir, megapixels, seed=1):
    """The sample JPEG for these parameters in `work_dir`, made on first use."""
    width, height = dimensions(megapixels)
    path = os.path.join(work_dir, f"sample-{width}x{height}-seed{seed}-q{QUALITY}-v{GENERATOR_VERSION}.jpg")
    if not os.path.exists(path):
        os.makedirs(work_dir, exist_ok=True)
        make_jpeg(path, megapixels, seed)
    return path


def cached_png(jpeg_path):
    """The PNG variant next to a cached sample JPEG, made on first use."""
    png_path = os.path.splitext(jpeg_path)[0] + ".png"
    if not os.path.exists(png_path):
        make_png(jpeg_path, png_path)
    return png_path


def cached_jp2(jpeg_path, writer, tessera="tessera"):
    """A tiled, lossy JPEG 2000 of a cached sample, made on first use by `writer`: "opj" is OpenJPEG's
    `opj_compress -t 1024,1024 -n 7 -r 20 -p RPCL -PLT` from the PNG variant (how archives' masters are made),
    "tessera" is `tessera convert -Q 62 --tile-size 1024` (also 20:1, RPCL with PLT and TLM, levels to a tile)."""
    jp2_path = os.path.splitext(jpeg_path)[0] + f"-{writer}.jp2"
    if not os.path.exists(jp2_path):
        partial = jp2_path + ".partial.jp2"
        if writer == "opj":
            subprocess.run(["opj_compress", "-i", cached_png(jpeg_path), "-o", partial, "-t", "1024,1024", "-n", "7",
                            "-r", "20", "-p", "RPCL", "-PLT"], check=True, stdout=subprocess.DEVNULL)
        else:
            subprocess.run([tessera, "convert", jpeg_path, partial, "-Q", "62", "--tile-size", "1024"], check=True)
        os.replace(partial, jp2_path)
        print(f"{jp2_path}: {os.path.getsize(jp2_path) / 1e6:.1f} MB", file=sys.stderr)
    return jp2_path


def cached_progressive(jpeg_path):
    """The progressive variant next to a cached sample JPEG (jpegtran -progressive: the same coefficients in
    libjpeg's default ten scans), made on first use. jpegtran holds every coefficient: 2.9 GB and about 40 s at a
    gigapixel."""
    progressive_path = os.path.splitext(jpeg_path)[0] + "-progressive.jpg"
    if not os.path.exists(progressive_path):
        partial = progressive_path + ".partial"
        subprocess.run(["jpegtran", "-progressive", "-copy", "all", "-outfile", partial, jpeg_path], check=True)
        os.replace(partial, progressive_path)
        print(f"{progressive_path}: {os.path.getsize(progressive_path) / 1e6:.1f} MB", file=sys.stderr)
    return progressive_path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the JPEG to write")
    parser.add_argument("--megapixels", type=float, default=100, help="image size in millions of pixels (default 100)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--png", metavar="OUT.png", help="also write the same image as PNG")
    args = parser.parse_args()
    make_jpeg(args.out, args.megapixels, args.seed)
    if args.png:
        make_png(args.out, args.png)


if __name__ == "__main__":
    main()
