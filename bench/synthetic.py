"""What the benches share: synthetic paired studies' internal scores, the growth table."""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Callable
from pathlib import Path

ARMS = ("iter1_baseline", "iter2_improved")  # the paired-rubric template's arms


def write_internal_scores(folder: Path, case_ids: list[str]) -> None:
    """``internal_scores.csv`` for ``case_ids`` (the template's file names its own 18 cases)."""
    with (folder / "internal_scores.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "arm", "total"])
        for i, case in enumerate(case_ids):
            for k, arm in enumerate(ARMS):
                w.writerow([case, arm, 5 + (i + k) % 6])


GROWTH = {"raters": [(100, r) for r in (5, 10, 20)],
          "cases": [(c, 5) for c in (50, 100, 200)]}
"""Three sizes each of raters (at 100 cases) and cases (at 5 raters): (cases, raters)."""


def growth_table(ours: str, base: str,
                 measure: Callable[[int, int], tuple[float, float]]) -> None:
    """Print CPU seconds of ``ours`` and ``base`` over :data:`GROWTH`, and the growth
    exponents (the slope of log time over log size); ``measure(cases, raters)`` gives
    the two figures of one size."""
    print("growth (paired; CPU seconds, medians):")
    print(f"  {'series':7s} {'cases':>5s} {'raters':>6s} {ours:>9s} {base:>9s} {'ratio':>6s}")
    for what, sizes in GROWTH.items():
        points = []
        for cases, raters in sizes:
            a, b = measure(cases, raters)
            points.append((raters if what == "raters" else cases, a, b))
            print(f"  {what:7s} {cases:5d} {raters:6d} {a:9.2f} {b:9.2f} {a / b:5.2f}x")
        print(f"  exponent over {what}: {ours} {_slope(points, 1):.2f}, "
              f"{base} {_slope(points, 2):.2f}")


def _slope(points: list[tuple[float, float, float]], at: int) -> float:
    """Least-squares slope of log(time) on log(size)."""
    xs = [math.log(p[0]) for p in points]
    ys = [math.log(p[at]) for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / \
        sum((x - mx) ** 2 for x in xs)
