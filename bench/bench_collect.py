"""Time ``collect`` on 50 returned packs of a 500-case paired study.

Run on demand (not a test)::

    python bench/bench_collect.py [--packs 50] [--cases 500]

It builds a study from the paired-rubric template with ``--cases`` synthetic cases and
``--packs`` raters, generates the packs, fills every answer with openpyxl, then times
``collect`` against ``pandas.read_excel(engine="openpyxl", sheet_name=None)`` reading
the same files, and prints both times, the ratio and the peak RSS (this process and
its reader children).
"""

from __future__ import annotations

import argparse
import csv
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect import collect
from sheetflow.generate import generate_packs
from sheetflow.templates import init_study


def build(root: Path, cases: int, packs: int) -> list[Path]:
    """A paired study with ``cases`` cases and ``packs`` raters, filled."""
    import json

    init_study(root, "paired-rubric")
    with (root / "items.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "prompt", "response_baseline", "response_improved"])
        for i in range(cases):
            w.writerow([f"TC-{i:04d}", f"Prompt {i}: what should be weighed?",
                        f"Baseline answer {i}. " * 20, f"Improved answer {i}. " * 25])
    with (root / "raters.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rater_id", "name", "last_name", "email", "role"])
        for i in range(packs):
            w.writerow([f"EV-{i:02d}", f"Rater {i}", f"Last{i}", "", "primary"])
    generate_packs(root)
    manifest = json.loads((root / "packs" / "manifest.json").read_text(encoding="utf-8"))
    (root / "returns").mkdir()
    out = []
    for pack in manifest["packs"]:
        dst = root / "returns" / pack["file"]
        fill_openpyxl(root / "packs" / pack["file"], dst, plan_answers(pack))
        out.append(dst)
    return out


def peak_rss_mb() -> tuple[float, float]:
    """Peak RSS of this process and of its largest child, in MB (Linux: KiB units)."""
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, kids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packs", type=int, default=50)
    parser.add_argument("--cases", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "study"
        t0 = time.perf_counter()
        files = build(root, args.cases, args.packs)
        print(f"built {len(files)} filled packs in {time.perf_counter() - t0:.1f} s "
              f"({sum(f.stat().st_size for f in files) / len(files) / 1024:.0f} KB each)")
        t0 = time.perf_counter()
        result = collect(root, write=True)
        ours = time.perf_counter() - t0
        me, kids = peak_rss_mb()
        print(f"collect: {ours:.2f} s, {len(result.ratings)} rating rows, "
              f"{result.report.error_count} errors; peak RSS parent {me:.0f} MB, "
              f"largest child {kids:.0f} MB")
        import pandas as pd

        t0 = time.perf_counter()
        for f in files:
            pd.read_excel(f, sheet_name=None, engine="openpyxl")
        base = time.perf_counter() - t0
        print(f"pandas.read_excel(engine='openpyxl', all sheets): {base:.2f} s")
        print(f"ratio: collect is {base / ours:.1f}x faster")


if __name__ == "__main__":
    main()
