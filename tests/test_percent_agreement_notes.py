"""The Percent agreement sheet says where a column's N/A answers were left out, as the
kappa and AC sheets do beside the same unit count; otherwise its smaller count of
units stands without a word (DESIGN.md section 6: nothing is dropped in silence)."""

from __future__ import annotations

import openpyxl
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect


def _rows(root, name):
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")[name]
    head = [c.value for c in sheet[1]]
    return [dict(zip(head, r, strict=True)) for r in sheet.iter_rows(min_row=2, values_only=True)]


def test_percent_agreement_names_the_na_answers_left_out(tmp_path):
    root = study_from("answer-review", tmp_path / "ar")
    planted = {}

    def answer(cell):
        # rater2 answers N/A on faithfulness for the first three items it meets
        if cell["rater"] == "rater2" and cell["dimension"] == "faithfulness" \
                and cell["part"] == "value" and len(planted) < 3:
            planted[cell["item_id"]] = "N/A"
            return "N/A"
        return KEEP

    plant(root, answer)
    collect(root)
    out, _, _ = run_analyze(root)
    assert out.exit_code == 0, out.output
    (kappa,) = [r for r in _rows(root, "Cohen kappa") if "faithfulness" in r["measure"]]
    (share,) = [r for r in _rows(root, "Percent agreement") if "faithfulness" in r["measure"]]
    assert share["units"] == kappa["units"] < 18
    said = next(p for p in kappa["note"].split("; ") if "N/A" in p)
    assert said in (share.get("note") or "")
