"""The analysis workbook: Summary first, one sheet per analysis, Data, Methods."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.worksheet import Worksheet

from ..analysis import Analysis
from ..analysis.summary import only_reasons
from ..errors import close_workbook
from ..words import NUMBER_FORMS, setting_text
from ..workbook.app_props import SheetflowWorkbook
from ..workbook.printing import print_used_range, row_points, set_print, text_lines
from .cells import (
    OPTIONS,
    PROPORTIONS,
    created,
    formats,
    labelled,
    proportion_formats,
    table_sheet,
    whole_number_formats,
)
from .charts import chart_data_sheet, confidence_chart, direction_chart
from .large import csv_path, digest, is_large, large_tables, note, write_csv
from .summary_sheet import summary_sheet

SHEET_TITLES = {
    "alpha": "Alpha",
    "cohen_kappa": "Cohen kappa",
    "fleiss_kappa": "Fleiss kappa",
    "gwet": "Gwet AC",
    "icc": "ICC",
    "percent_agreement": "Percent agreement",
    "direction_agreement": "Direction",
    "spearman_internal": "Spearman internal",
    "arm_comparison": "Arms",
    "wilcoxon_totals": "Wilcoxon",
    "yield_fisher": "Yield Fisher",
    "permutation": "Permutation",
    "trend": "Trend by band",
    "intra_rater_kappa": "Intra-rater kappa",
    "mixed_effects": "Mixed-effects model",
    "acceptance": "Acceptance",
    "second_rater_selection": "Second rater",
    "refusal_counts": "Refusals",
    "gold_disputes": "Gold disputes",
    "judge_trio": "Judge trio",
    "hypothesis_deltas": "Hypotheses",
    "self_checks": "Rater self-checks",
    "position_bias": "Position bias",
    "position_free_preference": "Position-free preference",
    "confidence_by_rater": "Confidence by rater",
    "confidence_agreement": "Agreement by confidence",
    "direction_by_confidence": "Direction by confidence",
}

def _sheet_or_digest(wb: xlsxwriter.Workbook, name: str, title: str, table: pd.DataFrame,
                     fmt: dict[str, Any], *, words: bool = True,
                     names: dict[str, str] | None = None) -> Worksheet:
    """The table on its own sheet, or for a large one a note and its digest.

    The Data sheet (``words`` False: the table as analysed) shows whole-number
    columns as whole numbers, and keeps every column and every id; the other sheets
    name each dimension and total as the rubric does (``names``: id -> "Label (id)")
    and leave out a column blank on every row (a "reason" where nothing was
    undefined, a "band" the plan does not set), which only pushed the sheet past a
    printed page's width. A large table is neither scanned nor copied (its sheet is
    a digest). A table with nothing but a reason it could not be computed, or no row
    at all, is one line saying so (:func:`note_sheet`), never a bare header. A
    :data:`SAID_ONCE` column is a line above the table (:func:`said_once`).
    """
    if words and only_reasons(table):
        return note_sheet(wb, title, nothing_to_show(table), fmt)
    if not is_large(table):
        line, shown = said_once(table) if words else ("", table)
        shown = labelled(without_blank_columns(without_repeats(shown)), names or {}) \
            if words else table
        if words:  # a table's own headers, where a column's name cannot say its rule
            shown = shown.rename(columns=table.attrs.get("headers", {}))
        shown = _settings_as_text(shown, SETTINGS_OF.get(name, ())) if words else shown
        own = proportion_formats(shown, fmt, PROPORTIONS_OF.get(name, ())) if words else \
            whole_number_formats(table, fmt)
        ws = table_sheet(wb, title, shown, fmt, top=2 if line else 0, words=words,
                         number_formats=own)
        if line:  # in the rows printed on every page, above the header
            ws.write_string(0, 0, line, fmt["bold"])
        return ws
    short = digest(name, table)
    ws = table_sheet(wb, title, labelled(short, names or {}) if words else short, fmt,
                     top=2, words=words, number_formats=_digest_formats(short, fmt))
    ws.write_string(0, 0, note(name, table), fmt["bold"])
    return ws


SAID_ONCE = ("pooled",)
"""Columns holding one text for the whole table: protocol 001's mark that every
interval and p of the table pools two or more owners' ratings as if independent. A
sheet says it once, above the table: on every row, the column took the width the
table's own columns need, and wrapped each row eight lines tall over two pages."""


