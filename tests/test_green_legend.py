"""The legend names green only where a pack has green (computed) cells: a rater told
"Green: computed for you (a total ...)" looks for a total the pack does not have."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

TEMPLATES = ("paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert")
COMPUTED_FILL = "E2EFDA"  # the fill of a computed cell (a total, a count's points)


def _first_pack(root: Path) -> openpyxl.Workbook:
    return openpyxl.load_workbook(sorted((root / L.PACKS_DIR).glob("*.xlsx"))[0])


def _texts(ws) -> list[str]:
    return [str(c.value) for row in ws.iter_rows() for c in row if isinstance(c.value, str)]


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_legend_names_green_only_where_a_cell_is_computed(tmp_path, template):
    root = init_study(tmp_path / template, template)
    generate_packs(root)
    wb = _first_pack(root)
    scoring = wb[L.SCORING_SHEET]
    computed = any(c.fill.fgColor.rgb and str(c.fill.fgColor.rgb).endswith(COMPUTED_FILL)
                   and c.data_type == "f" for row in scoring.iter_rows() for c in row)
    legend = next(t for t in _texts(scoring) if t.startswith("Yellow: your answers."))
    assert ("Green: computed for you" in legend) == computed, (template, legend)
    guides = [t for name in (L.INSTRUCTIONS_SHEET, L.MORE_SHEET) if name in wb.sheetnames
              for t in _texts(wb[name])]
    assert any("green cells are computed for you" in t for t in guides) == computed, template
    assert any("Only the yellow cells can be changed" in t for t in guides), template
