"""Why a figure is undefined, said where it is shown, end to end on planted returns.

- answer-review, every faithfulness answer N/A with ``na_handling = "missing"``: no
  rating is left, and every place says the answers were N/A (not "no ratings"); the
  Cohen kappa sheet and the command keep a row for the column; the decision stays
  inconclusive (agreement on a column could not be measured) and says which column.
- One rater's N/A answers costing units their second rating: the reason says how many.
- A total given one value throughout: "no variation", never "fewer than two values in
  the value domain" (its domain is its whole range).
- Both raters one category throughout with an alpha target: the undefined check still
  says the raters agreed on every unit (100%).
- One rater: the Cohen kappa sheet says kappa needs two, per column.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect

FAITH = "Faithfulness to the evidence (faithfulness)"
ALL_NA = ('every answer is N/A (36 of 36), counted as missing (na_handling = "missing"), '
          "so no rating is left to measure agreement on")


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


def test_a_column_answered_na_throughout_says_so_everywhere(tmp_path):
    root = _answer_review(tmp_path, lambda c: "N/A" if c["dimension"] == "faithfulness"
                          else KEEP)
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    assert "no ratings" not in out.output
    faith = next(a for a in summary["alpha"] if a["measure"] == "faithfulness")
    assert faith["reason"].startswith(ALL_NA)
    # every sheet with a row for the column gives the same reason
    for sheet in ("Alpha", "Gwet AC", "Percent agreement", "Cohen kappa"):
        row = _row_of(_sheet(root, sheet), FAITH)
        assert any(isinstance(v, str) and v.startswith(ALL_NA) for v in row), (sheet, row)
    # the kappa line the command prints, and its record, are there for the column
    kappa = next(f for f in summary["reported"] if f["measure"] == "faithfulness")
    assert kappa["value"] is None and kappa["reason"].startswith(ALL_NA)
    assert f"kappa      {FAITH}: Cohen's kappa (quadratic weights) n/a (0 units, 0 raters) " \
           f"undefined: {ALL_NA}" in out.output
    # the decision: inconclusive, the column named as the reason
    decision = summary["decision"]
    assert decision["status"] == "inconclusive"
    assert decision["reasons"][0] == (
        f"agreement could not be measured on 1 of 5 rating columns ({FAITH}; see each line "
        "below for why), so the study's agreement is not known in full")
    check = next(c for c in decision["checks"] if c["name"] == f"alpha on {FAITH}")
    assert check["note"].startswith(ALL_NA)
    assert any(r.startswith(f"- alpha on {FAITH}: n/a: undefined - {ALL_NA}") for r in rows)


def test_na_answers_that_cost_units_their_second_rating_are_counted(tmp_path):
    """rater1 answers N/A throughout, rater2 never: no unit keeps two ratings."""
    def answer(cell):
        if cell["dimension"] != "faithfulness":
            return KEEP
        return "N/A" if cell["rater"] == "rater1" else "Faithful"
    root = _answer_review(tmp_path, answer)
    _, summary, _ = run_analyze(root)
    faith = next(a for a in summary["alpha"] if a["measure"] == "faithfulness")
    assert faith["reason"] == (
        'no unit has two or more values (nothing pairable); 18 of 36 answers N/A, counted '
        'as missing (na_handling = "missing"), leave 18 of the 18 units two or more raters '
        "answered with fewer than two ratings")
    kappa = _row_of(_sheet(root, "Cohen kappa"), FAITH)
    assert "only one rater (rater2) has ratings of this column; kappa needs two" in kappa


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


def test_one_category_throughout_with_a_target_still_says_the_agreement(tmp_path):
    """Both reviewers give each rating column's first category on every answer, and the
    plan sets alpha 0.8: every alpha is undefined, so nothing is met (inconclusive), and
    each check says the raters agreed on every unit."""
    def target(root: Path) -> None:
        spec = root / "study.toml"
        spec.write_text(spec.read_text(encoding="utf-8").replace(
            "[analysis.params]", "[analysis.targets]\nalpha = 0.8\n\n[analysis.params]", 1),
            encoding="utf-8")
    columns = ("overall_rating", "factual_correctness", "faithfulness", "citation_quality",
               "refusal_appropriateness")

    def first_choice(cell):  # every rating column one category throughout
        if cell["dimension"] in columns and cell["part"] == "value":
            return cell["validation"]["choices"][0]
        return KEEP
    root = _answer_review(tmp_path, first_choice, edit=target)
    out, summary, rows = run_analyze(root)
    assert summary["decision"]["status"] == "inconclusive"  # undefined beside a target
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"] == "alpha on Factual correctness (factual_correctness)")
    assert check["outcome"] == "undefined" and check["target"] == 0.8
    line = ("alpha on Factual correctness (factual_correctness): n/a (target at least 0.800): "
            "undefined - both raters gave one category throughout ('Correct' on all 18 "
            "units: 100% agreement)")
    assert f"- {line}" in rows and f"- {line}" in out.output


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
