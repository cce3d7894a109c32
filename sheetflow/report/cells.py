"""Cells and tables of the analysis workbook: formats, typed writes, table sheets."""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.worksheet import Worksheet

if TYPE_CHECKING:  # a worker process writing feedback needs no analysis
    from ..analysis import Analysis

BAND_COLOURS = ("#C6EFCE", "#E2F0D9", "#FFEB9C", "#FFC7CE")  # best band first

OPTIONS = {"strings_to_formulas": False, "strings_to_urls": False,
            "strings_to_numbers": False, "nan_inf_to_errors": False}

def created(analysis: Analysis) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(analysis.study.date)
    except ValueError:
        return dt.datetime(2000, 1, 1)

def formats(wb: xlsxwriter.Workbook) -> dict[str, Any]:
    return {
        "title": wb.add_format({"bold": True, "font_size": 14}),
        "head": wb.add_format({"bold": True, "bg_color": "#D9E1F2", "border": 1,
                               "text_wrap": True, "valign": "top"}),
        "bold": wb.add_format({"bold": True}),
        "wrap": wb.add_format({"text_wrap": True, "valign": "top"}),
        "num": wb.add_format({"num_format": "0.000"}),
        "bands": [wb.add_format({"bg_color": c, "num_format": "0.000"}) for c in BAND_COLOURS],
        "pass": wb.add_format({"bg_color": "#C6EFCE"}),
        "fail": wb.add_format({"bg_color": "#FFC7CE"}),
        "grey": wb.add_format({"font_color": "#666666", "italic": True}),
        "status_pass": wb.add_format({"bold": True, "font_size": 14, "bg_color": "#C6EFCE"}),
        "status_fail": wb.add_format({"bold": True, "font_size": 14, "bg_color": "#FFC7CE"}),
        "status_other": wb.add_format({"bold": True, "font_size": 14, "bg_color": "#FFEB9C"}),
    }

def write_cell(ws: Worksheet, row: int, col: int, value: Any, fmt: Any = None) -> None:
    """One cell by type; text only through write_string, missing numbers left blank."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        ws.write_blank(row, col, None, fmt)
    elif isinstance(value, (bool, np.bool_)):
        ws.write_boolean(row, col, bool(value), fmt)
    elif isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        if math.isfinite(number):
            ws.write_number(row, col, number, fmt)
        else:
            ws.write_string(row, col, str(number), fmt)
    else:
        ws.write_string(row, col, str(value), fmt)

def write_table(ws: Worksheet, top: int, table: pd.DataFrame, fmt: dict[str, Any], *,
                number_formats: dict[str, Any] | None = None) -> int:
    """Write ``table`` with a header at row ``top``; return the next free row.

    Cells are written as :func:`write_cell` would, a column at a time so that a
    numeric column needs no per-cell type dispatch (feedback workbooks for hundreds
    of raters write about a million cells). ``number_formats`` gives some columns
    (by name) another format for their numbers than ``fmt["num"]``.
    """
    for j, col in enumerate(table.columns):
        ws.write_string(top, j, str(col), fmt["head"])
        _write_column(ws, top + 1, j, table.iloc[:, j],
                      (number_formats or {}).get(col, fmt["num"]))
    return top + len(table) + 1


def _write_column(ws: Worksheet, first: int, col: int, values: pd.Series, num: Any) -> None:
    kind = values.dtype.kind if isinstance(values.dtype, np.dtype) else "O"  # not pd.NA
    if kind == "f":
        for row, v in enumerate(values.tolist(), start=first):
            if v != v:
                ws.write_blank(row, col, None, num)
            elif math.isfinite(v):
                ws.write_number(row, col, v, num)
            else:
                ws.write_string(row, col, str(v), num)
    elif kind in "iu":
        for row, v in enumerate(values.tolist(), start=first):
            ws.write_number(row, col, float(v))
    elif not values.hasnans and pd.api.types.infer_dtype(values, skipna=False) == "string":
        # text without blanks (pandas 3's str dtype says "string" even with NaN in it)
        for row, v in enumerate(values.tolist(), start=first):
            ws.write_string(row, col, v)
    else:
        for row, v in enumerate(values.tolist(), start=first):
            write_cell(ws, row, col, v, num if isinstance(v, float) else None)


def table_sheet(wb: xlsxwriter.Workbook, title: str, table: pd.DataFrame,
                fmt: dict[str, Any], *, top: int = 0) -> Worksheet:
    """A sheet holding ``table`` from row ``top``: frozen header, filters."""
    ws = wb.add_worksheet(title)
    ws.set_landscape()
    ws.fit_to_pages(1, 0)  # printed one page wide: no table split across pages
    ws.freeze_panes(top + 1, 0)
    ws.set_column(0, max(len(table.columns) - 1, 0), 16)
    write_table(ws, top, table, fmt)
    if len(table.columns):
        ws.autofilter(top, 0, top + max(len(table), 1), len(table.columns) - 1)
    return ws

def fmt_value(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
