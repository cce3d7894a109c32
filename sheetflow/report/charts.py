"""Native Excel charts; every series and error bar points at the cells that hold it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.utility import quote_sheetname, xl_range_abs
from xlsxwriter.worksheet import Worksheet

from ..analysis import Analysis
from .cells import write_table

MAX_SERIES = 20


def chart_data_sheet(wb: xlsxwriter.Workbook, analysis: Analysis,
                      fmt: dict[str, Any]) -> dict[str, tuple[str, int, int]]:
    """Write chart data on one sheet; return name -> (sheet, first row, n rows)."""
    if not analysis.figures:
        return {}
    ws = wb.add_worksheet("Chart data")
    where: dict[str, tuple[str, int, int]] = {}
    row = 0
    for name, table in analysis.figures.items():
        ws.write_string(row, 0, name, fmt["bold"])
        write_table(ws, row + 1, table, fmt)
        where[name] = ("Chart data", row + 1, len(table))
        row += len(table) + 4
    _distribution_chart(wb, ws, analysis, where)
    _scatter_chart(wb, ws, analysis, where)
    return where

def alpha_chart(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                 loc: tuple[str, int, int], row: int) -> None:
    sheet, top, n = loc
    table = analysis.figures["alpha"]
    first, last = top + 1, top + n
    chart = wb.add_chart({"type": "column"})
    chart.add_series({
        "name": "alpha", "categories": [sheet, first, 0, last, 0],
        "values": [sheet, first, 1, last, 1],
        "y_error_bars": _error_bars(sheet, table, first, last),
    })
    lines = wb.add_chart({"type": "line"})
    for j, col in enumerate(table.columns):
        if str(col).startswith("threshold"):
            lines.add_series({"name": str(col), "categories": [sheet, first, 0, last, 0],
                              "values": [sheet, first, j, last, j],
                              "line": {"dash_type": "dash", "width": 1.25},
                              "marker": {"type": "none"}})
    chart.combine(lines)
    chart.set_title({"name": "Krippendorff's alpha per measure (95% CI)"})
    chart.set_y_axis({"min": -0.2, "max": 1.0, "major_gridlines": {"visible": False}})
    chart.set_size({"width": 760, "height": 340})
    ws.insert_chart(row, 0, chart)

def yield_chart(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                loc: tuple[str, int, int], row: int) -> None:
    """Yield per arm with its Wilson 95% interval, error bars from the interval's cells."""
    sheet, top, n = loc
    table = analysis.figures["yield"]
    first, last = top + 1, top + n
    col = list(table.columns).index("yield")
    chart = wb.add_chart({"type": "column"})
    chart.add_series({
        "name": "yield", "categories": [sheet, first, 0, last, 0],
        "values": [sheet, first, col, last, col],
        "y_error_bars": _error_bars(sheet, table, first, last),
    })
    chart.set_title({"name": "Yield per arm (Wilson 95% CI)"})
    chart.set_y_axis({"min": 0, "max": 1, "major_gridlines": {"visible": False}})
    chart.set_legend({"none": True})
    chart.set_size({"width": 760, "height": 340})
    ws.insert_chart(row, 0, chart)


def confidence_chart(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                     where: dict[str, tuple[str, int, int]]) -> None:
    """Alpha on all ratings and on Medium/High only, per dimension, with their intervals
    (drawn from the Chart data cells), on the sheet ``ws`` below its table."""
    if "confidence" not in where:
        return
    sheet, top, n = where["confidence"]
    table = analysis.figures["confidence"]
    first, last = top + 1, top + n
    chart = wb.add_chart({"type": "column"})
    for subset in ("all ratings", "Medium/High"):
        col = table.columns.get_loc(f"alpha {subset}")
        chart.add_series({
            "name": subset, "categories": [sheet, first, 0, last, 0],
            "values": [sheet, first, col, last, col],
            "y_error_bars": {
                "type": "custom",
                "plus_values": _column_ref(sheet, table, f"plus {subset}", first, last),
                "plus_data": _finite_list(table[f"plus {subset}"]),
                "minus_values": _column_ref(sheet, table, f"minus {subset}", first, last),
                "minus_data": _finite_list(table[f"minus {subset}"])}})
    chart.set_title({"name": "Alpha by rater confidence (95% CI)"})
    chart.set_y_axis({"min": -0.2, "max": 1.0, "major_gridlines": {"visible": False}})
    chart.set_size({"width": 760, "height": 340})
    ws.insert_chart(len(analysis.tables["confidence_agreement"]) + 3, 0, chart)


