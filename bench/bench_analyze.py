"""Time ``analyze`` against ``collect`` on the same study, at three panel sizes.

Run on demand (not a test)::

    python bench/bench_analyze.py [--scenario single|paired|dices|all] [--cache DIR]
                                  [--rebuild] [--raters N] [--floors]
                                  [--workers N] [--repeats 3]

Scenarios (each a study built once into the cache folder, packs filled by the
simulated raters of ``sheetflow.demo.simulate``):

- **single**: the answer-review template (five categorical dimensions), 60 items,
  100 raters who each score every item.
- **paired**: the paired-rubric template with its 18 cases (577 answer rows per
  return), 500 raters.
- **dices**: DICES-350's size: the answer-review template with 350 items, 123 raters.

For each it runs, each in a fresh process, ``collect`` (writing ``out/ratings.csv``
and ``out/validation.xlsx``) and then what ``sheetflow analyze`` runs,
``analyze_and_write`` (the analysis and every output; for a large panel on a machine
with CPUs to spare the bulky outputs are written by worker processes while the
analysis goes on; ``--workers`` sets their number as ``analyze_and_write`` takes
it), and prints wall
time, CPU time (the process and its children: collect's reader sandboxes, the output
workers) measured after the imports, split between the process and its children, and
the ratio
analyze / collect (the target: analyze no slower than collect, and a peak RSS of
at most 300 MB for the 500-rater study). Each step runs ``--repeats`` times,
alternating, and the medians are printed with each run's ratio. The system time
(the kernel's share of the CPU time: mostly writing the outputs' pages) is shown
apart: where the host backs a virtual machine's memory only when first touched,
writing a few hundred megabytes of new file pages costs seconds of it, more or less
as other runs have freed pages before. ``--raters`` scales every scenario down
for a quick look.

``--floors`` adds what the bulky outputs cost on their own, in one fresh process after
the analysis (not timed): every feedback workbook as sheetflow writes it, against bare
xlsxwriter writing the same values (one header format, no widths, wrapping, number
formats or print set-up); and every table too large for the workbook as sheetflow
writes it (``tables/*.csv``), against :mod:`csv`'s ``writerows`` on the same columns.
The faster of each pair is what these outputs cost at the least with these libraries,
to set beside collect's CPU time. It also prints sheetflow's CPU time per cell of each
(what :mod:`sheetflow.report.jobs` weighs the writing jobs by) and what starting one
output worker costs (its imports and a one-row table).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SCENARIOS = {
    "single": ("answer-review", 60, 100),
    "paired": ("paired-rubric", None, 500),
    "dices": ("answer-review", 350, 123),
}
DONE = "bench-build.json"
MEMORY_TARGET_MB = 300

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
root = Path(sys.argv[1])
step = sys.argv[2]
if step == "collect":
    from sheetflow.collect.run import collect
    run = lambda: collect(root)
else:
    from sheetflow.report import analyze_and_write
    workers = None if sys.argv[3] == "auto" else int(sys.argv[3])
    run = lambda: analyze_and_write(root, workers=workers)  # what sheetflow analyze runs
def split():  # this process, and its finished children (readers, output workers)
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, me.ru_stime + kids.ru_stime
wall, (me, kids, system) = time.perf_counter(), split()
run()
me2, kids2, system2 = split()
peak = {w: resource.getrusage(getattr(resource, w)).ru_maxrss / 1024  # KiB on Linux
        for w in ("RUSAGE_SELF", "RUSAGE_CHILDREN")}
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": me2 + kids2 - me - kids,
                  "parent": me2 - me, "children": kids2 - kids, "system": system2 - system,
                  "self_mb": peak["RUSAGE_SELF"], "child_mb": peak["RUSAGE_CHILDREN"]}))
"""

