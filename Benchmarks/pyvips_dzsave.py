#!/usr/bin/env python3
"""Runs dzsave with the newest libvips (PyPI's pyvips-binary), which has no command-line tool of its own:

    pyvips_dzsave.py IN OUT LAYOUT SUFFIX [--tile-size N]

The Python interpreter's start-up (about 0.1 s and 30 MB) is counted in this peer's time and memory."""
import sys

import pyvips

arguments = sys.argv[1:]
source, output, layout, suffix = arguments[:4]
options = {"layout": layout, "suffix": suffix}
if "--tile-size" in arguments:
    options["tile_size"] = int(arguments[arguments.index("--tile-size") + 1])
    options["overlap"] = 0
pyvips.Image.new_from_file(source, access="sequential").dzsave(output, **options)
