"""Time ``collect`` against python-calamine reading the raw cells of the same returns.

Run on demand (not a test)::

    python bench/bench_collect.py [--study paired|dices|small|all] [--packs 50]
                                  [--cases 500] [--repeats 3] [--growth]
                                  [--cache DIR] [--rebuild] [--keep DIR] [--phases]

Studies (each built once into the cache folder and reused; ``--rebuild`` starts again):

- **paired**: the paired-rubric template with ``--cases`` synthetic cases and
  ``--packs`` raters (default 50 x 500), every answer filled with openpyxl.
- **dices**: DICES-350's size: the answer-review template with 350 items and 123
  raters, filled by the simulated raters of ``sheetflow.demo.simulate``.
- **small**: the paired-rubric template's own 18 cases (about 500 answer cells per
  return), 10 raters, filled with openpyxl.

For each study, each step in a fresh process, alternating, ``--repeats`` times:

1. **collect** the returns (writing ``out/ratings.csv`` and ``out/validation.xlsx``), as
   ``sheetflow collect`` does;
2. **floor**: python-calamine reading every sheet of every returned file into Python
   values (``CalamineWorkbook.from_path`` and ``to_python`` per sheet), in one
   process: the practical floor, since collect reads through calamine itself.

It prints the medians of CPU time (the process and its children: collect's reader
sandboxes) and wall time, and the ratio collect / floor on both (targets: at most 2x
on paired and dices, 3x on small). ``--growth`` adds a table over three sizes each of
raters and cases (a paired study) with the growth exponents (the slope of log time
over log size). ``--keep DIR`` copies each study's ``ratings.csv`` and
``collection.json`` into ``DIR`` (to compare two versions' outputs).

The collect line splits its CPU time between the parent (hashing, assembling the
ratings, writing ``validation.xlsx`` and ``ratings.csv``) and the reader children.
``--phases`` adds, per return, where one file's check spends its time: the checks run
in one fresh process without the sandbox, each named step timed (wall clock, after one
warm-up file) by wrapping its function, beside the floor's time per return; then
what collect spends before any check, as a multiple of the floor: reading alone (the
zip checks and sheet scan, and calamine's read of the answer windows), and that plus
the parent's CPU per return (the outputs it writes, the hashing). Neither can be
skipped, so they bound the ratio from below in this design.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve()
DONE = "bench-build.json"
TARGETS = {"paired": 2.0, "dices": 2.0, "small": 3.0}

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
root, step = Path(sys.argv[1]), sys.argv[2]
if step == "collect":
    from sheetflow.collect.run import collect
    def run():
        result = collect(root, write=True)
        return {"rows": len(result.ratings), "errors": result.report.error_count}
else:
    from python_calamine import CalamineWorkbook
    files = sorted((root / "returns").glob("*.xlsx"))
    def run():
        cells = 0
        for path in files:
            wb = CalamineWorkbook.from_path(str(path))
            for name in wb.sheet_names:
                cells += sum(map(len, wb.get_sheet_by_name(name).to_python()))
            wb.close()
        return {"cells": cells}
def cpu_total():  # this process and its finished children (the reader sandboxes)
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
def split():
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime
wall, (me, kids) = time.perf_counter(), split()
found = run()
me2, kids2 = split()
print(json.dumps({"wall": time.perf_counter() - wall, "cpu": me2 + kids2 - me - kids,
                  "parent": me2 - me, "children": kids2 - kids, **found}))
"""

# One file's check in process, each step timed by wrapping the function that does it
# (the names the callers look up at run time). (label, module, owner or "", function).
STEPS = (
    ("open: zip checks and sheet scan", "sheetflow.collect.file_check", "", "open_book"),
    ("  of which the sheet scan", "sheetflow.collect.safety", "", "scan_sheet"),
    ("calamine read of the windows", "sheetflow.collect.reader", "Book", "_calamine_window"),
    ("identity stores", "sheetflow.collect.file_check", "", "identity_stores"),
    ("manifest entry inflated", "sheetflow.packs.manifest", "Manifest", "pack"),
    ("pack plan", "sheetflow.collect.file_check", "_Plan", "__init__"),
    ("row alignment", "sheetflow.collect.file_check", "FileChecker", "_align_rows"),
    ("locked-text digests", "sheetflow.collect.file_check", "", "check_locked"),
    ("answers, rows and self-checks", "sheetflow.collect.answers", "AnswerReader",
     "read_all"),
    ("  of which the block (sort, pickle, CSV)", "sheetflow.collect.answers",
     "AnswerReader", "_block"),
    ("    of which the CSV lines", "sheetflow.collect.rows", "", "csv_lines"),
)