FLOORS = r"""
import csv, json, resource, shutil, sys, tempfile, time
from pathlib import Path
import xlsxwriter
from sheetflow.analysis import analyze
from sheetflow.report.cells import created
from sheetflow.report.feedback import write_feedback_tables
from sheetflow.report.large import large_tables, write_csv
analysis = analyze(Path(sys.argv[1]))
when, out = created(analysis), Path(tempfile.mkdtemp())
def bare_workbook(_rater, tables, path):  # the same values: one header format, no layout
    wb = xlsxwriter.Workbook(str(path), {"in_memory": True})
    head = wb.add_format({"bold": True})
    for name, table in tables.items():
        ws = wb.add_worksheet(name[:31])
        for j, column in enumerate(table.columns):
            ws.write_string(0, j, str(column), head)
            for i, v in enumerate(table[column].tolist(), 1):
                if isinstance(v, str):
                    ws.write_string(i, j, v)
                elif isinstance(v, (int, float)) and v == v:
                    ws.write_number(i, j, v)
    wb.close()
def bare_csv(_name, table, path):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(table.columns)
        writer.writerows(zip(*(table[c].tolist() for c in table.columns)))
def cpu_of(write, items):
    start = time.process_time()
    for k, (key, value) in enumerate(items):
        write(key, value, out / f"{k}.out")
    return time.process_time() - start
def worker_start():  # one output worker: its imports and a one-row table (wall, CPU)
    from sheetflow.report.parallel import WorkerPool
    before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with WorkerPool(1) as pool:
        pool.submit((write_csv, (analysis.data.iloc[:1],), out / "start.csv"), 1)
        pool.finish()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - wall, sum(getattr(after, f) - getattr(before, f)
                                           for f in ("ru_utime", "ru_stime"))
feedback = list(analysis.feedback.items())
title = analysis.study.title
big = list(large_tables(analysis.tables, analysis.data).items())
print(json.dumps({
    "workbooks": len(feedback),
    "feedback": cpu_of(lambda r, t, p: write_feedback_tables(title, r, t, when, p), feedback),
    "feedback_bare": cpu_of(bare_workbook, feedback),
    "feedback_cells": sum(t.size for _, tables in feedback for t in tables.values()),
    "tables": {name: len(t) for name, t in big},
    "csv": cpu_of(lambda _n, t, p: write_csv(t, p), big), "csv_bare": cpu_of(bare_csv, big),
    "csv_cells": sum(t.size for _, t in big),
    "worker_start": sorted(worker_start() for _ in range(3))[1]}))
shutil.rmtree(out)
"""


def floors(root: Path, collect_cpu: float) -> None:
    """Print what the bulky outputs cost alone, sheetflow's and bare (see the docstring)."""
    done = subprocess.run([sys.executable, "-c", FLOORS, str(root)], check=True,
                          capture_output=True, text=True)
    f = json.loads(done.stdout.strip().splitlines()[-1])
    n = max(f["workbooks"], 1)
    rows = ", ".join(f"{name} {count:,}" for name, count in f["tables"].items()) or "none"
    print(f"  outputs alone, cpu (collect: {collect_cpu:.2f} s):")
    print(f"    {f['workbooks']} feedback workbooks   sheetflow {f['feedback']:6.2f} s "
          f"({f['feedback'] / n * 1000:.1f} ms each)   bare xlsxwriter "
          f"{f['feedback_bare']:6.2f} s ({f['feedback_bare'] / n * 1000:.1f} ms each)")
    print(f"    large tables as CSV  sheetflow {f['csv']:6.2f} s   csv.writerows "
          f"{f['csv_bare']:6.2f} s   (rows: {rows})")
    csv_cell = f["csv"] / max(f["csv_cells"], 1) * 1e6
    book_cell = f["feedback"] / max(f["feedback_cells"], 1) * 1e6
    book = f"{book_cell:.2f} us = {book_cell / csv_cell if csv_cell else 0:.0f} CSV cells" \
        if f["feedback_cells"] else "none written"
    print(f"    per cell (report/jobs.py's costs): CSV {csv_cell:.3f} us, feedback workbook "
          f"{book}; an output worker's start-up {f['worker_start'][0]:.2f} s wall, "
          f"{f['worker_start'][1]:.2f} s CPU (median of 3)")
    least = min(f["feedback"], f["feedback_bare"]) + min(f["csv"], f["csv_bare"])
    print(f"    these outputs alone, the faster of each: {least:.2f} s = "
          f"{least / collect_cpu:.2f}x collect")


def _repeat_items(template_items: Path, target: Path, count: int | None) -> None:
    """The template's items, cycled to ``count`` rows with fresh ids (first column)."""
    if count is None:
        return
    with template_items.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    with target.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for i in range(count):
            row = list(body[i % len(body)])
            row[0] = f"{row[0]}-{i:04d}"
            writer.writerow(row)


