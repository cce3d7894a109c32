"""Benchmark: generate 50 packs for a 500-case paired study, against bare xlsxwriter.

Run on demand (not a test)::

    python bench/bench_generate.py [--raters 50] [--cases 500]

Prints wall time, CPU time and peak memory (the child process's maximum resident set
size) for ``generate_packs`` and for bare xlsxwriter writing *the same content*: every
cell (strings, blanks, formulas), merged range and data validation of every pack, as
recorded from a separate generate run, replayed without formats, protection, layout or
manifest. Both ratios (time and memory) are printed. Each phase runs in its own child
process so the peaks do not mix; the replay times only the writing (loading each pack's
recording is left out). CPU time is the steadier figure on a busy machine.

``BEFORE`` is the figure of the default run before the writer was reworked (one
done-count formula per answer line, every manifest entry held until the end).
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

from sheetflow.packs.generate import generate_packs

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


RECORDED = ("write_string", "write_blank", "write_formula", "merge_range", "data_validation")


def record(folder: Path, out: Path) -> None:
    """Run generate once, saving each pack's cells, merges and validations (no formats)."""
    import pickle

    from xlsxwriter.format import Format
    from xlsxwriter.workbook import Workbook
    from xlsxwriter.worksheet import Worksheet

    calls: list[tuple[str, str, tuple]] = []

    def plain(value: object) -> object:
        return None if isinstance(value, Format) else value

    def recorder(name: str):
        real = getattr(Worksheet, name)

        def method(self, *args):
            calls.append((self.name, name, tuple(plain(a) for a in args)))
            return real(self, *args)
        return method

    for name in RECORDED:
        setattr(Worksheet, name, recorder(name))
    real_close = Workbook.close

    def close(self):
        sheets = [ws.name for ws in self.worksheets()]
        with (out / (Path(self.filename).name + ".pickle")).open("wb") as fh:
            pickle.dump((sheets, list(calls)), fh)
        calls.clear()
        return real_close(self)

    Workbook.close = close
    out.mkdir(parents=True, exist_ok=True)
    generate_packs(folder)


def bare(recordings: Path, out: Path) -> tuple[float, float]:
    """Replay every recording with bare xlsxwriter; wall and CPU seconds of the writing."""
    import pickle
    out.mkdir(parents=True, exist_ok=True)
    wall = cpu = 0.0
    for path in sorted(recordings.glob("*.pickle")):
        with path.open("rb") as fh:
            sheets, calls = pickle.load(fh)
        t0, c0 = time.perf_counter(), time.process_time()
        wb = xlsxwriter.Workbook(str(out / path.stem),
                                 {"strings_to_formulas": False, "strings_to_urls": False,
                                  "strings_to_numbers": False})
        ws = {name: wb.add_worksheet(name) for name in sheets}
        for sheet, method, args in calls:
            getattr(ws[sheet], method)(*args)
        wb.close()
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        del calls
    return wall, cpu


def content(recordings: Path) -> str:
    """What one pack holds, from its recording: cells, merges, validation ranges."""
    import pickle
    path = sorted(recordings.glob("*.pickle"))[0]
    with path.open("rb") as fh:
        _, calls = pickle.load(fh)
    cells = sum(1 for _, m, _ in calls if m.startswith("write_"))
    merges = sum(1 for _, m, _ in calls if m == "merge_range")
    rules = [a for _, m, a in calls if m == "data_validation"]
    ranges = sum(len(a[-1].get("multi_range", "x").split()) for a in rules)
    return (f"one pack: {cells:,} cells, {merges:,} merged ranges, {len(rules):,} validation "
            f"elements over {ranges:,} ranges")


def _phase(queue: multiprocessing.Queue, name: str, folder: Path, out: Path) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage.ru_utime + usage.ru_stime
    t0 = time.perf_counter()
    if name == "generate":
        generate_packs(folder)
        wall = time.perf_counter() - t0
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - cpu0
    elif name == "record":
        record(folder, out)
        wall = cpu = 0.0
    else:
        wall, cpu = bare(out, out / "bare")
    queue.put((wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))


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
        g_wall, g_cpu, g_mem = measure("generate", folder, Path(tmp) / "rec")
        size = sum(p.stat().st_size for p in (folder / "packs").glob("*.xlsx"))
        shutil.rmtree(folder / "packs")
        shutil.rmtree(folder / "sealed", ignore_errors=True)
        measure("record", folder, Path(tmp) / "rec")
        b_wall, b_cpu, b_mem = measure("bare", folder, Path(tmp) / "rec")
        held = content(Path(tmp) / "rec")
    print(f"{args.raters} packs x {args.cases} paired cases")
    print(f"generate_packs : {g_wall:7.2f} s  peak RSS {g_mem:7.1f} MiB  (cpu {g_cpu:.2f} s, "
          f"{g_wall / args.raters * 1000:.0f} ms/pack, {size / 2**20:.1f} MiB of packs)")
    print(f"                 {BEFORE}")
    print(f"bare xlsxwriter: {b_wall:7.2f} s  peak RSS {b_mem:7.1f} MiB  (cpu {b_cpu:.2f} s; "
          "the same cells, merges and validations)")
    print(f"                 {held}")
    print(f"ratio          : {g_wall / b_wall:7.2f} x wall time, {g_cpu / b_cpu:.2f} x CPU time, "
          f"{g_mem / b_mem:.2f} x peak memory")


if __name__ == "__main__":
    main()
