"""Time ``collect`` on 50 returned packs of a 500-case paired study.

Run on demand (not a test)::

    python bench/bench_collect.py [--packs 50] [--cases 500] [--cache DIR] [--rebuild]

Three steps, each in its own fresh process, so no step's memory is charged to another:

1. **build** (skipped when the cache folder already holds a finished build): a study
   from the paired-rubric template with ``--cases`` synthetic cases and ``--packs``
   raters, its packs generated and every answer filled with openpyxl (two processes).
2. **collect** the returned packs (writing ``out/ratings.csv`` and
   ``out/validation.xlsx``), as ``sheetflow collect`` does.
3. **baseline**: ``pandas.read_excel(path, sheet_name=None, engine="openpyxl")`` over
   the same files.

For steps 2 and 3 it prints wall time and peak RSS: the process itself
(``RUSAGE_SELF``), its largest child (``RUSAGE_CHILDREN``: the sandbox children, two
at a time on two cores), and their sum, an upper bound for the process and one child
(two children run at once: add the child's figure once more for the whole step); then
the time ratio.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from sheetflow.packs.manifest import open_manifest

HERE = Path(__file__).resolve()
DONE = "bench-build.json"


def build(root: Path, cases: int, packs: int) -> list[Path]:
    """A paired study with ``cases`` cases and ``packs`` raters, packs filled."""
    from sheetflow.packs.generate import generate_packs
    from sheetflow.spec.templates import init_study

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
    (root / "returns").mkdir(exist_ok=True)
    names = [head.file for head in open_manifest(root).heads]
    with ProcessPoolExecutor(2) as pool:
        return list(pool.map(_fill, [root] * len(names), names))


def _fill(root: Path, name: str) -> Path:
    sys.path.insert(0, str(HERE.parent.parent / "tests"))
    from roundtrip_helpers import fill_openpyxl, plan_answers

    manifest = open_manifest(root)  # one pack's entry, not the whole manifest
    pack = manifest.pack(next(h for h in manifest.heads if h.file == name))
    dst = root / "returns" / name
    fill_openpyxl(root / "packs" / name, dst, plan_answers(pack))
    return dst


def ensure_built(cache: Path, cases: int, packs: int, rebuild: bool) -> Path:
    """The study folder in ``cache``, built unless a finished build with these sizes is there."""
    root = cache / "study"
    marker = cache / DONE
    wanted = {"cases": cases, "packs": packs}
    if not rebuild and marker.is_file() and json.loads(marker.read_text()) == wanted:
        print(f"reusing {packs} filled packs of {cases} cases in {cache}")
        return root
    if cache.exists():
        import shutil

        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    t0 = time.perf_counter()
    _run_step("build", str(root), str(cases), str(packs))
    marker.write_text(json.dumps(wanted))
    print(f"built {packs} filled packs in {time.perf_counter() - t0:.1f} s")
    return root


def _run_step(*args: str) -> dict[str, float]:
    """Run one step in a fresh interpreter; its JSON line of measurements."""
    done = subprocess.run([sys.executable, str(HERE), "--step", *args], check=True,
                          capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def _peaks() -> dict[str, float]:
    import resource

    # Linux reports ru_maxrss in KiB
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"self_mb": me, "child_mb": kids}


def step_collect(root: Path) -> dict[str, float]:
    """Collect every return of the study, as the CLI does."""
    from sheetflow.collect.run import collect

    t0 = time.perf_counter()
    result = collect(root, write=True)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "rows": len(result.ratings),
            "errors": result.report.error_count, **_peaks()}


def step_baseline(root: Path) -> dict[str, float]:
    """pandas with openpyxl over the same files, every sheet."""
    import pandas as pd

    files = sorted((root / "returns").glob("*.xlsx"))
    t0 = time.perf_counter()
    for path in files:
        pd.read_excel(path, sheet_name=None, engine="openpyxl")
    return {"seconds": time.perf_counter() - t0, **_peaks()}


def _step(name: str, args: list[str]) -> None:
    if name == "build":
        build(Path(args[0]), int(args[1]), int(args[2]))
        print(json.dumps({}))
    elif name == "collect":
        print(json.dumps(step_collect(Path(args[0]))))
    elif name == "baseline":
        print(json.dumps(step_baseline(Path(args[0]))))


def _show(name: str, m: dict[str, float]) -> None:
    print(f"{name:9s} {m['seconds']:7.2f} s   peak RSS: process {m['self_mb']:5.0f} MB, "
          f"largest child {m['child_mb']:5.0f} MB, sum {m['self_mb'] + m['child_mb']:5.0f} MB")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--step":
        _step(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packs", type=int, default=50)
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--cache", type=Path, default=None,
                        help="folder for the built study (default: a folder in the temp dir, "
                             "reused across runs)")
    parser.add_argument("--rebuild", action="store_true", help="build even when cached")
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.gettempdir()) / (
        f"sheetflow-bench-collect-{args.cases}x{args.packs}")
    root = ensure_built(cache, args.cases, args.packs, args.rebuild)
    files = sorted((root / "returns").glob("*.xlsx"))
    size = sum(f.stat().st_size for f in files) / len(files) / 1024
    print(f"{len(files)} returned packs, {size:.0f} KB each")
    ours = _run_step("collect", str(root))
    print(f"collect: {ours['rows']:.0f} rating rows, {ours['errors']:.0f} errors")
    _show("collect", ours)
    base = _run_step("baseline", str(root))
    _show("baseline", base)
    print(f"ratio: baseline time / collect time = {base['seconds'] / ours['seconds']:.1f}x "
          "(target: at least 3x)")


if __name__ == "__main__":
    main()
