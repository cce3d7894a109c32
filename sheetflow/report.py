"""The analysis workbook, ``summary.json`` and ``verdicts.jsonl`` (computes nothing).

:func:`write_analysis_workbook` lays out an :class:`~sheetflow.analysis.Analysis` with
xlsxwriter: a Summary sheet an analyst reads in a minute (alpha per dimension and for
the total with its interval and band, colour-coded; direction agreement; verdicts
against the plan's targets), one sheet per analysis, the unblinded data, the raters'
self-checks and a Methods sheet, plus native charts. Every text goes through
``write_string`` (no formula or URL is ever created from data) and the creation date is
pinned to the study's date, so the same analysis gives byte-identical files.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.utility import quote_sheetname, xl_range_abs
from xlsxwriter.worksheet import Worksheet

from .analysis import Analysis, verdicts
from .outputs import OutputSet, remove_partials

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
VERDICT_ANALYSES = frozenset({"yield_fisher", "permutation", "trend", "intra_rater_kappa"})
BAND_COLOURS = ("#C6EFCE", "#E2F0D9", "#FFEB9C", "#FFC7CE")  # best band first
_OPTIONS = {"strings_to_formulas": False, "strings_to_urls": False,
            "strings_to_numbers": False, "nan_inf_to_errors": False}


def write_analysis_workbook(analysis: Analysis, path: str | Path) -> Path:
    """Write the analysis workbook to ``path``.

    Parameters
    ----------
    analysis : Analysis
        From :func:`sheetflow.analysis.analyze` or :func:`~sheetflow.analysis.run_plan`.
    path : str or Path
        The ``.xlsx`` file to write (its folder is created).

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), _OPTIONS)
    wb.set_properties({"title": f"sheetflow analysis: {analysis.study.title}",
                       "author": "sheetflow", "created": _created(analysis)})
    fmt = _formats(wb)
    summary = wb.add_worksheet("Summary")
    sheets = {name: _table_sheet(wb, SHEET_TITLES.get(name, name)[:31], table, fmt)
              for name, table in analysis.tables.items()}
    _table_sheet(wb, "Data", analysis.data, fmt)
    charts = _chart_data_sheet(wb, analysis, fmt)
    _methods_sheet(wb, analysis, fmt)
    _summary_sheet(wb, summary, analysis, fmt, charts)
    if "direction_agreement" in sheets and "direction" in charts:
        _direction_chart(wb, sheets["direction_agreement"], charts["direction"])
    wb.close()
    return path


def write_analysis_outputs(analysis: Analysis, out_dir: str | Path) -> list[Path]:
    """Write every output of an analysis into ``out_dir``; the paths written.

    ``analysis.xlsx`` and ``summary.json`` always; ``verdicts.jsonl`` when the plan runs
    a KEEP/KNOWN analysis. This is the one place outputs are written: each to a
    temporary file first, all replacing the old ones only once every one is complete
    (:class:`~sheetflow.outputs.OutputSet`), so a run that stops half-way leaves the
    previous set as it was.
    """
    out = Path(out_dir)
    remove_partials(out)
    writers = [(write_analysis_workbook, out / "analysis.xlsx"),
               (write_summary_json, out / "summary.json")]
    if VERDICT_ANALYSES & set(analysis.study.plan.run):
        writers.append((write_verdicts_jsonl, out / "verdicts.jsonl"))
    with OutputSet() as outputs:
        for write, path in writers:
            write(analysis, outputs.stage(path))
    return [path for _, path in writers]


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """The decision, panel and arms in words: the Summary sheet's first rows and the
    last lines ``sheetflow analyze`` prints (the same text in both places)."""
    decision = summary["decision"]
    lines = [f"DECISION: {decision['status'].upper()}",
             f"rule: {decision['rule']}"]
    lines += [f"- {reason}" for reason in decision["reasons"]]
    lines.append(_panel_line(summary["panel"]))
    lines += [f"file left out: {f['file']} ({f['rater'] or 'rater unknown'}): {f['reason']}"
              for f in summary["panel"]["excluded_files"]]
    lines += [f"note: {n}" for n in summary["panel"]["notes"]]
    if summary.get("arms"):
        lines.append(f"arms: {summary['arms']['sentence']}")
    return lines + list(summary.get("readings", []))


