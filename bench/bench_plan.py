"""Benchmark for sheetflow.plan: a 10 x 10 grid of designs, 200 simulated studies each.

Grid: 2-11 raters x 10-100 items (step 10), a 5-point ordinal measure with anticipated
alpha 0.75 (value shares 0.1/0.2/0.4/0.2/0.1); each simulated study's interval is
alpha's unit bootstrap (``--n-boot`` resamples, default 500 as in ``sheetflow plan``).
That is 20,000 simulated studies.

Baseline: the same number of bare ``krippendorff_alpha`` calls (same n_boot) on data
sets drawn beforehand, one per cell size, so the ratio is the planner's own overhead
(drawing data, bookkeeping) on top of the bootstrap it cannot avoid.

First, the default run: ``sheetflow plan`` with no options on the paired-rubric
template's ``init`` output (protocol 000: alpha on the 0-20 total against bands 0.10
apart, 2-6 raters x 10-200 cases, 100 simulated studies per design, 500 resamples, and
the search for the cases that meet the band width). Goal: under 10 s on 2 cores.

The default run is timed once as it is, then once under cProfile for the breakdown
of where its time went (shares of the profiled run: the grid's simulation, the search
for the cases that meet the band width, and inside both the replicates' category
counts, the ordinal mid-rank spread and the quantiles). The machine's load average is
printed before and after, since the figures depend on it.

Run on demand:  python bench/bench_plan.py [--simulations 200] [--n-boot 500]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sheetflow.plan import ModelSource, Target, plan_alpha, plan_study
from sheetflow.spec import init_study
from sheetflow.stats import krippendorff_alpha

# (label, module file, function) whose cumulative time the breakdown reports
PHASES = (
    ("simulating the grid", "simulate.py", "simulate_grid"),
    ("searching the cases for the band width", "design.py", "items_for_target"),
    ("  drawing the data sets", "simulate.py", "draw"),
    ("  replicates' category counts", "alpha.py", "_weighted_counts"),
    ("  ordinal mid-rank spread", "alpha.py", "_ordinal_spread"),
    ("  interval quantiles", "alpha.py", "_row_quantiles"),
)
RATERS = list(range(2, 12))
ITEMS = list(range(10, 101, 10))
MODEL = ModelSource(0.75, (0.1, 0.2, 0.4, 0.2, 0.1), (1, 2, 3, 4, 5), "ordinal")


def _timed(func):
    wall, cpu = time.perf_counter(), time.process_time()
    result = func()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _command(folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``sheetflow plan FOLDER`` run as a user runs it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sheetflow", "plan", "-q", str(folder)],
                   check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - wall, cpu


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"


def _breakdown(func) -> list[str]:
    """Cumulative time of each of :data:`PHASES` in one profiled call, as shares."""
    profile = cProfile.Profile()
    profile.runcall(func)
    table = pstats.Stats(profile).stats  # (file, line, name) -> (cc, nc, tt, ct, callers)
    total = max(ct for *_, ct, _ in table.values())
    lines = []
    for label, module, name in PHASES:
        spent = sum(ct for (path, _, fn), (*_, ct, _) in table.items()
                    if fn == name and path.endswith(module))
        lines.append(f"{label:<42} {100 * spent / total:5.1f}%")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--n-boot", type=int, default=500)
    args = parser.parse_args()
    cells = len(RATERS) * len(ITEMS)
    studies = cells * args.simulations

    print(f"load average before: {_load()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "study"
        init_study(folder, template="paired-rubric")
        c_wall, c_cpu = _command(folder)
        default, d_wall, d_cpu = _timed(lambda: plan_study(folder))
        breakdown = _breakdown(lambda: plan_study(folder))
    chosen = default.chosen()
    print(f"default run (sheetflow plan on the paired-rubric template, {len(default.table)} "
          f"designs): wall {d_wall:.1f} s, CPU {d_cpu:.1f} s; cheapest "
          f"{int(chosen['raters'])} raters x {int(chosen['items'])} cases")
    print(f"  the command itself (sheetflow plan DIR: start-up, plan, plan.xlsx): wall "
          f"{c_wall:.1f} s, CPU {c_cpu:.1f} s")
    print("  where the time went (share of a profiled run):")
    for line in breakdown:
        print(f"    {line}")

    result, wall, cpu = _timed(lambda: plan_alpha(
        MODEL, raters=RATERS, items=ITEMS, target=Target(width=0.2),
        simulations=args.simulations, n_boot=args.n_boot, seed=1))
    best = result.chosen()
    print(f"plan_alpha: {len(RATERS)} x {len(ITEMS)} grid, {args.simulations} simulations "
          f"per cell ({studies:,} studies), n_boot {args.n_boot}")
    print(f"  wall {wall:.1f} s, CPU {cpu:.1f} s, {1000 * cpu / studies:.2f} ms CPU per study")
    print(f"  cheapest design for width <= 0.2: {int(best['raters'])} raters x "
          f"{int(best['items'])} items (expected width {best['expected_width']:.3f})")

    rng = np.random.default_rng(2)
    data = {(r, n): MODEL.draw(rng, n, r).astype(float) for r in RATERS for n in ITEMS}

    def bare() -> None:
        for matrix in data.values():
            for i in range(args.simulations):
                krippendorff_alpha(matrix, level="ordinal", value_domain=[0, 1, 2, 3, 4],
                                   n_boot=args.n_boot, seed=i)

    _, b_wall, b_cpu = _timed(bare)
    print(f"baseline (bare krippendorff_alpha calls, same count and n_boot): wall "
          f"{b_wall:.1f} s, CPU {b_cpu:.1f} s")
    print(f"ratio plan / baseline (CPU): {cpu / b_cpu:.2f}")
    print(f"load average after: {_load()}")
    print(f"summary: default run {c_wall:.1f} s wall / {c_cpu:.1f} s CPU (goal: under 10 s "
          f"on 2 cores); {len(RATERS)} x {len(ITEMS)} grid {wall:.1f} s wall / {cpu:.1f} s "
          f"CPU")


if __name__ == "__main__":
    main()
