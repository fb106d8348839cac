"""One timed run of a command for the benchmark scripts: wall time, CPU time and peak RSS from /usr/bin/time."""
import subprocess
import sys


def measure(argv, before=None):
    """(wall seconds, CPU seconds, peak RSS in MiB) of one run, which must succeed; `before` runs first, untimed."""
    if before:
        before()
    result = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M"] + argv, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {result.stderr}")
    wall, user, system, rss = result.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(rss) / 1024
