"""What a figure leaves out is said where it is read (console, Summary sheet,
summary.json), with counts: bootstrap resamples without alpha, N/A answers left out,
cases the signed-rank test drops, tied tasks of a hypothesis, an undefined trend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pytest
from decision_helpers import KEEP, edit_returns, run_analyze
from plant_helpers import KEEP as LEAVE
from plant_helpers import direction, plant, rubric_answer, study_from

from sheetflow import stats
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.spec.study import load_study
from sheetflow.stats import alpha as alpha_module

SAME = {"overall_rating": "Correct", "factual_correctness": "Correct",
        "faithfulness": "Faithful", "citation_quality": "Good",
        "refusal_appropriateness": "Appropriate"}


def _sheet_text(root: Path, sheet: str) -> str:
    """Every cell of ``sheet`` in out/analysis.xlsx, as one text."""
    ws = openpyxl.load_workbook(root / "out" / "analysis.xlsx")[sheet]
    return "\n".join(" | ".join(str(v) for v in row if v is not None)
                     for row in ws.iter_rows(values_only=True))


def _answer_review(root: Path, change) -> tuple:
    """The answer-review template filled by the simulated raters, then ``change(rater,
    dimension, item index)`` written over them (KEEP leaves a cell); collected and
    analysed."""
    study_from("answer-review", root)
    fill_packs(root, seed=5)
    items = [it.id for it in load_study(root).items]
    edit_returns(root, lambda pack, cell: change(pack["rater_id"], cell["dimension"],
                                                 items.index(cell["item_id"])))
    collect(root)
    return run_analyze(root)


def _undefined_resamples(matrix: np.ndarray, n_boot: int, seed: int) -> int:
    """Recount, value by value, the resamples of pairable units with one value only
    (no variation): the same draws as the bootstrap (its seed and chunks)."""
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    rng = np.random.default_rng(seed)
    undefined = 0
    for start in range(0, n_boot, alpha_module._CHUNK):
        size = min(alpha_module._CHUNK, n_boot - start)
        for draw in rng.integers(0, pairable.shape[1], size=(size, pairable.shape[1])):
            values = pairable[:, draw]
            undefined += len(np.unique(values[~np.isnan(values)])) == 1
    return undefined


def test_alpha_counts_the_resamples_its_interval_rests_on():
    """One disagreement among 18 units: a resample without that unit has no variation
    and no alpha; ``n_boot_used`` counts the rest, as a recount of the draws does."""
    matrix = np.ones((2, 18))
    matrix[0, 0] = 0.0
    res = stats.krippendorff_alpha(matrix, level="nominal", n_boot=1000, seed=11).iloc[0]
    left_out = _undefined_resamples(matrix, 1000, 11)
    assert 0 < left_out < 1000
    assert res["n_boot_used"] == 1000 - left_out
    assert stats.krippendorff_alpha(matrix, level="nominal", n_boot=0).iloc[0][
        "n_boot_used"] == 0


def test_resamples_left_out_are_said(tmp_path):
    """Both raters one category throughout but rater1's first overall rating: alpha is
    0, and the resamples without that unit (no variation) are said, counted."""
    def change(rater, dim, index):
        if dim not in SAME:
            return KEEP
        return "Incorrect" if (dim, index, rater) == ("overall_rating", 0, "rater1") \
            else SAME[dim]
    root = tmp_path / "s"
    result, summary, _ = _answer_review(root, change)
    ws = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Alpha"]
    rows = list(ws.iter_rows(values_only=True))
    header = list(rows[0])
    row = dict(zip(header, next(r for r in rows if "(overall_rating)" in str(r[0])),
                   strict=True))
    values = {"Correct": 1.0, "Incorrect": 0.0}
    matrix = np.array([[values["Incorrect" if r == "rater1" and i == 0 else "Correct"]
                        for i in range(18)] for r in ("rater1", "rater2")])
    n_boot = int(row["bootstrap resamples"])
    left_out = _undefined_resamples(matrix, n_boot, int(row["seed"]))
    assert 0 < left_out < n_boot
    assert row["resamples in interval"] == int(row["bootstrap resamples"]) - left_out
    said = (f"{left_out} of {n_boot} resamples had no variation (alpha "
            "undefined) and were left out of the interval")
    alpha_line = next(ln for ln in result.output.splitlines()
                      if ln.startswith("alpha") and "(overall_rating)" in ln)
    assert said in alpha_line
    assert said in _sheet_text(root, "Summary")
    assert said in next(a["note"] for a in summary["alpha"]
                        if a["measure"] == "overall_rating")
    assert "left out of the interval" in _sheet_text(root, "Methods")


def test_na_answers_left_out_are_said(tmp_path):
    """rater1 answers N/A on faithfulness for 6 of 18 items (na_handling "missing"):
    the figures on 12 units say why, where the other columns have 18."""
    def change(rater, dim, index):
        return "N/A" if (dim, rater) == ("faithfulness", "rater1") and index < 6 else KEEP
    root = tmp_path / "s"
    result, summary, _ = _answer_review(root, change)
    said = '6 of 36 answers N/A, left out (na_handling = "missing"): 12 of 18 units'
    lines = [ln for ln in result.output.splitlines() if "(faithfulness)" in ln]
    assert said in next(ln for ln in lines if ln.startswith("alpha"))
    assert said in next(ln for ln in lines if ln.startswith("kappa"))
    # the alpha and kappa figures, and the alpha check (its line in the decision and
    # its row in the checks table), which carries what the Alpha table notes
    assert _sheet_text(root, "Summary").count(said) == 4
    assert said in next(a["note"] for a in summary["alpha"] if a["measure"] == "faithfulness")
    assert not any("N/A" in a["note"] for a in summary["alpha"]
                   if a["measure"] != "faithfulness")


def test_signed_rank_zero_differences_are_said(tmp_path):
    """12 of 18 cases with equal totals in both arms: the Wilcoxon p rests on 6."""
    root = study_from("paired-rubric", tmp_path / "s")
    items = [it.id for it in load_study(root).items]

    def answer(cell):
        i = items.index(cell["item_id"]) if cell["item_id"] in items else 0
        if cell["dimension"] == "direction":
            return "Tied" if i < 12 else direction(cell, "iter2_improved")
        if cell["label"]:
            if i < 12:
                return rubric_answer(10 + (i % 5), cell)
            return rubric_answer(15 if cell["arm"] == "iter2_improved" else 9 + (i % 3), cell)
        return LEAVE
    plant(root, answer)
    collect(root)
    result, summary, _ = run_analyze(root)
    said = "test on 6 of 18 cases: 12 with equal totals in both arms (zero differences) dropped"
    assert said in summary["arms"]["sentence"]
    assert said in next(ln for ln in result.output.splitlines() if ln.startswith("arms:"))
    assert said in _sheet_text(root, "Summary")


def test_tied_tasks_are_named(tmp_path):
    """Every judge scores 3 throughout: every delta is 0, each hypothesis's check names
    the 3 tied tasks."""
    root = study_from("judge-likert", tmp_path / "s")

    def answer(cell):
        if cell["dimension"] == "overall_verdict":
            return "FAIL_WEAK"
        return 3 if cell["part"] == "value" and cell["dimension"] != "rationale" else LEAVE
    plant(root, answer)
    collect(root)
    result, summary, _ = run_analyze(root)
    said = "3 of 3 tasks tie (delta 0 within direction_tolerance): task-1, task-2, task-3"
    checks = [c for c in summary["decision"]["checks"] if "is directional" in c["name"]]
    assert len(checks) == 3 and all(said in c["note"] for c in checks)
    assert sum(said in ln for ln in result.output.splitlines() if ln.startswith("check")) == 3
    assert _sheet_text(root, "Summary").count(said) >= 3  # each check, in lines and table


@pytest.fixture
def keep_known_no_variation(tmp_path):
    """Every keep and known mark "No": no item yields, so the trend is undefined."""
    root = study_from("keep-known", tmp_path / "s")
    plant(root, lambda cell: "No" if cell["dimension"] in ("keep", "known") else LEAVE)
    collect(root)
    return root, run_analyze(root)[1]


def test_undefined_trend_says_why(keep_known_no_variation):
    root, summary = keep_known_no_variation
    reason = "all items in one outcome; no variation"
    assert summary["trend"]["p"] is None and summary["trend"]["reason"] == reason
    line = next(ln for ln in summary["summary_lines"] if ln.startswith("trend across"))
    assert f"trend undefined: {reason}" in line and "not below" not in line
    assert f"trend undefined: {reason}" in _sheet_text(root, "Summary")


@pytest.mark.parametrize(("used", "said"), [
    (999, "1 of 1000 resamples had no variation (alpha undefined) and was left out of "
          "the interval"),
    (998, "2 of 1000 resamples had no variation (alpha undefined) and were left out of "
          "the interval"),
    (1000, "")])
def test_the_resamples_left_out_are_counted_in_words_that_agree(used, said):
    from sheetflow.analysis.agreement import _resamples_left_out

    assert _resamples_left_out({"alpha": 0.4, "n_boot": 1000, "n_boot_used": used}) == said


def test_the_resamples_column_is_left_off_a_sheet_where_it_repeats_n_boot():
    """On every row with an interval the same as the resamples drawn, the column only
    widened the Alpha sheet past a printed page; where one differs, it is kept."""
    import pandas as pd

    from sheetflow.report.workbook import without_repeats

    table = pd.DataFrame({"alpha": [0.5, float("nan")], "ci_low": [0.1, float("nan")],
                          "n_boot": [1000, 1000], "n_boot_used": [1000, 0]})
    assert "n_boot_used" not in without_repeats(table).columns
    table.loc[0, "n_boot_used"] = 650
    assert without_repeats(table)["n_boot_used"].tolist() == [650, 0]