def _panel_line(panel: dict[str, Any]) -> str:
    expected, included = panel["expected"], panel["included"]
    line = (f"panel: {len(set(included) & set(expected))} of {len(expected)} expected "
            f"raters with ratings ({', '.join(included) or 'none'})")
    if panel["missing_packs"]:
        line += "; MISSING " + "; ".join(
            f"{m['rater']}" + (f" sitting {m['sitting']}" if m["sitting"] != 1 else "")
            + f": {m['reason']}" for m in panel["missing_packs"])
    return line


def write_summary_json(analysis: Analysis, path: str | Path) -> Path:
    """Write ``analysis.summary`` as JSON (sorted keys, NaN as null) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(analysis.summary, sort_keys=True, indent=2, allow_nan=False,
                               ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_verdicts_jsonl(analysis: Analysis, path: str | Path) -> Path:
    """Write one JSON line per rated item and sitting (protocol 001 ``verdicts.jsonl``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(rec, sort_keys=True, ensure_ascii=False) for rec in verdicts(analysis)]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- cells


def _created(analysis: Analysis) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(analysis.study.date)
    except ValueError:
        return dt.datetime(2000, 1, 1)


def _formats(wb: xlsxwriter.Workbook) -> dict[str, Any]:
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


def _write(ws: Worksheet, row: int, col: int, value: Any, fmt: Any = None) -> None:
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


def _table(ws: Worksheet, top: int, table: pd.DataFrame, fmt: dict[str, Any]) -> int:
    """Write ``table`` with a header at row ``top``; return the next free row."""
    for j, col in enumerate(table.columns):
        ws.write_string(top, j, str(col), fmt["head"])
    for i, row in enumerate(table.itertuples(index=False), start=top + 1):
        for j, value in enumerate(row):
            _write(ws, i, j, value, fmt["num"] if isinstance(value, float) else None)
    return top + len(table) + 1


def _table_sheet(wb: xlsxwriter.Workbook, title: str, table: pd.DataFrame,
                 fmt: dict[str, Any]) -> Worksheet:
    ws = wb.add_worksheet(title)
    ws.freeze_panes(1, 0)
    ws.set_column(0, max(len(table.columns) - 1, 0), 16)
    _table(ws, 0, table, fmt)
    if len(table.columns):
        ws.autofilter(0, 0, max(len(table), 1), len(table.columns) - 1)
    return ws


# --------------------------------------------------------------------------- summary


def _summary_sheet(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                   fmt: dict[str, Any], charts: dict[str, tuple[str, int, int]]) -> None:
    s = analysis.summary
    ws.set_landscape()
    ws.fit_to_pages(1, 0)  # one page wide when printed
    ws.set_column(0, 0, 34)
    ws.set_column(1, 6, 14)
    ws.set_column(7, 7, 46)
    ws.write_string(0, 0, f"{analysis.study.title}", fmt["title"])
    ws.write_string(1, 0, f"study {s.get('study_id', '')} | {s.get('n_raters', 0)} raters | "
                    f"{s.get('n_cases', 0)} cases | spec {str(s.get('spec_hash', ''))[:16]} | "
                    f"key {str(s.get('key_sha256', ''))[:16]}", fmt["grey"])
    row = _headline_block(ws, 3, s, fmt)
    row = _checks_block(ws, row, s, fmt)
    row = _arms_block(ws, row, s, fmt)
    if s.get("alpha"):
        row = _alpha_block(ws, row, analysis, fmt)
    if s.get("direction_agreement"):
        ws.write_string(row, 0, "Direction agreement", fmt["bold"])
        row += 1
        for key, value in s["direction_agreement"].items():
            ws.write_string(row, 0, key.replace("_", " "))
            _write(ws, row, 1, value, fmt["num"])
            row += 1
        row += 1
    row = _headline_extras(ws, row, s, fmt)
    if "alpha" in charts:
        _alpha_chart(wb, ws, analysis, charts["alpha"], row + 1)


_STATUS_FORMAT = {"pass": "status_pass", "fail": "status_fail"}


