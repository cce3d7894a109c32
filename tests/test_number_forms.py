"""A rounded number and its reading in words never disagree.

Every figure is read in words, banded and compared with its target at its full value
(the decision never moves with display rounding), and shown with as many decimals as
it takes to stand on the same side of each bound it is read against: an ICC of 0.74963
beside Koo & Li's 0.75 is shown 0.7496 and read "moderate", never "0.750 moderate".
Each agreement figure in the terminal names the units and raters it rests on, and a
p-value and a percentage read the same in the terminal as on the Summary sheet.
"""

from __future__ import annotations

import openpyxl
import pytest
from click.testing import CliRunner
from demo_helpers import built_demo, copy_of

from sheetflow.analysis import agreement, position
from sheetflow.analysis.decision import reasons_of, threshold_check
from sheetflow.analysis.readings import (
    ICC_SCALE,
    KAPPA_SCALE,
    icc_reading,
    kappa_reading,
    reading_bounds,
)
from sheetflow.cli import cli
from sheetflow.words import NUMBER_FORMS, p_text, shown_number

PLANTED_ALPHA = 0.79996  # the demo's bands start at 0.80 ("High") and 0.70 ("Acceptable")
PLANTED_ICC = 0.74963  # Koo & Li: 0.75 is "good"


@pytest.mark.parametrize(("value", "scale", "text", "word"), [
    (0.74963, ICC_SCALE, "0.7496", "moderate"), (0.75, ICC_SCALE, "0.750", "good"),
    (0.90004, ICC_SCALE, "0.90004", "excellent"), (0.89996, ICC_SCALE, "0.900", "good"),
    (0.2096, KAPPA_SCALE, "0.2096", "slight"), (0.6099, KAPPA_SCALE, "0.6099", "moderate"),
    (0.61, KAPPA_SCALE, "0.610", "substantial"), (-0.0004, KAPPA_SCALE, "-0.0004", "poor")])
def test_a_reading_and_its_shown_number_agree(value, scale, text, word):
    read = icc_reading if scale == ICC_SCALE else kappa_reading
    assert read(value) == word
    assert shown_number(value, *reading_bounds(scale)) == text


def test_a_check_is_decided_on_its_full_value_and_shown_on_its_side():
    weak = threshold_check("alpha", 0.6996, 0.70, weak_from=0.60)
    assert (weak.outcome, reasons_of([weak])) == (
        "weak", ["alpha: 0.6996 (target at least 0.7000): weak"])
    # just under the weak range's lower end: not met, and never shown as 0.600
    below = threshold_check("alpha", 0.59996, 0.70, weak_from=0.60)
    assert (below.outcome, reasons_of([below])) == (
        "not met", ["alpha: 0.59996 (target at least 0.70000): not met"])


@pytest.mark.parametrize(("p", "text"), [
    (0.00953, "0.00953"), (0.0953, "0.0953"), (0.953, "0.953"), (0.0004, "< 0.001"),
    (None, "n/a")])
def test_a_p_value_has_one_form(p, text):
    assert p_text(p) == text
    assert "0.00953" in NUMBER_FORMS and "58.3%" in NUMBER_FORMS


def test_a_p_value_beside_its_limit_is_shown_on_its_side():
    assert p_text(0.04996, [0.05]) == "0.04996" and p_text(0.0503, [0.05]) == "0.0503"


class _Defaults:
    """A context whose plan sets no position parameters."""

    def param(self, name, default=None):
        return default


def test_position_lines_give_percentages_with_one_decimal():
    summary = {
        "position_bias": [{"rater": position.POOLED, "share_a": 32 / 66, "n": 66,
                           "p": 0.902, "flagged": False},
                          {"rater": "R2", "share_a": 0.34996, "n": 40, "p": 0.0302,
                           "flagged": True}],
        "position_free_preference": [{"arm": "llama", "preference": 0.6982,
                                      "ci": [0.5771, 0.7969], "share_when_under_a": 0.676,
                                      "share_when_under_b": 0.7191}]}
    lines = position.readings(summary, _Defaults())
    assert lines[0] == ("Position: label A chosen in 48.5% of 66 decisive judgements "
                        "(p = 0.902); flag when p < 0.05 and outside 35.0%-65.0%.")
    assert lines[1].startswith("Position bias flagged: R2 (34.996% A, p = 0.0302).")
    # the interval says its level, as the sheet's "95% CI" columns do
    assert lines[2] == ("Position-free preference for llama: 69.8% [95% CI 57.7%, 79.7%] "
                        "(under A 67.6%, under B 71.9%).")


def _planted_alpha(ctx):
    table = ORIGINAL["alpha"](ctx)
    total = table["kind"] == "total"
    table.loc[total, "alpha"], table.loc[total, "band"] = PLANTED_ALPHA, ctx.band(PLANTED_ALPHA)
    return table


def _planted_icc(ctx):
    table = ORIGINAL["icc"](ctx)
    table.loc[table["primary"].astype(bool), "icc"] = PLANTED_ICC
    return table


ORIGINAL = dict(agreement.PLAN.analyses)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return built_demo(tmp_path_factory.mktemp("forms") / "demo")


def test_planted_boundary_values_read_and_show_alike(demo, tmp_path, monkeypatch):
    root = copy_of(demo, tmp_path)
    monkeypatch.setitem(agreement.PLAN.analyses, "alpha", _planted_alpha)
    monkeypatch.setitem(agreement.PLAN.analyses, "icc", _planted_icc)
    result = CliRunner().invoke(cli, ["analyze", str(root)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # the terminal's alpha line: on its band's side, with the units and raters behind it
    total = next(ln for ln in lines if ln.startswith("alpha      Total (total)"))
    # (the four validators and the internal team, protocol 000 sections 4.1-4.2)
    team = ("(36 units, 5 raters; with the internal team's totals as one rater beside the 4 "
            "validators (protocol 000 sections 4.1-4.2); validators only: ")
    assert f" {PLANTED_ALPHA} [95% CI " in total and team in total and total.endswith(
        ") Acceptable reliability (study threshold)")
    check = next(ln for ln in lines if ln.startswith("check      Krippendorff's alpha"))
    assert f": {PLANTED_ALPHA} (target at least 0.70000): met - Acceptable reliability" in check
    assert "36 units, 5 raters" in check
    assert "Wilcoxon signed-rank (two-sided) p = 0.00953" in result.output
    ws = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    rows = {str(r[0].value): r for r in ws.iter_rows() if r[0].value}
    alpha = rows["Total (total)"]
    assert (alpha[1].value, alpha[1].number_format) == (PLANTED_ALPHA, "0.00000")
    assert alpha[7].value.startswith("Acceptable reliability (study threshold); with the "
                                     "internal team's totals as one rater")
    icc = next(r for name, r in rows.items() if name.startswith("Total (total): ICC(A,1)"))
    assert (icc[1].value, icc[1].number_format) == (PLANTED_ICC, "0.0000")
    assert icc[7].value.startswith("moderate (Koo & Li 2016)")
    p_cell = next(r[4] for r in ws.iter_rows() if r[5].value and "Wilcoxon" in str(r[5].value))
    assert p_cell.number_format == "0.00000"  # the terminal's 0.00953
