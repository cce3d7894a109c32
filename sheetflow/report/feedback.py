"""One small workbook per rater: their own scores against the de-identified group.

Protocol 000 promises each validator "your scores compared to group median
(de-identified)". The tables come from the analysis (``Analysis.feedback``, built by
:mod:`sheetflow.analysis.rater_feedback`, which also holds the rule of where group
figures are shown and what a validator can tell from them); this module only lays
them out, one file per rater that the coordinator can send as it is, the rule stated
above the first table.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from xlsxwriter.worksheet import Worksheet

from ..analysis.rater_feedback import YOUR_RULE
from ..errors import close_workbook
from ..workbook.app_props import SheetflowWorkbook
from ..workbook.printing import row_points, set_print
from .cells import (
    OPTIONS,
    Column,
    column_widths,
    created,
    formats,
    plain_columns,
    table_worksheet,
    write_columns,
)

if TYPE_CHECKING:  # a worker process writing feedback needs no analysis
    from ..analysis import Analysis

INTRO = ("Your points beside the group median, and your direction beside how many of "
         "the group chose the same response. Points are what your workbook computed "
         "from your answers (a count becomes the points of its band). Responses are "
         f"shown by the label you saw. {YOUR_RULE}")

# the analysis's column names in words a validator reads without a glossary
HEADERS = {
    "measure": "Measure", "you_mean": "Your mean points (all your responses)",
    "group_median_mean": "Group median points (mean over responses with group "
                         "figures)",
    "mean_difference": "Mean difference in points (you - group median)",
    "within_1_point": "Share within 1 point of the group median",
    "n_responses": "Responses you scored",
    "n_compared": "Responses with group figures", "case": "Case",
    "response": "Response (label you saw)", "you": "Your points",
    "group_median": "Group median points (you included)",
    "difference": "Difference in points (you - group median)",
    "n_group": "Validators who scored it (you included)",
    "your_direction": "Your direction",
    "group_same": "Validators with your direction (you included)",
}
SHARES = ("within_1_point",)  # shown as percentages, one decimal as everywhere
MEANS = ("you_mean", "group_median_mean", "mean_difference")
"""Means over responses, three decimals each (a mean of 2.5 beside 2.111 read as less
exact); points, medians and their differences are shown as they are: the rubric's
points, a median of an even group at most one decimal (.5)."""


def feedback_name(rater: str) -> str:
    """``feedback-<rater>.xlsx`` with any character unsafe in a file name replaced."""
    return f"feedback-{re.sub(r'[^A-Za-z0-9._-]', '_', rater) or 'rater'}.xlsx"


def write_feedback_workbook(analysis: Analysis, rater: str, path: str | Path) -> Path:
    """Write ``rater``'s feedback workbook (one sheet per table) to ``path``."""
    return write_feedback_tables(analysis.study.title, rater, analysis.feedback[rater],
                                 created(analysis), path)


def write_feedback_tables(title: str, rater: str, tables: dict[str, pd.DataFrame],
                          when: dt.datetime, path: str | Path) -> Path:
    """Write one rater's feedback ``tables`` (sheet name -> table) to ``path``.

    Takes plain values rather than the analysis so that a worker process can write
    it (see :func:`~.outputs.write_analysis_outputs`).
    """
    path = Path(path)
    wb = SheetflowWorkbook(str(path), {**OPTIONS, "in_memory": True})  # small: no temp files
    wb.set_properties({"title": f"{title}: feedback for {rater}", "author": "sheetflow",
                       "created": when})
    fmt = formats(wb)
    fmt["num"] = wb.add_format()  # rounded to 3 places: 4, not 4.000
    by_header = {HEADERS[c]: wb.add_format({"num_format": "0.0%"}) for c in SHARES}
    by_header |= {HEADERS[c]: wb.add_format({"num_format": "0.000"}) for c in MEANS}
    fmt["intro"] = wb.add_format({"font_color": "#666666", "italic": True, "text_wrap": True,
                                  "valign": "top"})
    for n, (name, table) in enumerate(tables.items()):
        shown = _shown(table)
        ws = table_worksheet(wb, name[:31])
        widths = column_widths(shown, words=False)
        for j, width in enumerate(widths):
            ws.set_column(j, j, width)
        top = _intro(ws, f"{title}: feedback for {rater}", widths, fmt) if n == 0 else 0
        ws.set_row(top, _row_height(tuple(zip(map(str, (c.label for c in shown)), widths,
                                              strict=True))))
        write_columns(ws, top, shown, fmt, number_formats=by_header, words=False, widths=widths)
        ws.freeze_panes(top + 1, 0)
        set_print(ws, widths, header_rows=top + 1)
    close_workbook(wb, path)
    return path


@functools.lru_cache(maxsize=64)
def _row_height(cells: tuple[tuple[str, float], ...]) -> float:
    """:func:`~sheetflow.workbook.printing.row_points` of a header row or the intro,
    worked out once: every rater's workbook has the same."""
    return row_points(cells)


def _shown(table: pd.DataFrame) -> list[Column]:
    """``table`` as the validator reads it: its columns read once (:func:`plain_columns`),
    under :data:`HEADERS`, numbers rounded to 3 places as ``DataFrame.round(3)``
    rounds them."""
    columns = plain_columns(table)
    if any(not isinstance(c.dtype, np.dtype) and c.value_kind in "iuf" for c in columns):
        columns = plain_columns(table.round(3))  # nullable numbers: pandas rounds them
    else:
        columns = [_rounded(c) if c.numbers is not None else c for c in columns]
    return [c._replace(label=HEADERS.get(c.label, c.label)) for c in columns]


def _rounded(column: Column) -> Column:
    """A float column rounded to 3 places (as numpy's ``round``, which pandas uses)."""
    numbers = np.round(column.numbers, 3)
    return column._replace(listed=numbers.tolist(), numbers=numbers)


def _intro(ws: Worksheet, heading: str, widths: list[float], fmt: dict[str, Any]) -> int:
    """The heading and :data:`INTRO` above the first table, the intro wrapped across the
    table's columns (a line running past them would widen the printed page); the row
    of the table's header."""
    ws.write_string(0, 0, heading, fmt["title"])
    last = max(len(widths) - 1, 0)
    if last:
        ws.merge_range(1, 0, 1, last, "", fmt["intro"])
    ws.write_string(1, 0, INTRO, fmt["intro"])
    ws.set_row(1, _row_height(((INTRO, sum(widths)),)))
    return 3

