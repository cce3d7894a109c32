"""The plan workbook's Methods rows are as tall as their text, not a line taller.

Their heights counted every character as wide as a digit, so a row of prose came out
a line taller than its text: printed by LibreOffice, "Expected width" (5 lines in its
58-character column) had a 6-line row, and most rows carried a blank line under their
text. Now the rows of that sheet measure prose letter by letter (a space or an "i" half
a digit, an "m" one and a half), still on the safe side, and other sheets are counted
as before.
"""

from __future__ import annotations

import openpyxl
import pytest

from sheetflow.plan import plan_study
from sheetflow.plan.workbook import _METHODS, write_plan_workbook
from sheetflow.spec import init_study
from sheetflow.workbook.printing import LINE_POINTS, text_lines

EXPECTED_WIDTH = dict(_METHODS)["Expected width"]


def test_prose_is_measured_letter_by_letter():
    # 5 lines as LibreOffice prints it in DejaVu Sans; 6 when a letter is a digit
    assert text_lines(EXPECTED_WIDTH, 58, proportional=True) == 5
    assert text_lines(EXPECTED_WIDTH, 58) == 6  # the digit count, as other sheets use
    assert text_lines("i " * 50, 58, proportional=True) == 1  # 50 digit widths
    assert text_lines("m" * 40, 58, proportional=True) == 2  # wide letters: 65 widths
    assert text_lines("W" * 40, 58, proportional=True) == 2
    assert text_lines("中" * 30, 58, proportional=True) == 2  # full width: two digits


@pytest.mark.parametrize("template", ["keep-known", "judge-likert"])
def test_methods_rows_are_no_taller_than_their_text(template, tmp_path):
    folder = init_study(tmp_path / template, template=template)
    xlsx = write_plan_workbook(plan_study(folder), tmp_path / "plan.xlsx")
    sheet = openpyxl.load_workbook(xlsx)["Methods"]
    heights = {}
    for row in sheet.iter_rows(min_row=2, max_col=2):
        topic, text = row[0].value, str(row[1].value)
        height = sheet.row_dimensions[row[0].row].height
        assert height == pytest.approx(LINE_POINTS * text_lines(text, 58, proportional=True),
                                       abs=0.5), (topic, text)
        heights[topic] = height
    assert heights["Expected width"] == pytest.approx(5 * LINE_POINTS, abs=0.5)