def _raters(target: Path, count: int) -> None:
    with target.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["rater_id", "name", "last_name", "email", "role"])
        for i in range(count):
            writer.writerow([f"R{i:03d}", f"Rater {i}", f"Surname{i:03d}",
                             f"r{i:03d}@example.org", "primary"])


def build(root: Path, template: str, items: int | None, raters: int) -> None:
    """A study from ``template`` with ``items`` items and ``raters`` raters, packs filled."""
    from sheetflow.demo.simulate import fill_packs
    from sheetflow.packs.generate import generate_packs
    from sheetflow.spec.templates import init_study

    init_study(root, template)
    _repeat_items(root / "items.csv", root / "items.csv", items)
    _raters(root / "raters.csv", raters)
    generate_packs(root)
    (root / "returns").mkdir(exist_ok=True)
    fill_packs(root, seed=11)


def ensure_built(cache: Path, name: str, raters: int, rebuild: bool) -> Path:
    template, items, default_raters = SCENARIOS[name]
    raters = raters or default_raters
    root = cache / f"{name}-{raters}"
    marker = root / DONE
    if marker.exists() and not rebuild:
        return root
    if root.exists():
        import shutil
        shutil.rmtree(root)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from bench_analyze import build; "
            "from pathlib import Path; build(Path(sys.argv[2]), sys.argv[3], "
            "None if sys.argv[4] == 'None' else int(sys.argv[4]), int(sys.argv[5]))")
    subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(root),
                    template, str(items), str(raters)], check=True)
    marker.write_text(json.dumps({"template": template, "items": items, "raters": raters}))
    return root


def median_run(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over the runs (peak memory: the largest)."""
    return {k: (max if k.endswith("_mb") else statistics.median)([r[k] for r in runs])
            for k in runs[0]}


def timed(root: Path, step: str, workers: str = "auto") -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), step, workers],
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "sheetflow-bench-analyze")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--raters", type=int, default=0, help="override the panel size")
    parser.add_argument("--floors", action="store_true",
                        help="add what the bulky outputs cost alone, and bare")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each step, alternating (medians are printed)")
    parser.add_argument("--workers", default="auto",
                        help="analyze's processes in all, this one included (1: no "
                             "worker); default as sheetflow analyze chooses")
    args = parser.parse_args()
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for name in names:
        root = ensure_built(args.cache, name, args.raters, args.rebuild)
        spec = json.loads((root / DONE).read_text())
        runs = [(timed(root, "collect"), timed(root, "analyze", args.workers))
                for _ in range(args.repeats)]  # alternating: both see the same machine
        collect_t, analyze_t = (median_run([run[k] for run in runs]) for k in (0, 1))
        ratios = sorted(a["cpu"] / c["cpu"] for c, a in runs)
        ratings = sum(1 for _ in (root / "out" / "ratings.csv").open(encoding="utf-8")) - 1
        print(f"{name}: {spec['template']}, {spec['raters']} raters, "
              f"{spec['items'] or 'template'} items, {ratings:,} rating rows")
        for label, t in (("collect", collect_t), ("analyze", analyze_t)):
            print(f"  {label:8s} wall {t['wall']:7.2f} s   cpu after imports {t['cpu']:7.2f} s   "
                  f"peak RSS {t['self_mb']:5.0f} MB (largest child {t['child_mb']:4.0f} MB)")
            kids = "readers" if label == "collect" else "output writers"
            print(f"  {'':8s} cpu: this process {t['parent']:.2f} s, its children "
                  f"{t['children']:.2f} s ({kids}); of all, system time {t['system']:.2f} s")
        print(f"  ratio analyze/collect (medians of {args.repeats}): wall "
              f"{analyze_t['wall'] / collect_t['wall']:.2f}x, cpu "
              f"{analyze_t['cpu'] / collect_t['cpu']:.2f}x; each run's cpu ratio "
              f"{', '.join(f'{r:.2f}x' for r in ratios)}   (target: 1x or less; "
              f"peak RSS {MEMORY_TARGET_MB} MB or less at 500 raters)")
        if args.floors:
            floors(root, collect_t["cpu"])


if __name__ == "__main__":
    main()
