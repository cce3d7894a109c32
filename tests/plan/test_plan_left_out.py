"""What a simulated width rests on: studies without an interval, resamples without an alpha.

A simulated study, or a bootstrap resample of one, whose ratings do not vary has no
alpha. The batch the plan simulates with (``alpha_complete_batch``) leaves such resamples
out of each study's interval, as analyze does. A study with no interval (no variation,
an interval of zero width, or one resting on fewer than ``MIN_RESAMPLES`` resamples)
once was left out of the median width, so that 10 items of a rare value "met" a width
target on the few studies that varied (median 0.118 where 60 items gave 0.958): such a
study now counts as infinitely wide (docs/plan.md, "Method"). The counts reach every
place the width is read (the notes, the console table and headline, the workbook,
``--json``).
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
from sheetflow.plan.simulate import bootstrap_weights
from sheetflow.spec.model import MIN_RESAMPLES
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
    cell = simulate_cell(RARE, 2, 25, simulations=40, n_boot=200, seed=7)
    assert cell["studies_used"] == round(40 * (1 - cell["undefined"])) < 40
    assert cell["resamples_total"] == cell["studies_used"] * 200
    assert 0 < cell["resamples_used"] < cell["resamples_total"]


def test_studies_without_an_interval_count_as_infinitely_wide():
    """10 items of a value 5% rare: most studies have no interval (no variation, or too
    few resamples with an alpha), so the median width is infinite, not the width of the
    few that vary; the studies that have one rest on at least MIN_RESAMPLES resamples."""
    cell = simulate_cell(RARE, 2, 10, simulations=40, n_boot=200, seed=7)
    assert cell["studies_used"] < 20 and cell["expected_width"] == np.inf
    assert cell["width_q90"] == np.inf and not np.isfinite(cell["width_se"])
    per_study = alpha_complete_batch(
        (RARE.draw(np.random.default_rng([7, 2, 10]), 10, 2, sets=40)[..., None]
         == np.arange(2)).sum(axis=1), [0, 1], "nominal", bootstrap_weights(7, 10, 200),
        with_used=True)
    regular = (per_study[2] - per_study[1] > 0) & (per_study[3] >= MIN_RESAMPLES)
    assert cell["studies_used"] == int(regular.sum())
    # a study of width 0 (a kappa of 1 has standard error 0) has no interval either
    certain = ModelSource(0.999999, (0.5, 0.5), ("a", "b"), "nominal")
    kappa = simulate_cell(certain, 2, 10, simulations=20, n_boot=0, seed=1,
                          statistic="cohen_kappa")
    assert kappa["studies_used"] < 20 and kappa["undefined"] > 0


def test_a_design_whose_studies_all_have_an_interval_is_unchanged():
    """Every study and resample has an alpha (or kappa): the figures are those the plan
    gave before studies without an interval counted as infinitely wide."""
    even = ModelSource(0.8, (0.25,) * 4, ("1", "2", "3", "4"), "ordinal")
    cell = simulate_cell(even, 3, 30, simulations=30, n_boot=100, seed=3)
    assert cell["studies_used"] == 30 and cell["resamples_used"] == 3000
    assert cell["expected_width"] == pytest.approx(0.3643206882903276, abs=1e-12)
    assert cell["width_q10"] == pytest.approx(0.2415853496667268, abs=1e-12)
    assert cell["width_q90"] == pytest.approx(0.4602570919551254, abs=1e-12)
    assert cell["width_se"] == pytest.approx(0.03437159724378895, abs=1e-12)
    kappa = simulate_cell(even, 2, 30, simulations=30, n_boot=100, seed=3,
                          statistic="cohen_kappa")
    assert kappa["studies_used"] == 30
    assert kappa["expected_width"] == pytest.approx(0.354908079782291, abs=1e-12)


@pytest.fixture
def keep_known(tmp_path) -> Path:
    folder = tmp_path / "p001"
    shutil.copytree(data_dir("templates") / "keep-known", folder)
    return folder


def test_ten_items_of_a_rare_value_no_longer_meet_the_width(keep_known):
    """The audit's case: 10 items "met" a 0.2 width at a median of 0.118 resting on the
    21 of 40 studies that varied, while the study's 60 items gave 0.958."""
    run = CliRunner().invoke(cli, ["plan", str(keep_known), *ARGS[:-6], "--items",
                                   "10,25", *ARGS[-4:], "--json"])
    data = json.loads(run.output)
    ten = next(d for d in data["designs"] if d["items"] == 10)
    assert not ten["meets"] and ten["expected_width"] is None  # infinite: no JSON number
    assert data["items"] != 10


# the width 1.5 is met by 25 items whose studies partly have no interval
WIDE = [*ARGS[:-6], "--items", "25", *ARGS[-4:], "--width", "1.5"]


def test_the_console_workbook_and_json_name_what_the_width_rests_on(keep_known):
    run = CliRunner().invoke(cli, ["plan", str(keep_known), *WIDE])
    out = run.output
    head = next(line for line in out.splitlines() if "with interval" in line)
    assert "resamples used" in head
    data = json.loads(CliRunner().invoke(cli, ["plan", str(keep_known), *WIDE,
                                               "--json"]).output)
    best = data["designs"][0]
    studies, resamples = best["studies_used"], best["resamples_used"]
    assert data["items"] == 25 and data["studies_used"] == studies < 40
    assert data["resamples_used"] == resamples < data["resamples_total"] == studies * 200
    said = (f"{studies} of 40 simulated studies with an interval, the other {40 - studies} "
            f"counted as infinitely wide, and {resamples:,} of {studies * 200:,} bootstrap "
            "resamples in those intervals")
    cheapest = next(line for line in out.splitlines() if line.startswith("cheapest"))
    assert said in cheapest
    assert f"{studies}/40" in out and f"{resamples}/{studies * 200}" in out
    assert "counts as infinitely wide in the median width" in out
    ws = openpyxl.load_workbook(keep_known / "out" / "plan.xlsx")["Plan"]
    rows = [[c for c in r if c is not None] for r in ws.iter_rows(values_only=True)]
    header = next(r for r in rows if "Simulated studies with an interval" in r)
    first = rows[rows.index(header) + 1]
    at = header.index("Simulated studies with an interval")
    assert first[at:at + 3] == [studies, resamples, studies * 200]
    methods = openpyxl.load_workbook(keep_known / "out" / "plan.xlsx")["Methods"]
    assert any("infinitely wide" in str(c) for r in methods.iter_rows(values_only=True)
               for c in r)


def test_a_width_resting_on_every_study_and_resample_adds_nothing(keep_known):
    """Equal shares and good agreement: every study and resample has an alpha, and the
    console keeps its table and headline as they were."""
    run = CliRunner().invoke(cli, ["plan", str(keep_known), "--statistic", "alpha",
                                   "--measure", "keep", "--expected", "0.9", "--raters",
                                   "2", "--items", "200", "--simulations", "20",
                                   "--n-boot", "100"])
    assert "with interval" not in run.output and "infinitely wide" not in run.output


def test_sizing_json_records_what_the_chosen_width_rests_on(keep_known):
    CliRunner().invoke(cli, ["plan", str(keep_known), *WIDE, "--record"])
    sizing = json.loads((keep_known / "sizing.json").read_text(encoding="utf-8"))
    assert sizing["items"] == 25 and sizing["studies_used"] < 40
    assert sizing["resamples_used"] < sizing["resamples_total"]