def _headline_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    """The decision in words, then the rule, reasons, panel and arms (one line each)."""
    lines = headline_lines(s)
    style = fmt[_STATUS_FORMAT.get(s["decision"]["status"], "status_other")]
    ws.set_row(row, 24)
    ws.write_string(row, 0, lines[0], style)
    for line in lines[1:]:
        row += 1
        ws.write_string(row, 0, line)
    return row + 2


def _checks_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    checks = s["decision"]["checks"]
    if not checks:
        return row
    ws.write_string(row, 0, "Checks behind the decision", fmt["bold"])
    row += 1
    for j, h in enumerate(["check", "value", "target", "passed", "outcome"]):
        ws.write_string(row, j, h, fmt["head"])
    ws.write_string(row, 7, "note", fmt["head"])
    for c in checks:
        row += 1
        passed = c["passed"]
        style = fmt["pass"] if passed is True else fmt["fail"] if passed is False else None
        ws.write_string(row, 0, str(c["name"]))
        _write(ws, row, 1, c["value"], fmt["num"])
        _write(ws, row, 2, c["target"])
        ws.write_string(row, 3, {True: "yes", False: "no"}.get(passed, "undefined"), style)
        ws.write_string(row, 4, str(c["outcome"]), style)
        ws.write_string(row, 7, str(c.get("note") or ""))
    return row + 2


def _arms_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    arms = s.get("arms")
    if not arms:
        return row
    ws.write_string(row, 0, "Arms: which wins, by how much, how sure", fmt["bold"])
    row += 1
    head = ["arm ahead", "effect", "ci_low", "ci_high", "p", "test"]
    for j, h in enumerate(head):
        ws.write_string(row, j, h, fmt["head"])
    ws.write_string(row, 7, "effect measured as", fmt["head"])
    row += 1
    ci = arms.get("ci") or [None, None]
    ws.write_string(row, 0, arms["winner"] or "none")
    for j, value in enumerate([arms["effect"], ci[0], ci[1], arms["p"]], start=1):
        _write(ws, row, j, value, fmt["num"])
    ws.write_string(row, 5, str(arms["test"]))
    ws.write_string(row, 7, str(arms["effect_measure"]))
    for arm, value in arms.get("means", {}).items():
        row += 1
        ws.write_string(row, 0, f"  {arm}")
        _write(ws, row, 1, value, fmt["num"])
    return row + 2


def _alpha_block(ws: Worksheet, row: int, analysis: Analysis, fmt: dict[str, Any]) -> int:
    ws.write_string(row, 0, "Krippendorff's alpha (95% bootstrap CI)", fmt["bold"])
    row += 1
    head = ["measure", "alpha", "ci_low", "ci_high", "n_units", "n_raters", "level", "band"]
    for j, h in enumerate(head):
        ws.write_string(row, j, h, fmt["head"])
    bands = [b.label for b in analysis.study.plan.bands]
    for rec in analysis.summary["alpha"]:
        row += 1
        band_fmt = fmt["bands"][min(bands.index(rec["band"]), 3)] if rec["band"] in bands \
            else fmt["num"]
        ws.write_string(row, 0, str(rec["measure"]))
        _write(ws, row, 1, rec["alpha"], band_fmt)
        _write(ws, row, 2, rec["ci_low"], fmt["num"])
        _write(ws, row, 3, rec["ci_high"], fmt["num"])
        _write(ws, row, 4, rec["n_units"])
        _write(ws, row, 5, rec["n_raters"])
        ws.write_string(row, 6, str(rec["level"]))
        ws.write_string(row, 7, rec["band"] or rec.get("reason") or "", band_fmt)
    return row + 2


