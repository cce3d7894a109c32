"""Benchmark: ``check`` on an items file far over the limit stays small and quick.

Run on demand (not a test)::

    python bench/bench_check.py [--items 80000]

Writes paired studies whose items files have cases of ~150-word responses (about 2.3 kB
each) and runs ``load_study`` on each in a fresh child process, printing its wall time
and peak memory (maximum resident set size): ``--items`` cases (80,000: 180 MB, under
the 200 MB file limit, so the row limit refuses it), 100,000 cases (225 MB: refused by
its size before reading), and 10,000 cases (the limit, which loads). The baseline is the whole file
read into memory at once (its bytes and its text), which is what the loader did before
it read the items row by row and gave up past the limit.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import tempfile
import time
from pathlib import Path

from bench_generate import synthesise

from sheetflow.errors import SpecError
from sheetflow.spec.limits import MAX_ITEMS
from sheetflow.spec.study import load_study


def _load(queue: multiprocessing.Queue, folder: Path, whole: bool) -> None:
    t0 = time.perf_counter()
    if whole:
        outcome = f"{len((folder / 'items.csv').read_bytes().decode('utf-8')):,} characters"
    else:
        try:
            outcome = f"{len(load_study(folder).items):,} items loaded"
        except SpecError as exc:
            outcome = str(exc).split(";")[0]
    wall = time.perf_counter() - t0
    queue.put((wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, outcome))


def measure(folder: Path, whole: bool = False) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and outcome of loading ``folder`` in a fresh child."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_load, args=(queue, folder, whole))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=80_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [("over the row limit", args.items, False),
                ("over the size limit", 100_000, False), ("at the limit", MAX_ITEMS, False),
                ("baseline: whole file read", args.items, True)]
        for name, n, whole in rows:
            folder = Path(tmp) / f"s{n}"
            if not folder.exists():
                synthesise(folder, n, 3)
            size = (folder / "items.csv").stat().st_size / 2**20
            wall, mem, outcome = measure(folder, whole)
            print(f"{name:26}: {n:7,} items ({size:6.1f} MiB)  {wall:6.2f} s  peak RSS "
                  f"{mem:7.1f} MiB  -> {outcome}")


if __name__ == "__main__":
    main()
