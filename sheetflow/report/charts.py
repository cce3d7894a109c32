"""Native Excel charts; every series and error bar points at the cells that hold it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.utility import quote_sheetname, xl_range_abs

from ..analysis import Analysis
from ..workbook.printing import row_points, set_print
from .cells import (
    column_widths,
    header_words,
    labelled,
    proportion_formats,
    table_worksheet,
    write_table,
)
from .paging import keep_blocks_whole

MAX_SERIES = 20


def chart_data_sheet(wb: xlsxwriter.Workbook, analysis: Analysis,
                      fmt: dict[str, Any]) -> dict[str, tuple[str, int, int]]:
    """Write chart data on one sheet; return name -> (sheet, first row, n rows)."""
    if not analysis.figures:
        return {}
    ws = table_worksheet(wb, "Chart data")
    where: dict[str, tuple[str, int, int]] = {}
    widths: dict[int, float] = {}
    row = 0
    starts: list[int] = []  # each table's heading: a break never parts a table from it
    end = 0  # the row after the last table
    names = analysis.study.rubric.names()
    for name, table in analysis.figures.items():
        table = _named(table, names)
        starts.append(row)
        ws.write_string(row, 0, name, fmt["bold"])
        own = column_widths(table)
        # the header wraps: its row made tall enough (its words overprinted the first
        # row of figures); the sheet's columns end at least this wide
        ws.set_row(row + 1, row_points([(header_words(c), w)
                                        for c, w in zip(table.columns, own, strict=True)]))
        write_table(ws, row + 1, table, fmt, widths=own,
                    number_formats=proportion_formats(table, fmt))
        for j, width in enumerate(own):
            widths[j] = max(widths.get(j, 0.0), width)
        where[name] = ("Chart data", row + 1, len(table))
        end = row + len(table) + 2
        row += len(table) + 4
    for j, width in widths.items():
        ws.set_column(j, j, width)
    set_print(ws, [float(w) for w in widths.values()])
    keep_blocks_whole(ws, starts, end, [float(w) for w in widths.values()],
                      landscape=ws.orientation == 0, one_page_wide=False)
    _distribution_chart(wb, analysis, where)
    _scatter_chart(wb, analysis, where)
    return where

def _named(figure: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """A figure's table with each dimension and total by its name in the rubric (the
    categories the charts show), the distribution's first column among them."""
    figure = labelled(figure, names)
    first = str(figure.columns[0]) if len(figure.columns) else ""
    return figure.rename(columns={first: names[first]}) if first in names else figure


def alpha_chart(wb: xlsxwriter.Workbook, analysis: Analysis,
                 loc: tuple[str, int, int]) -> str:
    """Alpha per measure with its interval and the plan's thresholds, on a chart sheet
    of its own; returns the sheet's name."""
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
    low, high = value_range(table, "alpha", "err_minus", "err_plus",
                            [c for c in table.columns if str(c).startswith("threshold")])
    chart.set_y_axis({"min": low, "max": high, "num_format": "0.0", "name": "alpha",
                      "major_gridlines": {"visible": False}})
    chart.set_x_axis({"name": "measure"})
    return chart_sheet(wb, "Alpha chart", chart)

def yield_chart(wb: xlsxwriter.Workbook, analysis: Analysis,
                loc: tuple[str, int, int]) -> str:
    """Yield per arm with its Wilson 95% interval, error bars from the interval's cells,
    on a chart sheet of its own; returns the sheet's name."""
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
    chart.set_y_axis({"min": 0, "max": 1, "num_format": "0%", "name": "yield",
                      "major_gridlines": {"visible": False}})
    chart.set_x_axis({"name": "arm"})
    chart.set_legend({"none": True})
    return chart_sheet(wb, "Yield chart", chart)


def confidence_chart(wb: xlsxwriter.Workbook, analysis: Analysis,
                     where: dict[str, tuple[str, int, int]]) -> None:
    """Alpha on all ratings and on Medium/High only, per dimension, with their intervals
    (drawn from the Chart data cells), on a chart sheet of its own."""
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
    low, high = 0.0, 1.0
    for subset in ("all ratings", "Medium/High"):
        a, b = value_range(table, f"alpha {subset}", f"minus {subset}", f"plus {subset}")
        low, high = min(low, a), max(high, b)
    chart.set_y_axis({"min": low, "max": high, "num_format": "0.0", "name": "alpha",
                      "major_gridlines": {"visible": False}})
    chart.set_x_axis({"name": "dimension"})
    chart_sheet(wb, "Confidence chart", chart)


def value_range(table: pd.DataFrame, value: str, minus: str, plus: str,
                also: list[Any] | None = None) -> tuple[float, float]:
    """Axis bounds holding every value, interval end and extra line (``also``) of
    ``table``, and 0 and 1: rounded out to tenths."""
    values = pd.to_numeric(table[value], errors="coerce")
    ends = [values - pd.to_numeric(table[minus], errors="coerce"),
            values + pd.to_numeric(table[plus], errors="coerce"), values,
            *(pd.to_numeric(table[c], errors="coerce") for c in also or [])]
    finite = [float(v) for series in ends for v in series if np.isfinite(v)]
    low, high = min([0.0, *finite]), max([1.0, *finite])
    return math.floor(round(low * 10, 6)) / 10, math.ceil(round(high * 10, 6)) / 10


def chart_sheet(wb: xlsxwriter.Workbook, name: str, chart: Any) -> str:
    """``chart`` on a chart sheet of its own (printed whole on one landscape page)."""
    sheet = wb.add_chartsheet(name)
    sheet.set_chart(chart)
    sheet.set_landscape()
    return name


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

def _distribution_chart(wb: xlsxwriter.Workbook, analysis: Analysis,
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
    scored = analysis.study.rubric.named(str(table.columns[0]))
    chart.set_title({"name": f"Distribution of {scored} {shown}"})
    whole = bool((pd.to_numeric(table.iloc[:, 0], errors="coerce").dropna() % 1 == 0).all())
    chart.set_x_axis({"name": scored, "num_format": "0" if whole else "0.00"})
    chart.set_y_axis({"name": "ratings", "num_format": "0"})
    chart_sheet(wb, "Distribution chart", chart)

def _scatter_chart(wb: xlsxwriter.Workbook, analysis: Analysis,
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
    total = analysis.study.rubric.named(analysis.study.rubric.totals[0].id)
    chart.set_title({"name": f"Mean external {total} vs internal total"})
    chart.set_x_axis({"name": "internal total", "num_format": "0.0"})
    chart.set_y_axis({"name": f"mean external {total}", "num_format": "0.0"})
    chart.set_legend({"none": True})
    chart_sheet(wb, "Scatter chart", chart)

def direction_chart(wb: xlsxwriter.Workbook, loc: tuple[str, int, int]) -> None:
    sheet, top, n = loc
    if n == 0:
        return
    chart = wb.add_chart({"type": "bar"})
    chart.add_series({"name": "agreement with the majority of the others",
                      "categories": [sheet, top + 1, 0, top + n, 0],
                      "values": [sheet, top + 1, 1, top + n, 1]})
    chart.set_title({"name": "Direction agreement per rater"})
    chart.set_x_axis({"min": 0, "max": 1, "num_format": "0%", "name": "agreement"})
    chart.set_y_axis({"name": "rater"})
    chart.set_legend({"position": "bottom"})
    chart_sheet(wb, "Direction chart", chart)