def said_once(table: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """(the line saying ``table``'s :data:`SAID_ONCE` columns, ``table`` without them).

    A column is said once only when it holds one text, not blank, on every row;
    otherwise it stays in the table and the line is "".
    """
    lines, shown = [], table
    for col in SAID_ONCE:
        values = set(table[col].tolist()) if col in table.columns else set()
        if len(values) == 1 and isinstance(next(iter(values)), str) \
                and not _blank(next(iter(values))):
            lines.append(f"Every row of this table: {values.pop()}")
            shown = shown.drop(columns=col)
    return "; ".join(lines), shown


PROPORTIONS_OF = {"permutation": ("diff",)}
"""Per table, columns holding a proportion that their name alone does not tell (the
permutation test's difference is one of yields)."""
SPREAD = ("mean", "median", "min", "max")
SETTINGS_OF = {"hypothesis_deltas": ("tolerance",)}
"""Per table, columns holding a setting of the plan, not a result: shown as the plan
writes it (:func:`~sheetflow.words.setting_text`: 004's direction tolerance reads 1e-9,
as in the study file; written out, 0.000000001, it had to be counted zero by zero, and
the scientific format of a tiny result, 1.00E-09, read as a figure the study measured).
Text, so that its column is as wide as it."""


def _settings_as_text(shown: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``shown`` with its setting ``columns`` as the plan writes them, a blank kept
    blank."""
    for col in columns:
        if col in shown.columns and shown[col].dtype.kind == "f":
            said = [setting_text(v) if np.isfinite(v) else None for v in shown[col].tolist()]
            shown = shown.assign(**{col: said})
    return shown


def _digest_formats(short: pd.DataFrame, fmt: dict[str, Any]) -> dict[str, Any]:
    """A digest's spread columns as percentages when its figure is a proportion."""
    figures = set(short["figure"]) if "figure" in short.columns else set()
    if not figures or not figures <= set(PROPORTIONS):
        return {}
    return {col: fmt["share"] for col in SPREAD if col in short.columns}


NOTE_WIDTH = 100.0  # characters: the one line of a sheet with nothing else to show


def nothing_to_show(table: pd.DataFrame) -> str:
    """The line a sheet shows for a table without a figure: its reasons, or that it
    has no row."""
    reasons = [] if table.empty or "reason" not in table.columns else \
        list(dict.fromkeys(str(r) for r in table["reason"].tolist() if not _blank(r)))
    said = "; ".join(reasons) or "the analysis found no row to show"
    return f"Nothing to show for this study: {said}" + ("" if said.endswith(".") else ".")


def note_sheet(wb: xlsxwriter.Workbook, title: str, line: str,
               fmt: dict[str, Any]) -> Worksheet:
    """A sheet holding one wrapped line (and nothing else)."""
    ws = wb.add_worksheet(title)
    ws.set_column(0, 0, NOTE_WIDTH)
    ws.write_string(0, 0, line, fmt["wrap"])
    ws.set_row(0, row_points([(line, NOTE_WIDTH)], proportional=True))
    set_print(ws, [NOTE_WIDTH])
    return ws


REPEATS = {"n_boot_used": "n_boot"}
"""Columns a sheet leaves out when they repeat another on every row with an interval:
the resamples an alpha interval rests on, when none was left out (the row's note says
how many were when some were)."""


def without_repeats(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` without the :data:`REPEATS` columns that say nothing their other
    column does not, on every row with an interval (a row without one rests on no
    resample); each such column took a printed page's width for a repeated figure."""
    with_interval = table["ci_low"].notna() if "ci_low" in table.columns else \
        pd.Series(True, index=table.index)
    same = [col for col, other in REPEATS.items()
            if col in table.columns and other in table.columns
            and (table.loc[with_interval, col] == table.loc[with_interval, other]).all()]
    return table.drop(columns=same)


def without_blank_columns(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` without the columns that are blank (missing or empty text) on every
    row; a table with no rows, or nothing but blank columns, is kept whole."""
    if table.empty:
        return table
    keep = [col for col, values in table.items() if not all(map(_blank, values.tolist()))]
    return table[keep] if keep else table


def _blank(value: Any) -> bool:
    """Missing (None, NaN, NA) or empty text."""
    if isinstance(value, str):
        return value == ""
    if isinstance(value, (list, tuple, dict, set, np.ndarray)):
        return False  # a container, even an empty one, is something shown
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def write_analysis_workbook(analysis: Analysis, path: str | Path, *,
                            tables_beside: bool = True) -> Path:
    """Write the analysis workbook to ``path``.

    Parameters
    ----------
    analysis : Analysis
        From :func:`sheetflow.analysis.analyze` or :func:`~sheetflow.analysis.run_plan`.
    path : str or Path
        The ``.xlsx`` file to write (its folder is created).
    tables_beside : bool, default True
        Also write each table too large for a sheet (see :mod:`.large`) as CSV under
        ``tables/`` beside ``path``; :func:`~.outputs.write_analysis_outputs` passes
        False and writes them itself, with the rest of the set.

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = SheetflowWorkbook(str(path), OPTIONS)
    wb.set_properties({"title": f"sheetflow analysis: {analysis.study.title}",
                       "author": "sheetflow", "created": created(analysis)})
    fmt = formats(wb)
    summary = wb.add_worksheet("Summary")
    names = analysis.study.rubric.names()
    sheets = {name: _sheet_or_digest(wb, name, SHEET_TITLES.get(name, name)[:31], table, fmt,
                                     names=names)
              for name, table in analysis.tables.items()}
    # the Data sheet keeps the analysis's column names: the table as analysed, for re-use
    _sheet_or_digest(wb, "data", "Data", analysis.data, fmt, words=False)
    if tables_beside:
        for name, table in large_tables(analysis.tables, analysis.data).items():
            write_csv(table, path.parent / csv_path(name))
    charts = chart_data_sheet(wb, analysis, fmt)
    methods_sheet(wb, analysis, fmt)
    summary_sheet(wb, summary, analysis, fmt, charts)
    if "direction_agreement" in sheets and "direction" in charts:
        direction_chart(wb, charts["direction"])
    if "confidence_agreement" in sheets:
        confidence_chart(wb, analysis, charts)
    for sheet in wb.worksheets():  # every cell is written: each prints its used range
        if not sheet.is_chartsheet:
            print_used_range(sheet)
    close_workbook(wb, path)
    return path

METHODS_WIDTHS = (36.0, 94.0)
METHODS_LINES = 20  # a longer text is split over rows (a row prints on one page)


def methods_sheet(wb: xlsxwriter.Workbook, analysis: Analysis, fmt: dict[str, Any]) -> None:
    """Topic and text, a row each, the text wrapped and its row as tall as it needs."""
    ws = wb.add_worksheet("Methods")
    for col, width in enumerate(METHODS_WIDTHS):
        ws.set_column(col, col, width)
    s = analysis.summary
    facts = [
        ("sheetflow version", s.get("sheetflow_version", "")),
        ("spec hash (sha256)", s.get("spec_hash", "")),
        ("key sha256", s.get("key_sha256", "")),
        ("seeds", json.dumps(s.get("seeds", {}), sort_keys=True)),
        ("bootstrap resamples (n_boot)", str(s.get("n_boot", ""))),
        ("analyses run", ", ".join(s.get("analyses", []))),
        ("number forms", NUMBER_FORMS),
    ]
    row = 0
    for topic, text in [*facts, *analysis.methods]:
        for n, piece in enumerate(_pieces(str(text), METHODS_WIDTHS[1])):
            ws.write_string(row, 0, topic if n == 0 else "", fmt["bold"])
            ws.write_string(row, 1, piece, fmt["wrap"])
            # the bold topic counted a digit a letter, the prose letter by letter
            ws.set_row(row, max(row_points([(topic if n == 0 else "", METHODS_WIDTHS[0])]),
                                row_points([(piece, METHODS_WIDTHS[1])], proportional=True)))
            row += 1
    set_print(ws, METHODS_WIDTHS, landscape=True)


# a sentence ends at a full stop or semicolon after a small letter, digit or bracket,
# before a capital: "Gwet, K. L. (2014)." and "et al. (2009)" stay whole
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]][.;]) (?=[A-Z])")


def _pieces(text: str, width: float) -> list[str]:
    """``text`` split into pieces of at most :data:`METHODS_LINES` wrapped lines (one
    piece when it is short enough; the seeds of hundreds of packs are one long list).

    Pieces end at a line break (between references), else between sentences; only a
    sentence too long on its own is split after a comma. So a citation is not cut in
    two.
    """
    parts = []  # (text, what joins it to the part before)
    for n, line in enumerate(text.split("\n")):
        for m, sentence in enumerate(_SENTENCE_END.split(line)):
            pieces = [sentence] if text_lines(sentence, width) <= METHODS_LINES \
                else re.split(r"(?<=,) ", sentence)
            parts.extend((piece, "\n" if n and not m and not k else " ")
                         for k, piece in enumerate(pieces))
    pieces, current = [], ""
    for part, joint in parts:
        candidate = f"{current}{joint}{part}" if current else part
        if current and text_lines(candidate, width) > METHODS_LINES:
            pieces.append(current)
            candidate = part
        current = candidate
    return [*pieces, current] if current or not pieces else pieces
