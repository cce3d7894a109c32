"""The Summary sheet: the decision in words first, then checks, arms, agreement, chart."""

from __future__ import annotations

import math
from typing import Any

import xlsxwriter
from xlsxwriter.worksheet import Worksheet

from ..analysis import Analysis
from .cells import fmt_value, write_cell
from .charts import alpha_chart, yield_chart
from .headline import headline_lines


def summary_sheet(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
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
            write_cell(ws, row, 1, value, fmt["num"])
            row += 1
        row += 1
    row = _headline_extras(ws, row, s, fmt)
    if "alpha" in charts:
        alpha_chart(wb, ws, analysis, charts["alpha"], row + 1)
        row += 19
    if "yield" in charts:
        yield_chart(wb, ws, analysis, charts["yield"], row + 1)

_STATUS_FORMAT = {"pass": "status_pass", "fail": "status_fail"}

# Characters of a line that columns A:H (164 character widths) hold at the default
# font; a longer headline line wraps inside them instead of running off to the right
# (and widening the printed page until everything on it is too small to read).
LINE_CHARS = 150
LINE_HEIGHT = 15  # points, one line of the default font


def _headline_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    """The decision in words, then the rule, reasons, panel and arms (a row each)."""
    lines = headline_lines(s)
    style = fmt[_STATUS_FORMAT.get(s["decision"]["status"], "status_other")]
    ws.set_row(row, 24)
    ws.write_string(row, 0, lines[0], style)
    for line in lines[1:]:
        row += 1
        if len(line) <= LINE_CHARS:
            ws.write_string(row, 0, line)
            continue
        ws.merge_range(row, 0, row, 7, "", fmt["wrap"])
        ws.write_string(row, 0, line, fmt["wrap"])  # text only ever through write_string
        ws.set_row(row, LINE_HEIGHT * math.ceil(len(line) / LINE_CHARS))
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
        write_cell(ws, row, 1, c["value"], fmt["num"])
        write_cell(ws, row, 2, c["target"])
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
        write_cell(ws, row, j, value, fmt["num"])
    ws.write_string(row, 5, str(arms["test"]))
    ws.write_string(row, 7, str(arms["effect_measure"]))
    if arms.get("means"):
        row += 1
        ws.write_string(row, 0, "arm", fmt["head"])
        ws.write_string(row, 1, str(arms.get("means_label") or "figure"), fmt["head"])
    for arm, value in arms.get("means", {}).items():
        row += 1
        ws.write_string(row, 0, str(arm))
        write_cell(ws, row, 1, value, fmt["num"])
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
        write_cell(ws, row, 1, rec["alpha"], band_fmt)
        write_cell(ws, row, 2, rec["ci_low"], fmt["num"])
        write_cell(ws, row, 3, rec["ci_high"], fmt["num"])
        write_cell(ws, row, 4, rec["n_units"])
        write_cell(ws, row, 5, rec["n_raters"])
        ws.write_string(row, 6, str(rec["level"]))
        ws.write_string(row, 7, rec["band"] or rec.get("reason") or "", band_fmt)
    return row + 2

def _headline_extras(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    """Short lines for the protocol-specific headlines (yield, acceptance, pilot...)."""
    lines = []
    if "yield" in s:
        lines.append("yield per arm: " + ", ".join(
            f"{a} {fmt_value(y)}" for a, y in s["yield"].items()))
    for f in s.get("fisher", []):
        lines.append(f"Fisher one-sided {f['comparison']}: p = {fmt_value(f['p'])}")
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
    lines += s.get("summary_lines", [])  # a protocol's own lines, in its words
    for line in lines:
        ws.write_string(row, 0, line)
        row += 1
    return row + (1 if lines else 0)
