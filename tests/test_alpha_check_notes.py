"""What the tables note of a column whose N/A answers were left out (three of rater2's
faithfulness answers) is said wherever that column's figures are read (DESIGN.md
section 6: an undefined or reduced statistic is named where the reader looks; nothing
is dropped in silence):

* each ``check alpha on ...`` line of the answer-review protocol says what the Alpha
  table's note says of that column, not the bare figure;
* the Percent agreement sheet says it beside its smaller unit count, as the kappa and
  AC sheets do."""

from __future__ import annotations

import openpyxl
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect


def _analyzed_with_three_na(tmp_path):
    """An answer-review study where rater2 answers N/A on faithfulness for the first
    three items it meets, collected and analysed: (root, CLI result, summary, rows)."""
    root = study_from("answer-review", tmp_path / "ar")
    planted = []

    def answer(cell):
        if cell["rater"] == "rater2" and cell["dimension"] == "faithfulness" \
                and cell["part"] == "value" and len(planted) < 3:
            planted.append(cell["item_id"])
            return "N/A"
        return KEEP

    plant(root, answer)
    collect(root)
    out, summary, rows = run_analyze(root)
    assert out.exit_code == 0, out.output
    return root, out, summary, rows


def _rows(root, name):
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")[name]
    head = [c.value for c in sheet[1]]
    return [dict(zip(head, r, strict=True)) for r in sheet.iter_rows(min_row=2, values_only=True)]


def test_the_check_line_carries_the_alpha_tables_note(tmp_path):
    _, out, summary, rows = _analyzed_with_three_na(tmp_path)
    (row,) = [r for r in summary["alpha"] if r["measure"] == "faithfulness"]
    assert "N/A" in row["note"]
    (check,) = [c for c in summary["decision"]["checks"] if "(faithfulness)" in c["name"]]
    for part in row["note"].split("; "):
        assert part in check["note"], part
    line = next(ln for ln in out.output.splitlines()
                if ln.startswith("check") and "(faithfulness)" in ln)
    assert row["note"].split("; ")[-1] in line
    assert any("(faithfulness)" in r and row["note"].split("; ")[-1] in r for r in rows)


def test_percent_agreement_names_the_na_answers_left_out(tmp_path):
    root = _analyzed_with_three_na(tmp_path)[0]
    (kappa,) = [r for r in _rows(root, "Cohen kappa") if "faithfulness" in r["measure"]]
    (share,) = [r for r in _rows(root, "Percent agreement") if "faithfulness" in r["measure"]]
    assert share["units"] == kappa["units"] < 18
    said = next(p for p in kappa["note"].split("; ") if "N/A" in p)
    assert said in (share.get("note") or "")
