"""Synthetic paired-rubric studies for the benches (items of any size, matching internal scores)."""

from __future__ import annotations

import csv
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
