"""Judges whose ratings fit the ICC model exactly: no form has an interval, and each
form says why in the same words.

Every judge gives each response the same six scores (varying between responses), so
the error mean square is 0 and F is infinite. The single-rater limits are 0/0; the
average forms' 1 - 1/F used to give [1, 1], a zero-width certainty that twelve
responses cannot give, beside forms saying there is no interval.
"""

from __future__ import annotations

import openpyxl
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect
from sheetflow.spec.study import load_study

DIMENSIONS = ("completeness", "accuracy", "synthesis", "judgment", "actionability",
              "structure")
NO_INTERVAL = "no interval: the ratings fit the model exactly (error mean square 0, F infinite)"


def _verdict(score: int) -> str:
    return ("PASS_STRONG" if score >= 4 else "PASS_ADEQUATE" if score >= 3.5 else
            "FAIL_WEAK" if score >= 2.5 else "FAIL_CRITICAL")


def test_no_icc_form_has_an_interval_on_an_exact_fit(tmp_path):
    root = study_from("judge-likert", tmp_path / "study")
    order = {item.id: i for i, item in enumerate(load_study(root).items)}

    def answer(cell):
        if cell["scope"] != "response":
            return KEEP
        score = 1 + order[cell["item_id"]] % 5  # the same for every judge
        if cell["dimension"] in DIMENSIONS:
            return score
        return _verdict(score) if cell["dimension"] == "overall_verdict" else KEEP

    plant(root, answer)
    collect(root)
    out, _, _ = run_analyze(root)
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["ICC"]
    rows = list(sheet.iter_rows(values_only=True))
    head = list(rows[0])
    forms = {r[head.index("type")]: r for r in rows[1:] if r[0]}
    assert set(forms) == {"ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"}, out.output
    limits = [j for j, h in enumerate(head) if h and "CI" in str(h)]
    for form, row in forms.items():
        assert row[head.index("ICC")] == 1, form
        assert row[head.index("reason")] == NO_INTERVAL, form
        assert all(row[j] is None for j in limits), (form, [row[j] for j in limits])