PHASES = r"""
import functools, hashlib, importlib, json, sys, time
from pathlib import Path
root, steps = Path(sys.argv[1]), json.loads(sys.argv[2])
spent = {label: 0.0 for label, *_ in steps}
def timed(label, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] += time.perf_counter() - start
    return wrapper
for label, module, owner, name in steps:
    holder = importlib.import_module(module)
    holder = getattr(holder, owner) if owner else holder
    setattr(holder, name, timed(label, getattr(holder, name)))
from sheetflow.collect.file_check import FileJob, check_file, known_study
from sheetflow.collect.safety import Limits
from sheetflow.packs.manifest import open_manifest
from sheetflow.spec import load_study
manifest = open_manifest(root)
known_study(str(root), load_study(root))
jobs = [FileJob(str(p), p.name, hashlib.sha256(p.read_bytes()).hexdigest(), str(root),
                manifest, Limits()) for p in sorted((root / "returns").glob("*.xlsx"))]
check_file(jobs[0])  # warm-up: first-use costs are not a return's
spent = dict.fromkeys(spent, 0.0)
start = time.perf_counter()
for job in jobs:
    check_file(job)
total = time.perf_counter() - start
print(json.dumps({"files": len(jobs), "total": total, **spent}))
"""


# --------------------------------------------------------------------------- building


def build_paired(root: Path, cases: int | None, packs: int) -> None:
    """A paired study with ``cases`` synthetic cases (None: the template's 18) and
    ``packs`` raters, every answer filled with openpyxl (two processes)."""
    from synthetic import write_internal_scores

    from sheetflow.packs.generate import generate_packs
    from sheetflow.packs.manifest import open_manifest
    from sheetflow.spec.templates import init_study

    init_study(root, "paired-rubric")
    if cases is not None:
        with (root / "items.csv").open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["case_id", "prompt", "response_baseline", "response_improved"])
            for i in range(cases):
                w.writerow([f"TC-{i:04d}", f"Prompt {i}: what should be weighed?",
                            f"Baseline answer {i}. " * 20, f"Improved answer {i}. " * 25])
        write_internal_scores(root, [f"TC-{i:04d}" for i in range(cases)])
    with (root / "raters.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rater_id", "name", "last_name", "email", "role"])
        for i in range(packs):
            w.writerow([f"EV-{i:02d}", f"Rater {i}", f"Last{i}", "", "primary"])
    generate_packs(root)
    (root / "returns").mkdir(exist_ok=True)
    names = [head.file for head in open_manifest(root).heads]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_fill, [root] * len(names), names))


def _fill(root: Path, name: str) -> Path:
    sys.path.insert(0, str(HERE.parent.parent / "tests"))
    from roundtrip_helpers import fill_openpyxl, plan_answers

    from sheetflow.packs.manifest import open_manifest

    manifest = open_manifest(root)  # one pack's entry, not the whole manifest
    pack = manifest.pack(next(h for h in manifest.heads if h.file == name))
    dst = root / "returns" / name
    fill_openpyxl(root / "packs" / name, dst, plan_answers(pack))
    return dst


def study_root(cache: Path, name: str, packs: int, cases: int) -> tuple[Path, dict]:
    """Where study ``name`` is built, and what it is."""
    if name == "dices":
        spec = {"study": "dices", "template": "answer-review", "items": 350, "raters": 123}
    elif name == "small":
        spec = {"study": "small", "template": "paired-rubric", "items": None, "raters": 10}
    else:
        spec = {"study": "paired", "template": "paired-rubric", "items": cases,
                "raters": packs}
    return cache / f"{name}-{spec['items']}x{spec['raters']}", spec


def ensure_built(root: Path, spec: dict, rebuild: bool) -> Path:
    """The study folder ``root``, built unless a finished build of ``spec`` is there."""
    study = root / "study"
    marker = root / DONE
    if not rebuild and marker.is_file() and json.loads(marker.read_text()) == spec:
        return study
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(HERE), "--build", str(study), json.dumps(spec)],
                   check=True)
    marker.write_text(json.dumps(spec))
    print(f"  built {spec} in {time.perf_counter() - t0:.0f} s")
    return study


def _build_step(study: Path, spec: dict) -> None:
    if spec["template"] == "answer-review":
        sys.path.insert(0, str(HERE.parent))
        from bench_analyze import build

        build(study, spec["template"], spec["items"], spec["raters"])
    else:
        build_paired(study, spec["items"], spec["raters"])


# --------------------------------------------------------------------------- measuring


