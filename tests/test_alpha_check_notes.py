"""Each ``check alpha on ...`` line of the answer-review protocol says what the Alpha
table's note says of that column (here: the N/A answers left out, which shrink the
units the alpha rests on), not the bare figure (DESIGN.md section 6: an undefined or
reduced statistic is named where the reader looks)."""

from __future__ import annotations

from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect


def test_the_check_line_carries_the_alpha_tables_note(tmp_path):
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
    (row,) = [r for r in summary["alpha"] if r["measure"] == "faithfulness"]
    assert "N/A" in row["note"]
    (check,) = [c for c in summary["decision"]["checks"] if "(faithfulness)" in c["name"]]
    for part in row["note"].split("; "):
        assert part in check["note"], part
    line = next(ln for ln in out.output.splitlines()
                if ln.startswith("check") and "(faithfulness)" in ln)
    assert row["note"].split("; ")[-1] in line
    assert any("(faithfulness)" in r and row["note"].split("; ")[-1] in r for r in rows)
