"""Direction agreement with the internal scores, "Tied left out", leaves out every case
where either side is Tied, on planted returns whose answer is known before the run.

Protocol 000, section 4.3, asks what share of validators "correctly identify which
response is higher quality"; a case whose internal totals tie has no higher response,
and only a Tied judgement could agree with it. The planted study (paired-rubric
template, 3 validators x 18 cases): the internal totals tie on TC-001..TC-005, put the
baseline higher on TC-006..TC-008 and the improved arm higher on TC-009..TC-018. Every
validator names the improved arm on every case, except EV-01, who says Tied on TC-018.

Known answers, "vs internal scores, Tied left out": EV-02 and EV-03 10 of 13 (the 5
internal ties out), EV-01 9 of 12 (its Tied out too), all raters 29 of 38. Leaving out
only the validators' Tied judgements gave 10 of 18 and 29 of 53. "vs internal scores"
(Tied counted) stays 10 of 18 and 9 of 18.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from decision_helpers import run_analyze
from plant_helpers import KEEP, direction, plant, rubric_answer, study_from

from sheetflow.analysis import analyze
from sheetflow.collect.run import collect

CASES = [f"TC-{i:03d}" for i in range(1, 19)]
IMPROVED, BASELINE = "iter2_improved", "iter1_baseline"


def _internal_total(case: str, arm: str) -> int:
    i = CASES.index(case)
    if i < 5:
        return 12  # tied
    if i < 8:
        return 13 if arm == BASELINE else 11
    return 14 if arm == IMPROVED else 10


def _internal(root: Path) -> None:
    rows = [f"{c},{a},{_internal_total(c, a)}" for c in CASES for a in (BASELINE, IMPROVED)]
    (root / "internal_scores.csv").write_text("case_id,arm,total\n" + "\n".join(rows) + "\n",
                                              encoding="utf-8")


def _answer(cell):
    if cell["dimension"] == "direction" and cell["part"] == "value":
        if cell["rater"] == "EV-01" and cell["item_id"] == "TC-018":
            return "Tied"
        return direction(cell, IMPROVED)
    if cell["dimension"] == "recognised_arm":
        return "No"
    if cell["scope"] == "response":
        return rubric_answer(_internal_total(cell["item_id"], cell["arm"]), cell)
    return KEEP


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = study_from("paired-rubric", tmp_path_factory.mktemp("ties") / "study", _internal)
    plant(root, _answer)
    collect(root)
    return root


def test_tied_left_out_leaves_out_internal_ties_too(planted):
    table = analyze(planted).tables["direction_agreement"]
    left_out = table[table["comparison"] == "vs internal scores, Tied left out"]
    rows = left_out.set_index("rater")
    assert (rows.loc["EV-02", "n_units"], rows.loc["EV-02", "n_agree"]) == (13, 10)
    assert (rows.loc["EV-01", "n_units"], rows.loc["EV-01", "n_agree"]) == (12, 9)
    assert rows.loc["EV-01", "n_ties"] == 1
    assert (rows.loc["all raters", "n_units"], rows.loc["all raters", "n_agree"]) == (38, 29)
    assert rows.loc["all raters", "agreement"] == pytest.approx(29 / 38)
    assert "15 judgements on cases whose internal totals tie left out" in \
        rows.loc["all raters", "reason"]
    counted = table[table["comparison"] == "vs internal scores"].set_index("rater")
    assert (counted.loc["EV-02", "n_units"], counted.loc["EV-02", "n_agree"]) == (18, 10)
    assert (counted.loc["EV-01", "n_units"], counted.loc["EV-01", "n_agree"]) == (18, 9)


def test_methods_sheet_states_the_rule_for_both_internal_figures(planted):
    result, _, _ = run_analyze(planted)
    assert result.exit_code == 0, result.output
    sheet = openpyxl.load_workbook(planted / "out" / "analysis.xlsx")["Methods"]
    current, text = "", {}
    for row in sheet.iter_rows(values_only=True, max_col=2):
        current = row[0] or current
        text[current] = f"{text.get(current, '')} {row[1] or ''}".strip()
    methods = text["Direction agreement"]
    assert "'vs internal scores': the share of all judgements" in methods
    assert "'vs internal scores, Tied left out': every case where either side is Tied is " \
        "left out" in methods
