"""Rows of the analysis workbook are as tall as their wrapped prose, not a third taller.

Row heights counted every character of a note as wide as a digit, so printed the
Summary's "Checks behind the decision" rows stood far taller than their notes (a note
of 5 printed lines in a row of 7) and the 7-row Alpha sheet ran onto a second page.
Regular-weight text is now measured letter by letter (a space or an "i" half a digit),
still with a digit's width to spare on every line, so no text is cut.
"""

from __future__ import annotations

import math

import openpyxl
import pytest
from test_report import analysis  # noqa: F401  (the module's fixture)

from sheetflow.report import write_analysis_workbook
from sheetflow.workbook.printing import LINE_POINTS, prose_width, text_lines

# a check's note as the Summary prints it: 5 lines in LibreOffice's 40-wide column H
NOTE = ("Acceptable reliability (study threshold); at the interval level 0.768; 36 units, "
        "5 raters; with the internal team's totals as one rater beside the 4 validators "
        "(protocol 000 sections 4.1-4.2); validators only: 0.830")


def test_a_note_is_measured_by_its_letters():
    assert text_lines(NOTE, 40, proportional=True) == 5
    assert text_lines(NOTE, 40) == 7  # every letter a digit: two blank lines


def _wrapped_cells(ws):
    """Each wrapped regular-weight text cell and the characters its text wraps in (a
    merged cell's columns together)."""
    widths = {}  # column number -> set width, a run of equal columns written as one
    for dim in ws.column_dimensions.values():
        for col in range(dim.min, dim.max + 1):
            widths[col] = int(dim.width)  # as set: the file adds a fraction
    spans = {(m.min_row, m.min_col): range(m.min_col, m.max_col + 1)
             for m in ws.merged_cells.ranges}
    for row in ws.iter_rows():
        for cell in row:
            if isinstance(cell.value, str) and cell.alignment.wrap_text and not cell.font.b:
                cols = spans.get((cell.row, cell.column), [cell.column])
                yield cell, sum(widths.get(c, 8) for c in cols)


@pytest.mark.parametrize("sheet", ["Summary", "Alpha"])
def test_rows_hold_their_text_with_at_most_a_line_to_spare(analysis, tmp_path, sheet):  # noqa: F811
    ws = openpyxl.load_workbook(write_analysis_workbook(
        analysis, tmp_path / "analysis.xlsx"))[sheet]
    tallest: dict[int, tuple[int, int]] = {}  # row -> (fewest, most) lines its text needs
    for cell, width in _wrapped_cells(ws):
        fewest = math.ceil(prose_width(cell.value) / width)
        most = text_lines(cell.value, width, proportional=True)
        low, high = tallest.get(cell.row, (1, 1))
        tallest[cell.row] = (max(low, fewest), max(high, most))
    assert len(tallest) >= 3
    for row, (fewest, most) in tallest.items():
        lines = (ws.row_dimensions[row].height or LINE_POINTS) / LINE_POINTS
        assert lines >= fewest - 0.1, (sheet, row, lines, fewest)  # never cut
        # as many lines as the letters need, with no blank band under them
        assert lines == pytest.approx(most, abs=0.1), (sheet, row, lines, most)