def timed(study: Path, step: str) -> dict[str, float]:
    """One step in a fresh interpreter: its measurements."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(study), step], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def medians(study: Path, repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median collect and floor figures over ``repeats`` alternating runs."""
    runs: dict[str, list[dict[str, float]]] = {"collect": [], "floor": []}
    for _ in range(repeats):
        for step in runs:
            runs[step].append(timed(study, step))
    return tuple({k: statistics.median(r[k] for r in runs[step]) for k in runs[step][0]}
                 for step in runs)


def keep_outputs(study: Path, name: str, keep: Path) -> None:
    """Copy ``ratings.csv`` and ``collection.json`` (the issue lists) to ``keep``."""
    keep.mkdir(parents=True, exist_ok=True)
    for part in ("ratings.csv", "collection.json"):
        shutil.copyfile(study / "out" / part, keep / f"{name}-{part}")


def show(name: str, spec: dict, study: Path, ours: dict, floor: dict) -> None:
    files = sorted((study / "returns").glob("*.xlsx"))
    size = sum(f.stat().st_size for f in files) / len(files) / 1024
    target = TARGETS.get(name)
    print(f"{name}: {spec['template']}, {spec['items'] or 'template'} items x "
          f"{spec['raters']} raters; {len(files)} returns of {size:.0f} KB; "
          f"{ours['rows']:,.0f} rating rows, {ours['errors']:.0f} errors")
    for label, m in (("collect", ours), ("floor", floor)):
        print(f"  {label:8s} cpu {m['cpu']:7.2f} s   wall {m['wall']:7.2f} s" +
              (f"   (parent {m['parent']:.2f} s, reader children {m['children']:.2f} s)"
               if label == "collect" else ""))
    print(f"  ratio collect/floor: cpu {ours['cpu'] / floor['cpu']:.2f}x, wall "
          f"{ours['wall'] / floor['wall']:.2f}x" + (f"   (target: {target:g}x or less)"
                                                    if target else ""))


# the steps no check can skip: the file's zip checks and sheet scan (calamine shows no
# formulas, so the scan finds them), and calamine's read of the answer windows
READING = ("open: zip checks and sheet scan", "calamine read of the windows")


def phases(study: Path, floor: dict, parent_cpu: float) -> None:
    """Print where one file's check spends its time, per return (see the docstring),
    and what reading alone costs beside the floor."""
    done = subprocess.run([sys.executable, "-c", PHASES, str(study),
                           json.dumps(STEPS)], check=True, capture_output=True, text=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    files, total = found.pop("files"), found.pop("total")
    top = sum(v for label, v in found.items() if not label.startswith(" "))
    print(f"  one file's check, per return, in process ({files} returns; wall ms):")
    for label, seconds in [*found.items(), ("other", total - top), ("total", total)]:
        print(f"    {label:42s} {seconds / files * 1000:7.1f}")
    per_floor = floor["cpu"] / files
    print(f"    {'the floor (every sheet read), for scale':42s} {per_floor * 1000:7.1f}  (cpu)")
    reading = sum(found[label] for label in READING) / files
    parent = parent_cpu / files
    print(f"  before any check: reading alone {reading * 1000:.1f} ms = "
          f"{reading / per_floor:.2f}x the floor; with collect's parent "
          f"({parent * 1000:.1f} ms cpu per return: outputs, hashing) "
          f"{(reading + parent) / per_floor:.2f}x")


def growth(cache: Path, repeats: int, rebuild: bool) -> None:
    """Collect and floor over three sizes each of raters and cases; the exponents."""
    from synthetic import growth_table

    def measure(cases: int, raters: int) -> tuple[float, float]:
        root, spec = study_root(cache, "paired", raters, cases)
        ours, floor = medians(ensure_built(root, spec, rebuild), repeats)
        return ours["cpu"], floor["cpu"]

    growth_table("collect", "floor", measure)


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--build":
        _build_step(Path(sys.argv[2]), json.loads(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=[*TARGETS, "all"], default="all")
    parser.add_argument("--packs", type=int, default=50)
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--growth", action="store_true", help="add the growth table")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "sheetflow-bench-collect")
    parser.add_argument("--rebuild", action="store_true", help="build even when cached")
    parser.add_argument("--phases", action="store_true",
                        help="add where one file's check spends its time")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy each study's ratings.csv and issue lists here")
    args = parser.parse_args()
    names = list(TARGETS) if args.study == "all" else [args.study]
    for name in names:
        root, spec = study_root(args.cache, name, args.packs, args.cases)
        study = ensure_built(root, spec, args.rebuild)
        ours, floor = medians(study, args.repeats)
        show(name, spec, study, ours, floor)
        if args.phases:
            phases(study, floor, ours["parent"])
        if args.keep:
            keep_outputs(study, name, args.keep)
    if args.growth:
        growth(args.cache, args.repeats, args.rebuild)


if __name__ == "__main__":
    main()