def _headline_extras(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    """Short lines for the protocol-specific headlines (yield, acceptance, pilot...)."""
    lines = []
    if "yield" in s:
        lines.append("yield per arm: " + ", ".join(
            f"{a} {_fmt(y)}" for a, y in s["yield"].items()))
    for f in s.get("fisher", []):
        lines.append(f"Fisher one-sided {f['comparison']}: p = {_fmt(f['p'])}")
    if "acceptance" in s:
        a = s["acceptance"]
        lines.append(f"accepted items: {a['n_accepted']} of {a['n_items']}")
    if "second_rater_selection" in s:
        lines.append(f"second-rater subset: {s['second_rater_selection']}")
    if "refusals" in s:
        lines += [f"{arm}: over-refusal {r['over_refusal']}, under-refusal {r['under_refusal']}"
                  for arm, r in s["refusals"].items()]
    if "gold_disputes" in s:
        lines.append(f"gold disputes: {len(s['gold_disputes'])} item(s)")
    if "pilot" in s:
        lines.append(f"pilot verdict: {s['pilot']['pilot_verdict']} "
                     f"(critical failures {s['pilot']['critical_failures']})")
    for line in lines:
        ws.write_string(row, 0, line)
        row += 1
    return row + (1 if lines else 0)


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


# --------------------------------------------------------------------------- charts


def _chart_data_sheet(wb: xlsxwriter.Workbook, analysis: Analysis,
                      fmt: dict[str, Any]) -> dict[str, tuple[str, int, int]]:
    """Write chart data on one sheet; return name -> (sheet, first row, n rows)."""
    if not analysis.figures:
        return {}
    ws = wb.add_worksheet("Chart data")
    where: dict[str, tuple[str, int, int]] = {}
    row = 0
    for name, table in analysis.figures.items():
        ws.write_string(row, 0, name, fmt["bold"])
        _table(ws, row + 1, table, fmt)
        where[name] = ("Chart data", row + 1, len(table))
        row += len(table) + 4
    _distribution_chart(wb, ws, analysis, where)
    _scatter_chart(wb, ws, analysis, where)
    _confidence_chart(wb, ws, analysis, where)
    return where


def _alpha_chart(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                 loc: tuple[str, int, int], row: int) -> None:
    sheet, top, n = loc
    table = analysis.figures["alpha"]
    first, last = top + 1, top + n
    chart = wb.add_chart({"type": "column"})
    chart.add_series({
        "name": "alpha", "categories": [sheet, first, 0, last, 0],
        "values": [sheet, first, 1, last, 1],
        # a list would be written as literal numbers; a formula points at the cells
        "y_error_bars": {"type": "custom",
                         "plus_values": _column_ref(sheet, table, "err_plus", first, last),
                         "plus_data": _finite_list(table["err_plus"]),
                         "minus_values": _column_ref(sheet, table, "err_minus", first, last),
                         "minus_data": _finite_list(table["err_minus"])},
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


def _confidence_chart(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                      where: dict[str, tuple[str, int, int]]) -> None:
    """Alpha on all ratings and on Medium/High only, per dimension, with their intervals."""
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
    ws.insert_chart(top, len(table.columns) + 1, chart)


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
    for j in range(1, len(table.columns)):
        chart.add_series({"name": [sheet, top, j], "categories": [sheet, top + 1, 0, top + n, 0],
                          "values": [sheet, top + 1, j, top + n, j]})
    chart.set_title({"name": f"Distribution of {table.columns[0]} per rater"})
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


def _direction_chart(wb: xlsxwriter.Workbook, ws: Worksheet,
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


# --------------------------------------------------------------------------- methods


def _methods_sheet(wb: xlsxwriter.Workbook, analysis: Analysis, fmt: dict[str, Any]) -> None:
    ws = wb.add_worksheet("Methods")
    ws.set_column(0, 0, 30)
    ws.set_column(1, 1, 110)
    s = analysis.summary
    facts = [
        ("sheetflow version", s.get("sheetflow_version", "")),
        ("spec hash (sha256)", s.get("spec_hash", "")),
        ("key sha256", s.get("key_sha256", "")),
        ("seeds", json.dumps(s.get("seeds", {}), sort_keys=True)),
        ("bootstrap resamples (n_boot)", str(s.get("n_boot", ""))),
        ("analyses run", ", ".join(s.get("analyses", []))),
    ]
    for row, (topic, text) in enumerate([*facts, *analysis.methods]):
        ws.write_string(row, 0, topic, fmt["bold"])
        ws.write_string(row, 1, str(text), fmt["wrap"])