def _error_bars(sheet: str, table: pd.DataFrame, first: int, last: int) -> dict[str, Any]:
    """Custom error bars from the ``err_plus`` / ``err_minus`` cells (a list would be
    written as literal numbers; a formula points at the cells)."""
    return {"type": "custom",
            "plus_values": _column_ref(sheet, table, "err_plus", first, last),
            "plus_data": _finite_list(table["err_plus"]),
            "minus_values": _column_ref(sheet, table, "err_minus", first, last),
            "minus_data": _finite_list(table["err_minus"])}


def _column_ref(sheet: str, table: pd.DataFrame, column: str, first: int, last: int) -> str:
    """``='Sheet'!$E$3:$E$7``: the cells of ``column`` in rows first..last (0-based)."""
    col = table.columns.get_loc(column)
    return f"={quote_sheetname(sheet)}!{xl_range_abs(first, col, last, col)}"

def _finite_list(values: pd.Series) -> list[float]:
    return [float(v) if np.isfinite(v) else 0.0 for v in values]

def _distribution_chart(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                        where: dict[str, tuple[str, int, int]]) -> None:
    if "distribution" not in where:
        return
    sheet, top, n = where["distribution"]
    table = analysis.figures["distribution"]
    chart = wb.add_chart({"type": "column"})
    # a series per rater reads for a small panel; Excel allows 255, eyes far fewer
    for j in range(1, min(len(table.columns), MAX_SERIES + 1)):
        chart.add_series({"name": [sheet, top, j], "categories": [sheet, top + 1, 0, top + n, 0],
                          "values": [sheet, top + 1, j, top + n, j]})
    shown = "per rater" if len(table.columns) <= MAX_SERIES + 1 else \
        f"for the first {MAX_SERIES} of {len(table.columns) - 1} raters (all on Chart data)"
    chart.set_title({"name": f"Distribution of {table.columns[0]} {shown}"})
    chart.set_x_axis({"name": str(table.columns[0])})
    chart.set_y_axis({"name": "ratings"})
    chart.set_size({"width": 720, "height": 320})
    ws.insert_chart(0, 12, chart)

def _scatter_chart(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                   where: dict[str, tuple[str, int, int]]) -> None:
    if "scatter" not in where or where["scatter"][2] == 0:
        return
    sheet, top, n = where["scatter"]
    table = analysis.figures["scatter"]
    ext, inn = table.columns.get_loc("external"), table.columns.get_loc("internal")
    chart = wb.add_chart({"type": "scatter"})
    chart.add_series({"name": "case x arm", "categories": [sheet, top + 1, inn, top + n, inn],
                      "values": [sheet, top + 1, ext, top + n, ext],
                      "marker": {"type": "circle", "size": 6}})
    chart.set_title({"name": "Mean external total vs internal total"})
    chart.set_x_axis({"name": "internal total"})
    chart.set_y_axis({"name": "mean external total"})
    chart.set_legend({"none": True})
    chart.set_size({"width": 720, "height": 320})
    ws.insert_chart(18, 12, chart)

def direction_chart(wb: xlsxwriter.Workbook, ws: Worksheet,
                     loc: tuple[str, int, int]) -> None:
    sheet, top, n = loc
    if n == 0:
        return
    chart = wb.add_chart({"type": "bar"})
    chart.add_series({"name": "agreement with the majority of the others",
                      "categories": [sheet, top + 1, 0, top + n, 0],
                      "values": [sheet, top + 1, 1, top + n, 1]})
    chart.set_title({"name": "Direction agreement per rater"})
    chart.set_x_axis({"min": 0, "max": 1})
    chart.set_legend({"position": "bottom"})
    ws.insert_chart(1, 14, chart)
