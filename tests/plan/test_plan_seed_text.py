"""The plan workbook's Seed row says which counts seed a design, and the plan keeps to it.

It said "default_rng([seed, raters, units])" beside a table whose raters are the
validators and whose rows are cases, where protocol 000's designs are drawn with the
internal team as one more rater and two rated responses per case: a reader reproducing
a design from the table's counts drew another one.
"""

from __future__ import annotations

import shutil

import numpy as np
import openpyxl

from sheetflow.plan import ModelSource, plan_study, simulate_cell
from sheetflow.plan.workbook import write_plan_workbook
from sheetflow.spec.templates import data_dir


def test_a_team_design_is_reproduced_from_the_counts_the_seed_row_names(tmp_path):
    folder = tmp_path / "p000"
    shutil.copytree(data_dir("templates") / "paired-rubric", folder)
    result = plan_study(folder, expected=0.75, raters=[3], items=[10], simulations=20,
                        n_boot=50)
    assert result.team and result.units_per_item == 2
    row = result.table[(result.table["raters"] == 3) & (result.table["items"] == 10)]
    model = ModelSource(0.75, tuple([1 / 21] * 21), tuple(range(21)), result.level)
    # the raters simulated (3 validators and the team) and the units rated (2 per case)
    cell = simulate_cell(model, 4, 20, simulations=20, n_boot=50, seed=result.seed)
    assert np.isclose(cell["expected_width"], float(row["expected_width"].iloc[0]))
    sheet = openpyxl.load_workbook(write_plan_workbook(result, tmp_path / "plan.xlsx"))
    seed = next(str(r[1].value) for r in sheet["Methods"].iter_rows(min_row=2, max_col=2)
                if r[0].value == "Seed")
    assert "with the internal team where it rates, one more than the design's count" in seed
    assert "two per case in a paired study" in seed
    assert "default_rng([seed, units, resamples, 1])" in seed
