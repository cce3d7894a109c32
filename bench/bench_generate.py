"""Benchmark: generate 50 packs for a 500-case paired study, against bare xlsxwriter.

Run on demand (not a test)::

    python bench/bench_generate.py [--raters 50] [--cases 500]

Prints wall time, CPU time and peak memory (the child process's maximum resident set
size) for ``generate_packs`` and for writing the same locked texts with bare xlsxwriter
(one row per case, no validations, formats, protection or merged cells), and the ratios.
Each phase runs in its own child process so the peaks do not mix. CPU time is the
steadier figure on a busy machine.

The bare baseline writes about 2,000 cells per pack; a pack has some 60,000 (merged
text rows, answer cells, totals), so the ratio measures the richer content as much as
overhead. ``BEFORE`` is the figure of the default run before the writer was reworked
(one done-count formula per answer line, every manifest entry held until the end).
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path

import xlsxwriter

from sheetflow.generate import generate_packs
from sheetflow.study import load_study

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "before: 68.8 s, 703 MiB (50 packs x 500 cases)"


def synthesise(folder: Path, cases: int, raters: int) -> None:
    """A paired-rubric study with ``cases`` cases of ~150-word responses."""
    shutil.copytree(ROOT / "templates" / "paired-rubric", folder)
    rng = random.Random(1)
    words = ["factor", "evidence", "option", "risk", "cost", "policy", "trade-off",
             "scenario", "source", "plan"]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)) + "."

    with (folder / "items.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "prompt", "response_baseline", "response_improved"])
        for i in range(cases):
            w.writerow([f"TC-{i:04d}", text(30), text(150), text(150)])
    with (folder / "raters.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rater_id", "name", "last_name", "email", "role"])
        for i in range(raters):
            w.writerow([f"R-{i:03d}", f"Rater {i}", f"Last{i:03d}", f"r{i}@example.org",
                        "primary"])


def bare(folder: Path, out: Path) -> None:
    """The same texts, one per cell, with nothing else (the floor for writing)."""
    study = load_study(folder)
    out.mkdir(parents=True, exist_ok=True)
    for rater in study.raters:
        wb = xlsxwriter.Workbook(str(out / f"{rater.id}.xlsx"),
                                 {"strings_to_formulas": False, "strings_to_urls": False,
                                  "strings_to_numbers": False})
        ws = wb.add_worksheet("Scoring")
        for r, item in enumerate(study.items):
            for c, value in enumerate(item.fields.values()):
                ws.write_string(r, c, value)
        wb.close()


def _phase(queue: multiprocessing.Queue, name: str, folder: Path, out: Path) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    t0 = time.perf_counter()
    if name == "generate":
        generate_packs(folder)
    else:
        bare(folder, out)
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    queue.put((wall, usage.ru_utime + usage.ru_stime - cpu0, usage.ru_maxrss / 1024))


def measure(name: str, folder: Path, out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one phase, in a fresh child."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_phase, args=(queue, name, folder, out))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--cases", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "study"
        synthesise(folder, args.cases, args.raters)
        g_wall, g_cpu, g_mem = measure("generate", folder, Path(tmp) / "bare")
        b_wall, b_cpu, b_mem = measure("bare", folder, Path(tmp) / "bare")
        size = sum(p.stat().st_size for p in (folder / "packs").glob("*.xlsx"))
    print(f"{args.raters} packs x {args.cases} paired cases")
    print(f"generate_packs : {g_wall:7.2f} s  peak RSS {g_mem:7.1f} MiB  (cpu {g_cpu:.2f} s, "
          f"{g_wall / args.raters * 1000:.0f} ms/pack, {size / 2**20:.1f} MiB of packs)")
    print(f"                 {BEFORE}")
    print(f"bare xlsxwriter: {b_wall:7.2f} s  peak RSS {b_mem:7.1f} MiB  (cpu {b_cpu:.2f} s)")
    print(f"ratio          : {g_wall / b_wall:7.2f} x time, {g_mem / b_mem:.2f} x memory")


if __name__ == "__main__":
    main()
