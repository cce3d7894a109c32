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

Run on demand:  python bench/bench_plan.py [--simulations 200] [--n-boot 500]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from sheetflow.plan import ModelSource, Target, plan_alpha, plan_study
from sheetflow.spec import init_study
from sheetflow.stats import krippendorff_alpha

RATERS = list(range(2, 12))
ITEMS = list(range(10, 101, 10))
MODEL = ModelSource(0.75, (0.1, 0.2, 0.4, 0.2, 0.1), (1, 2, 3, 4, 5), "ordinal")


def _timed(func):
    wall, cpu = time.perf_counter(), time.process_time()
    result = func()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--n-boot", type=int, default=500)
    args = parser.parse_args()
    cells = len(RATERS) * len(ITEMS)
    studies = cells * args.simulations

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "study"
        init_study(folder, template="paired-rubric")
        default, d_wall, d_cpu = _timed(lambda: plan_study(folder))
    chosen = default.chosen()
    print(f"default run (sheetflow plan on the paired-rubric template, {len(default.table)} "
          f"designs): wall {d_wall:.1f} s, CPU {d_cpu:.1f} s; cheapest "
          f"{int(chosen['raters'])} raters x {int(chosen['items'])} cases")

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


if __name__ == "__main__":
    main()
