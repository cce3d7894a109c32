"""Why a figure is undefined, said where it is shown, end to end on planted returns.

- A total given one value throughout: "no variation", never "fewer than two values in
  the value domain" (its domain is its whole range).
"""

from __future__ import annotations

from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect


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
