"""What a simulated width rests on: studies and bootstrap resamples without an alpha.

A simulated study, or a bootstrap resample of one, whose ratings do not vary has no
alpha. The batch the plan simulates with (``alpha_complete_batch``) left such resamples
out of each study's interval, and the plan left such studies out of the median width,
without a word: a width resting on 21 of 40 studies read like one resting on all 40.
The counts now reach every place the width is read (the notes, the console table and
headline, the workbook, ``--json``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.plan import ModelSource, simulate_cell
from sheetflow.spec.templates import data_dir
from sheetflow.stats import alpha_complete_batch

# a rare second value: many small studies, and many resamples of the others, hold no
# disagreement and no variation at all
RARE = ModelSource(0.6, (0.95, 0.05), ("Yes", "No"), "nominal")
ARGS = ["--statistic", "alpha", "--measure", "keep", "--expected", "0.6", "--shares",
        "0.95,0.05", "--raters", "2", "--items", "10", "--simulations", "40",
        "--n-boot", "200"]


def test_the_batch_counts_the_resamples_each_interval_rests_on():
    """Ten units of two values: one unit holds the only 'No' pair, so a resample
    without it has no variation and no alpha; the count is the resamples holding it."""
    counts = np.zeros((2, 10, 2))
    counts[:, :, 0] = 2
    counts[0, 0] = (0, 2)  # data set 0: unit 0 is the only one of the other value
    weights = np.random.default_rng(1).multinomial(10, [0.1] * 10, size=50).astype(float)
    estimate, low, high, used = alpha_complete_batch(counts, [0, 1], "nominal", weights,
                                                     with_used=True)
    assert used[0] == int((weights[:, 0] > 0).sum()) and 0 < used[0] < 50
    assert np.isnan(estimate[1]) and used[1] == 0  # no variation at all: no alpha
    # the three-array form is unchanged
    plain = alpha_complete_batch(counts, [0, 1], "nominal", weights)
    assert len(plain) == 3 and plain[1][0] == low[0] and plain[2][0] == high[0]


def test_a_simulated_design_says_how_many_studies_and_resamples_it_rests_on():
    cell = simulate_cell(RARE, 2, 10, simulations=40, n_boot=200, seed=7)
    assert cell["studies_used"] == round(40 * (1 - cell["undefined"])) < 40
    assert cell["resamples_total"] == cell["studies_used"] * 200
    assert 0 < cell["resamples_used"] < cell["resamples_total"]


@pytest.fixture
def keep_known(tmp_path) -> Path:
    folder = tmp_path / "p001"
    shutil.copytree(data_dir("templates") / "keep-known", folder)
    return folder


def test_the_console_workbook_and_json_name_what_the_width_rests_on(keep_known):
    run = CliRunner().invoke(cli, ["plan", str(keep_known), *ARGS])
    out = run.output
    head = next(line for line in out.splitlines() if "studies used" in line)
    assert "resamples used" in head
    data = json.loads(CliRunner().invoke(cli, ["plan", str(keep_known), *ARGS,
                                               "--json"]).output)
    best = data["designs"][0]
    studies, resamples = best["studies_used"], best["resamples_used"]
    assert data["items"] == 10 and data["studies_used"] == studies < 40
    assert data["resamples_used"] == resamples < data["resamples_total"] == studies * 200
    said = (f"resting on {studies} of 40 simulated studies and {resamples:,} of "
            f"{studies * 200:,} bootstrap resamples")
    cheapest = next(line for line in out.splitlines() if line.startswith("cheapest"))
    assert said in cheapest
    assert f"{studies}/40" in out and f"{resamples}/{studies * 200}" in out
    assert any(said in line and line.startswith("note: About 10 items")
               for line in out.splitlines())
    assert "left out of the median width" in out
    ws = openpyxl.load_workbook(keep_known / "out" / "plan.xlsx")["Plan"]
    rows = [[c for c in r if c is not None] for r in ws.iter_rows(values_only=True)]
    header = next(r for r in rows if "Simulated studies used" in r)
    first = rows[rows.index(header) + 1]
    at = header.index("Simulated studies used")
    assert first[at:at + 3] == [studies, resamples, studies * 200]


def test_a_width_resting_on_every_study_and_resample_adds_nothing(keep_known):
    """Equal shares and good agreement: every study and resample has an alpha, and the
    console keeps its table and headline as they were."""
    run = CliRunner().invoke(cli, ["plan", str(keep_known), "--statistic", "alpha",
                                   "--measure", "keep", "--expected", "0.9", "--raters",
                                   "2", "--items", "200", "--simulations", "20",
                                   "--n-boot", "100"])
    assert "studies used" not in run.output and "resting on" not in run.output



def test_sizing_json_records_what_the_chosen_width_rests_on(keep_known):
    CliRunner().invoke(cli, ["plan", str(keep_known), *ARGS, "--record"])
    sizing = json.loads((keep_known / "sizing.json").read_text(encoding="utf-8"))
    assert sizing["items"] == 10 and sizing["studies_used"] < 40
    assert sizing["resamples_used"] < sizing["resamples_total"]
