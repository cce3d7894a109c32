"""A plan sizes the design the study really has.

Protocol 002's second raters rate only a subset (``[design.second_rater] fraction``),
the ceiling fraction of each arm-by-task-block stratum, and the ICC is computed on the
units every rater rated (the analysis drops the rest listwise). The anchored-plan
template (2 raters, 16 items in four strata of 4, fraction 0.25) rates 4 items twice:
its plan is Bonett's width for 2 raters x 4 items, and the items it asks for are those
whose subset reaches Bonett's item count; an item count whose subset is below two is
refused naming the option and the range.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.packs.assign import second_rater_items
from sheetflow.plan import plan_study
from sheetflow.plan.formulas import bonett_icc_items, icc_design_width
from sheetflow.spec import init_study
from sheetflow.spec.study import load_study


@pytest.fixture
def anchored(tmp_path):
    return init_study(tmp_path / "ap", template="anchored-plan")


def _row(result, raters, items):
    t = result.table
    return t[(t["raters"] == raters) & (t["items"] == items)].iloc[0]


def test_the_icc_is_sized_on_the_second_rater_subset(anchored):
    study = load_study(anchored)
    subset = len(second_rater_items(study))  # the draw generate makes: 1 of each 4
    assert (len(study.items), subset) == (16, 4)
    result = plan_study(anchored, raters=[2])
    # 4 rated items: Bonett's 0.99 is far from the exact 1.25, which the plan shows
    assert icc_design_width(0.75, 2, 4) == (pytest.approx(1.246, abs=0.001), True)
    assert ("This study as specified (2 raters x 4 of 16 items; the second-rater subset, "
            "fraction 0.25): the ICC on 'total' can expect a 95% interval about "
            f"{icc_design_width(0.75, 2, 4)[0]:.2f} wide") in result.notes[0]
    own = _row(result, 2, 16)
    assert own["subset"] == 4
    assert own["expected_width"] == pytest.approx(icc_design_width(0.75, 2, 4)[0])
    # Bonett: 75 rated units for width 0.2 at ICC 0.75 (the formula the references test),
    # 79 with his correction for 2 raters (+5 rho, presize's convention, which statpsych's
    # exact-F rescaling agrees with); 313 items are the fewest whose quarter, rounded
    # up, is 79
    assert bonett_icc_items(0.75, 2, 0.2) == 75
    assert bonett_icc_items(0.75, 2, 0.2, small_k_adjust=True) == 79
    assert own["items_needed"] == 313 and math.ceil(313 / 4) == 79 > math.ceil(312 / 4)
    # ICC(A,1), which protocol 002 reports: Bonett's count is a lower bound there
    assert any(("At least 313 items (79 of them in the second-rater subset) with 2 raters "
                "are needed to make the interval no wider than 0.2") in n
               for n in result.notes)
    assert any("Bonett's (2002) correction for 2 raters" in n and "presize" in n
               for n in result.notes)
    best = result.chosen()
    assert (best["items"], best["subset"]) == (313, 79)
    # the primary rates every item, the second rater the subset: 16 + 4 ratings
    assert own["cost"] == 20 and best["cost"] == 313 + 79


def test_each_stratum_rounds_up_as_the_draw_does(anchored):
    """At fraction 0.3 each stratum of 4 gives ceil(1.2) = 2: 8 items, not ceil(4.8) = 5."""
    toml = anchored / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace("fraction = 0.25",
                                                              "fraction = 0.3"),
                    encoding="utf-8")
    assert len(second_rater_items(load_study(anchored))) == 8
    result = plan_study(anchored, raters=[2])
    assert "2 raters x 8 of 16 items; the second-rater subset, fraction 0.3)" in \
        result.notes[0]
    assert _row(result, 2, 16)["expected_width"] == pytest.approx(
        icc_design_width(0.75, 2, 8)[0])  # the exact width: few items


def test_the_subset_recorded_at_lock_is_the_one_planned(anchored):
    study = load_study(anchored)
    sealed = anchored / "sealed"
    sealed.mkdir()
    chosen = [it.id for it in study.items[:6]]
    (sealed / "second-rater-selection.json").write_text(json.dumps({"selected": chosen}))
    result = plan_study(anchored, raters=[2])
    assert ("2 raters x 6 of 16 items; the second-rater subset recorded at lock, fraction "
            "0.25)") in result.notes[0]


def test_the_cli_table_shows_the_items_every_rater_rates(anchored):
    result = CliRunner().invoke(cli, ["plan", str(anchored), "--raters", "2", "--items",
                                      "40"])
    assert result.exit_code == 1, result.output  # no design of this grid meets 0.2
    assert "  raters  items  rated by all  width  ratings per dimension  meets" in \
        result.output
    assert "       2     40            10" in result.output


def test_too_few_items_for_two_in_the_subset_are_refused_in_words(anchored):
    result = CliRunner().invoke(cli, ["plan", str(anchored), "--items", "4"])
    assert result.exit_code == 2
    assert ("--items 4: give counts from 5 to 10,000 (at the second-rater fraction 0.25, 5 "
            "items put 2 in the subset every rater rates, the fewest an interval needs; a "
            "study holds at most 10,000)") in " ".join(result.output.split()), result.output
