"""Start-up time of the ``sheetflow`` command.

Times ``python -m sheetflow --version`` and ``--help`` (and importing the library's
light entry points) in fresh processes, against the floor ``python -c "import click"``:
a click tool cannot start faster than Python plus click. Reports the median wall time
of several runs, the ratio to the floor and the peak RSS of one run. Target: under
0.3 s for --version and --help.

Also shows which of pandas, scipy, openpyxl, xlsxwriter and numpy each entry point
loads (none should, for the CLI).

Run on demand:  python bench/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

HEAVY = ("pandas", "scipy", "openpyxl", "xlsxwriter", "numpy")
CASES = {
    'python -c "import click"  (floor)': ["-c", "import click"],
    "sheetflow --version": ["-m", "sheetflow", "--version"],
    "sheetflow --help": ["-m", "sheetflow", "--help"],
    "sheetflow check --help": ["-m", "sheetflow", "check", "--help"],
    "import sheetflow.cli": ["-c", "import sheetflow.cli"],
    "import sheetflow.spec.study": ["-c", "import sheetflow.spec.study"],
    "import sheetflow.collect.run": ["-c", "import sheetflow.collect.run"],
}


def wall(args: list[str], runs: int) -> float:
    """Median wall time of ``python args`` over ``runs`` fresh processes."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], check=True, capture_output=True,
                       env={**os.environ, "NO_COLOR": "1"})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_rss_mib(args: list[str]) -> float:
    """Peak RSS of one ``python args`` process, in MiB (Linux reports KiB)."""
    code = ("import resource, subprocess, sys; "
            f"subprocess.run([sys.executable, *{args!r}], capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return int(out) / 1024


def heavy_loaded(module: str) -> list[str]:
    """Which heavy libraries ``import module`` pulls in."""
    code = (f"import sys, {module}; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True).stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per case (median)")
    runs = parser.parse_args().runs
    assert resource  # Linux/macOS only (peak RSS)
    floor = None
    print(f"{'case':38} {'median s':>9} {'x floor':>8} {'peak MiB':>9}")
    for name, args in CASES.items():
        seconds = wall(args, runs)
        floor = floor or seconds
        print(f"{name:38} {seconds:9.3f} {seconds / floor:8.2f} {peak_rss_mib(args):9.1f}")
    for module in ("sheetflow.cli", "sheetflow.spec.study", "sheetflow.collect.run",
                   "sheetflow.packs.generate"):
        print(f"import {module:22} loads: {', '.join(heavy_loaded(module)) or 'none of them'}")
    print("target: sheetflow --version and --help under 0.3 s "
          "(before lazy imports: 1.7 s and 132 MiB)")


if __name__ == "__main__":
    main()
