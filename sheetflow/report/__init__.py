"""The analysis workbook, ``summary.json`` and ``verdicts.jsonl`` (computes nothing).

:func:`write_analysis_outputs` writes every output of an analysis, whole or not at all.
:func:`write_analysis_workbook` lays out an :class:`~sheetflow.analysis.Analysis` with
xlsxwriter: a Summary sheet an analyst reads in a minute (the decision in words, the
rule, the panel and the arms first; then each check, alpha per dimension and for the
total with its interval and band, colour-coded), one sheet per analysis, the unblinded
data, the raters' self-checks and a Methods sheet, plus native charts. Every text goes
through ``write_string`` (no formula or URL is ever created from data) and the creation
date is pinned to the study's date, so the same analysis gives byte-identical files.

Modules: :mod:`.cells` (formats, typed cells, tables), :mod:`.headline` (the decision
in words), :mod:`.summary_sheet`, :mod:`.charts`, :mod:`.workbook`, :mod:`.outputs`.
"""

from __future__ import annotations

from .cells import BAND_COLOURS
from .headline import headline_lines
from .outputs import (
    VERDICT_ANALYSES,
    write_analysis_outputs,
    write_summary_json,
    write_verdicts_jsonl,
)
from .workbook import SHEET_TITLES, write_analysis_workbook

__all__ = [
    "BAND_COLOURS",
    "SHEET_TITLES",
    "VERDICT_ANALYSES",
    "headline_lines",
    "write_analysis_outputs",
    "write_analysis_workbook",
    "write_summary_json",
    "write_verdicts_jsonl",
]
