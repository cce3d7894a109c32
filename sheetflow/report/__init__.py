"""The analysis workbook, ``summary.json`` and ``verdicts.jsonl`` (computes nothing).

:func:`write_analysis_outputs` writes every output of an analysis, whole or not at all;
:func:`analyze_and_write` runs the analysis and writes while it runs.
:func:`write_analysis_workbook` lays out an :class:`~sheetflow.analysis.Analysis` with
xlsxwriter: a Summary sheet an analyst reads in a minute (the decision in words, the
rule, the panel and the arms first; then each check, alpha per dimension and for the
total with its interval and band, colour-coded), one sheet per analysis, the unblinded
data, the raters' self-checks and a Methods sheet, plus native charts. Every text goes
through ``write_string`` (no formula or URL is ever created from data) and the creation
date is pinned to the study's date, so the same analysis gives byte-identical files.

Modules: :mod:`.cells` (formats, typed cells, tables), :mod:`.headline` (the decision
in words), :mod:`.summary_sheet`, :mod:`.charts`, :mod:`.workbook`, :mod:`.outputs`.

The names below are loaded on first use (PEP 562): an output worker process (see
:mod:`.parallel`) imports only the writers it runs, not the analysis and scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

_LAZY = {
    "BAND_COLOURS": "cells", "headline_lines": "headline",
    "VERDICT_ANALYSES": "outputs", "write_analysis_outputs": "outputs",
    "write_summary_json": "outputs", "write_verdicts_jsonl": "outputs",
    "analyze_and_write": "overlap",
    "SHEET_TITLES": "workbook", "write_analysis_workbook": "workbook",
}

__all__ = [
    "BAND_COLOURS",
    "SHEET_TITLES",
    "VERDICT_ANALYSES",
    "analyze_and_write",
    "headline_lines",
    "write_analysis_outputs",
    "write_analysis_workbook",
    "write_summary_json",
    "write_verdicts_jsonl",
]

if TYPE_CHECKING:
    from .cells import BAND_COLOURS
    from .headline import headline_lines
    from .outputs import (
        VERDICT_ANALYSES,
        write_analysis_outputs,
        write_summary_json,
        write_verdicts_jsonl,
    )
    from .overlap import analyze_and_write
    from .workbook import SHEET_TITLES, write_analysis_workbook


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
