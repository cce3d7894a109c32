"""Why a figure is undefined, said where it is shown, end to end on planted returns.

- One rater: the Cohen kappa sheet says kappa needs two, per column, and so does the
  kappa line of each column.
- A total given one value throughout: "no variation", never "fewer than two values in
  the value domain" (its domain is its whole range).
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect


def _answer_review(tmp_path: Path, answer, *, edit=None, leave_out=()) -> Path:
    root = study_from("answer-review", tmp_path / "study", edit)
    plant(root, answer, leave_out=leave_out)
    collect(root)
    return root


def _sheet(root: Path, name: str) -> list[tuple]:
    wb = openpyxl.load_workbook(root / "out" / "analysis.xlsx")
    return [r for r in wb[name].iter_rows(values_only=True) if any(v is not None for v in r)]


def _row_of(rows: list[tuple], first: str) -> tuple:
    return next(r for r in rows if r[0] == first)


def test_a_total_given_one_value_throughout_has_no_variation(tmp_path):
    """Every judge scores every dimension 5: the 1-5 mean is 5 throughout."""
    likert = ("completeness", "accuracy", "synthesis", "judgment", "actionability",
              "structure")

    def answer(cell):
        if cell["scope"] != "response":
            return KEEP
        if cell["dimension"] in likert:
            return 5
        return "PASS_STRONG" if cell["dimension"] == "overall_verdict" else KEEP
    root = study_from("judge-likert", tmp_path / "study")
    plant(root, answer)
    collect(root)
    out, summary, _ = run_analyze(root)
    total = next(a for a in summary["alpha"] if a["kind"] == "total")
    assert total["reason"] == "no variation among pairable values; alpha is undefined"
    assert "fewer than two values in the value domain" not in out.output


def test_one_rater_the_kappa_sheet_says_kappa_needs_two(tmp_path):
    root = _answer_review(tmp_path, lambda c: KEEP, leave_out=("rater2",))
    out, summary, _ = run_analyze(root, "--allow-partial")
    assert out.exit_code == 1, out.output  # the panel is incomplete
    sheet = _sheet(root, "Cohen kappa")
    assert not any("Nothing to show" in str(r[0]) for r in sheet)
    why = "only one rater (rater1) has ratings of this column; kappa needs two"
    for measure in ("overall_rating", "factual_correctness", "faithfulness",
                    "citation_quality", "refusal_appropriateness"):
        named = next(a for a in summary["alpha"] if a["measure"] == measure)["measure"]
        record = next(f for f in summary["reported"] if f["measure"] == named)
        assert record["reason"] == why and record["raters"] == 1
    assert sum(why in r for r in sheet) == 5
    assert f"(0 units, 1 rater) undefined: {why}" in out.output
