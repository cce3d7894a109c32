"""The Summary sheet: the decision in words first, then checks, arms, agreement, chart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import xlsxwriter
from xlsxwriter.worksheet import Worksheet

from ..analysis import Analysis
from ..analysis.context import band_bounds
from ..analysis.decision import (
    COMPARED,
    figure_text,
    outcome_words,
    passed_words,
    shown_against,
)
from ..analysis.readings import reading_bounds, reading_said
from ..words import NUMBER_FORMS, decimals_for, p_said
from ..workbook.printing import row_points, set_print, text_lines
from .cells import BAND_COLOURS, number_format, write_cell
from .charts import alpha_chart, yield_chart
from .headline import headline_lines, review_lines, study_counts
from .paging import fit_scale as paged_scale
from .paging import keep_blocks_whole


def summary_sheet(wb: xlsxwriter.Workbook, ws: Worksheet, analysis: Analysis,
                   fmt: dict[str, Any], charts: dict[str, tuple[str, int, int]]) -> None:
    s = analysis.summary
    for col, width in enumerate(SUMMARY_WIDTHS):
        ws.set_column(col, col, width)
    ws.write_string(0, 0, f"{analysis.study.title}", fmt["title"])
    ws.write_string(1, 0, f"study {s.get('study_id', '')} | "
                    f"{' | '.join(study_counts(s, analysis.study))} | "
                    f"spec {str(s.get('spec_hash', ''))[:16]} | "
                    f"key {str(s.get('key_sha256', ''))[:16]}", fmt["grey"])
    row = _headline_block(ws, 3, s, fmt)
    write_line(ws, row, NUMBER_FORMS, fmt["grey_wrap"])  # before the first figure
    row += 2
    decimals = _decimal_formats(wb)
    starts = [row]  # the first row of each table: a page break never splits one
    row = _checks_block(ws, row, s, fmt, decimals)
    starts.append(row)
    row = _arms_block(ws, row, s, fmt)
    starts.append(row)
    if s.get("alpha"):
        row = _alpha_block(ws, row, analysis, fmt, decimals)
    starts.append(row)
    if s.get("direction_agreement"):
        ws.write_string(row, 0, "Direction agreement", fmt["bold"])
        row += 1
        for key, value in s["direction_agreement"].items():  # proportions
            _wrapped_row(ws, row, {0: key.replace("_", " ")}, fmt["wrap"])
            write_cell(ws, row, 1, value, fmt["share"])
            row += 1
        row += 1
    starts.append(row)
    row = _reported_block(ws, row, s, fmt, analysis.study.rubric.names(), decimals)
    starts.append(row)
    row = _headline_extras(ws, row, s, fmt)
    shown = [alpha_chart(wb, analysis, charts["alpha"]) if "alpha" in charts else "",
             yield_chart(wb, analysis, charts["yield"]) if "yield" in charts else ""]
    for name in filter(None, shown):  # a chart prints whole on a sheet of its own
        write_line(ws, row, f"Chart: see the sheet \"{name}\".", fmt["grey"])
        row += 1
    set_print(ws, SUMMARY_WIDTHS, landscape=True)
    _keep_tables_whole(ws, starts, row)


def _keep_tables_whole(ws: Worksheet, starts: list[int], end: int) -> None:
    """Page breaks before each table that would not fit the rest of its page, so that
    no table is split from its heading or its last row left alone on the next page
    (a table taller than a page starts one and runs on)."""
    keep_blocks_whole(ws, starts, end, SUMMARY_WIDTHS)


def fit_scale() -> int:
    """The scale the Summary prints at, fit to one page wide, as LibreOffice lays its
    columns out (a point per pixel: :func:`~sheetflow.workbook.printing.page_pixels`).
    Excel ignores manual breaks under fit to page (:mod:`sheetflow.packs.pages`), so
    the breaks are placed for LibreOffice's pages."""
    return paged_scale(SUMMARY_WIDTHS, True)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


SUMMARY_WIDTHS = (30.0, 11.0, 11.0, 11.0, 11.0, 11.0, 11.0, 40.0)  # one landscape page
_STATUS_FORMAT = {"pass": "status_pass", "fail": "status_fail"}

LINE_CHARS = int(sum(SUMMARY_WIDTHS))  # one line of text across columns A:H
HEADLINE_POINTS = 24  # a line of the 14 pt headline


def write_line(ws: Worksheet, row: int, text: str, fmt: Any) -> None:
    """``text`` across columns A:H, wrapped, its row as tall as its lines: a long line
    never runs off to the right (widening the printed page until nothing on it can be
    read)."""
    ws.merge_range(row, 0, row, len(SUMMARY_WIDTHS) - 1, "", fmt)
    ws.write_string(row, 0, text, fmt)  # text only ever through write_string
    # prose measured letter by letter: a digit a letter left blank lines under it
    ws.set_row(row, row_points([(text, LINE_CHARS)], proportional=True))


def _headline_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    """The decision in words, then the rule, reasons, panel and arms (a row each)."""
    lines = headline_lines(s)
    style = fmt[_STATUS_FORMAT.get(s["decision"]["status"], "status_other")]
    # the coloured box spans the text (in A alone the fill stopped mid-word)
    ws.merge_range(row, 0, row, len(SUMMARY_WIDTHS) - 1, "", style)
    ws.write_string(row, 0, lines[0], style)
    ws.set_row(row, HEADLINE_POINTS * text_lines(lines[0], LINE_CHARS * 11 / 14))
    for line in lines[1:]:
        row += 1
        write_line(ws, row, line, fmt["wrap"])
    return row + 2


def _wrapped_row(ws: Worksheet, row: int, cells: dict[int, str], fmt: Any) -> None:
    """Text cells of one table row, wrapped in their columns, the row as tall as the
    tallest."""
    for col, text in cells.items():
        ws.write_string(row, col, text, fmt)
    # regular-weight prose, measured letter by letter (as :func:`write_line`)
    ws.set_row(row, row_points([(t, SUMMARY_WIDTHS[c]) for c, t in cells.items()],
                               proportional=True))

def _decimal_formats(wb: xlsxwriter.Workbook) -> Callable[..., Any]:
    """A number format with a given count of decimals, as a decimal or (``percent``) a
    percentage, on a band's ``colour`` when given, after the words ``said`` when given
    (a target's side: "at least 0.800", the number kept a number), made once when first
    asked for."""
    made: dict[tuple[int, bool, Any, str], Any] = {}

    def with_decimals(digits: int, percent: bool = False, colour: Any = None,
                      said: str = "") -> Any:
        if (digits, percent, colour, said) not in made:
            body = ("0." + "0" * digits if digits else "0") + ("%" if percent else "")
            # the minus sign after the words: one section put it before them
            shown = f'"{said} "{body};"{said} "-{body}' if said else body
            made[digits, percent, colour, said] = wb.add_format({
                "num_format": shown,
                "valign": "top", **({"bg_color": colour} if colour else {})})
        return made[digits, percent, colour, said]
    return with_decimals


def _checks_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any],
                  decimals: Callable[..., Any]) -> int:
    checks = s["decision"]["checks"]
    if not checks:
        return row
    ws.write_string(row, 0, "Checks behind the decision", fmt["bold"])
    row += 1
    _header_row(ws, row, ["check", "value", "target", "passed", "outcome"], "note", fmt)
    for c in checks:
        row += 1
        passed = c["passed"]
        style = fmt["pass"] if passed is True else fmt["fail"] if passed is False else \
            fmt["text"]  # undefined: uncoloured, level with the row's first line
        # a target in words (001's reference yield) wraps in its column like the name
        # and the note: clipped at the column's edge it read "above the refe"
        words = {2: c["target"]} if isinstance(c["target"], str) else {}
        _wrapped_row(ws, row, {0: str(c["name"]), **words, 7: str(c.get("note") or "")},
                     fmt["wrap"])
        # as many decimals as the decision lines print (shown_against: a value just
        # under its target never looks equal to it), counts as whole numbers, and a
        # proportion as the percentage they print
        share = bool(c.get("proportion"))
        texts = shown_against(c["value"], None if words else c["target"], percent=share,
                              bounds=c.get("bounds", ()), p_value=bool(c.get("p_value")))
        digits = _decimals_shown(*texts)
        said = COMPARED.get(str(c.get("comparison") or ""), "")
        for col, value in ((1, c["value"]), *(() if words else ((2, c["target"]),))):
            write_cell(ws, row, col, value,
                       # the target with the side that passes, as in the line
                       decimals(_decimals_shown(texts[1]), share, said=said)
                       if col == 2 and said else
                       _p_format(texts[col - 1], fmt, decimals) if c.get("p_value") else
                       decimals(digits, True) if share else
                       decimals(digits, False) if digits > 3 else
                       fmt["count"] if type(value) is int else fmt["num"])
        ws.write_string(row, 3, passed_words(c), style)
        ws.write_string(row, 4, outcome_words(c), style)
    return row + 2


def _header_row(ws: Worksheet, row: int, heads: list[str], last: str,
                fmt: dict[str, Any]) -> None:
    """A table's header: ``heads`` from column A, ``last`` in the last column (H) and
    the columns between them header-styled too, so the bar runs unbroken across the
    page (left blank, they read as a gap in a broken table)."""
    for j in range(len(SUMMARY_WIDTHS) - 1):
        if j < len(heads):
            ws.write_string(row, j, heads[j], fmt["head"])
        else:
            ws.write_blank(row, j, None, fmt["head"])
    ws.write_string(row, len(SUMMARY_WIDTHS) - 1, last, fmt["head"])


def _p_format(text: str, fmt: dict[str, Any], decimals: Callable[..., Any]) -> Any:
    """The cell format of a p-value shown as ``text`` in the check's line: "< 0.001"
    as that text (the number stays exact), else as many decimals as the line has."""
    return fmt["p"][0] if text.startswith("<") else decimals(_decimals_shown(text), False)


def _decimals_shown(*texts: str) -> int:
    """The most decimals among number texts ("0.6998": 4; "69.98%": 2; "n/a", "3": 0)."""
    return max((len(t.rstrip("%").partition(".")[2]) for t in texts if "e" not in t),
               default=0)


ARMS_MEASURE_HEADER = "effect measured as; note"
"""The header of the arms block's last column: what the effect measures, then the mark
of an interval on too few units."""


def _arms_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    arms = s.get("arms")
    if not arms:
        return row
    ws.write_string(row, 0, "Arms: which wins, by how much, how sure", fmt["bold"])
    row += 1
    _header_row(ws, row, ["arm ahead", "effect", "95% CI low", "95% CI high", "p", "test"],
                ARMS_MEASURE_HEADER, fmt)
    row += 1
    ci = arms.get("ci") or [None, None]
    figure = fmt["share"] if arms.get("proportion") else fmt["num"]  # yields: percentages
    winner = arms["winner"] or "none"
    if arms["winner"] and arms.get("shown") is False:
        winner += " (not shown to differ)"
    measured = "; ".join(filter(None, (_effect_said(arms),
                                       arms.get("ci_note") or "")))  # the few-units mark
    _wrapped_row(ws, row, {0: winner, 5: str(arms["test"]), 7: measured}, fmt["wrap"])
    for j, value in enumerate([arms["effect"], ci[0], ci[1]], start=1):
        write_cell(ws, row, j, value, figure)
    if isinstance(arms["p"], float):
        write_cell(ws, row, 4, arms["p"], number_format("p", arms["p"], fmt))
    if arms.get("means"):
        row += 1
        ws.write_string(row, 0, "arm", fmt["head"])
        ws.write_string(row, 1, str(arms.get("means_label") or "figure"), fmt["head"])
    for arm, value in arms.get("means", {}).items():
        row += 1
        ws.write_string(row, 0, str(arm))
        if arm in (arms.get("without_items") or ()):
            ws.write_string(row, 1, "no items")  # not a blank: the arm has nothing to rate
        else:
            write_cell(ws, row, 1, value, figure)
    return row + 2

def _effect_said(arms: dict[str, Any]) -> str:
    """What the effect measures and between which two arms ("yield difference (Newcombe
    95% CI), b3 minus b1"): with no arm ahead the row said "none" and an effect without
    saying what it compared."""
    first = arms.get("compared") or arms["winner"]  # a summary before "compared": winner
    between = f", {first} minus {arms['other']}" if first and arms.get("other") else ""
    return f"{arms['effect_measure']}{between}"


ALPHA_SAID_HEADER = "band or reason; note"
"""The header of the alpha block's last column: the band (or why the alpha has none),
then the mark of an interval on too few units."""


def _alpha_block(ws: Worksheet, row: int, analysis: Analysis, fmt: dict[str, Any],
                 decimals: Callable[..., Any]) -> int:
    """Alpha per measure with its interval, units, raters, level and band (and, beside
    the band, the mark of an interval on too few units); an alpha shown with the
    decimals that keep it in its band (0.79996 in "acceptable" is 0.79996, never
    0.800)."""
    ws.write_string(row, 0, "Krippendorff's alpha (95% bootstrap CI)", fmt["bold"])
    row += 1
    # the last column holds the band, or why there is none, then any mark on the
    # interval: its header says all three
    head = ["measure", "alpha", "95% CI low", "95% CI high", "units", "raters", "level",
            ALPHA_SAID_HEADER]
    for j, h in enumerate(head):
        ws.write_string(row, j, h, fmt["head"])
    bands = [b.label for b in analysis.study.plan.bands]
    for rec in analysis.summary["alpha"]:
        row += 1
        shade = min(bands.index(rec["band"]), 3) if rec["band"] in bands else None
        band_fmt = fmt["num"] if shade is None else fmt["bands"][shade]
        said = "; ".join(filter(None, (rec["band"] or rec.get("reason") or "",
                                       rec.get("note") or "")))  # the few-units mark
        _wrapped_row(ws, row, {0: analysis.study.rubric.named(str(rec["measure"])), 7: said},
                     fmt["wrap"])
        digits = decimals_for(rec["alpha"], band_bounds(analysis.study.plan)) or 12
        write_cell(ws, row, 1, rec["alpha"], band_fmt if digits == 3 else
                   decimals(digits, False, None if shade is None else BAND_COLOURS[shade]))
        write_cell(ws, row, 2, rec["ci_low"], fmt["num"])
        write_cell(ws, row, 3, rec["ci_high"], fmt["num"])
        write_cell(ws, row, 4, rec["n_units"], fmt["count"])
        write_cell(ws, row, 5, rec["n_raters"], fmt["count"])
        ws.write_string(row, 6, str(rec["level"]), fmt["centre"])
        if rec["band"]:
            ws.write_string(row, 7, said, band_fmt)
    return row + 2

def _reported_shown(figure: dict[str, Any]) -> tuple[int, str]:
    """The decimals a reported figure's value is shown with, and its target's text: the
    value on the side of its target and of its scale's bounds that its full value is
    on (Koo & Li's "excellent" is above 0.90, not at it)."""
    at_least, above = reading_bounds(figure["scale"])
    shown, goal = shown_against(figure["value"], figure["target"], bounds=at_least)
    beyond = decimals_for(figure["value"], at_least, above)
    return max(_decimals_shown(shown), 12 if beyond is None else beyond), goal


def _reported_block(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any],
                    names: dict[str, str], decimals: Callable[..., Any]) -> int:
    """ICC, pairwise and intra-rater kappa: each figure (its measure by the rubric's
    ``names``) with its interval, units (a pairwise mean over pairs resting on different
    numbers: the range, "30-36"), raters, target and reading, under a title that says
    they are not part of the decision; each value shown with the decimals that keep it on the
    side of its target and its scale's bounds that its full value is on."""
    figures = s.get("reported") or []
    if not figures:
        return row
    write_line(ws, row, "Other agreement figures the protocol names (reported, not part of "
               "the decision)", fmt["bold"])
    row += 1
    head = ["figure", "value", "95% CI low", "95% CI high", "units", "raters", "target",
            "reading"]
    for j, h in enumerate(head):
        ws.write_string(row, j, h, fmt["head"])
    for f in figures:
        row += 1
        digits, goal = _reported_shown(f)
        target = "none set" if f["target"] is None else \
            f"{goal}: {'met' if f['met'] else 'not met'}"
        reading = reading_said(f)
        reading += f"; {f['note']}" if f.get("note") else ""
        measure = names.get(f["measure"], f["measure"])
        _wrapped_row(ws, row, {0: f"{measure}: {f['figure']}", 7: reading}, fmt["wrap"])
        ws.write_string(row, 6, target, fmt["centre"])
        write_cell(ws, row, 1, f["value"], fmt["num"] if digits == 3 else
                   decimals(digits, False))
        for j, key in enumerate(("ci_low", "ci_high"), start=2):
            write_cell(ws, row, j, f[key], fmt["num"])
        for j, key in enumerate(("units", "raters"), start=4):
            write_cell(ws, row, j, f[key], fmt["count"])
        if f.get("units_range"):  # pairs resting on different numbers of units
            ws.write_string(row, 4, "{}-{}".format(*f["units_range"]), fmt["count"])
    return row + 2


def _headline_extras(ws: Worksheet, row: int, s: dict[str, Any], fmt: dict[str, Any]) -> int:
    """Short lines for the protocol-specific headlines (yield, acceptance, pilot...)."""
    lines = []
    if "yield" in s:
        counts = {a: c.get("n") for a, c in (s.get("yield_ci") or {}).items()}
        lines.append("yield per arm: " + ", ".join(
            f"{a} {'no items' if counts.get(a) == 0 else figure_text(True)(y)}"
            for a, y in s["yield"].items()))
    for f in s.get("fisher", []):
        # 001 with two or more owners: a p from their ratings pooled, marked as such
        pooled = f" ({f['pooled']})" if f.get("pooled") else ""
        lines.append(f"Fisher one-sided {f['comparison']}: {p_said(f['p'])}{pooled}")
    if "acceptance" in s:
        a = s["acceptance"]
        lines.append(f"accepted items: {a['n_accepted']} of {a['n_items']}")
    if "second_rater_selection" in s:
        lines.append(f"second-rater subset: {s['second_rater_selection']}")
    lines += review_lines(s)  # 003: refusals and gold disputes, as analyze prints them
    if "pilot" in s:
        lines.append(_pilot_line(s["pilot"]))
    lines += s.get("summary_lines", [])  # a protocol's own lines, in its words
    for line in lines:
        write_line(ws, row, line, fmt["wrap"])
        row += 1
    return row + (1 if lines else 0)


def _pilot_line(pilot: dict[str, Any]) -> str:
    """The pilot verdict and its critical failures; an INCOMPLETE one says what is open
    (a line saying only "INCOMPLETE (critical failures 0)" left the reader guessing)."""
    line = (f"pilot verdict: {pilot['pilot_verdict']} "
            f"(critical failures {pilot['critical_failures']}")
    possibly = pilot.get("items_possibly_critical", 0)
    if possibly:  # "critical failures 0" alone read as none, with one perhaps unscored
        line += (f", {possibly} more {'item' if possibly == 1 else 'items'} could be, "
                 "lacking a judge's score")
    if pilot["pilot_verdict"] == "INCOMPLETE":  # only what is open, never "0 items"
        deltas = sum((pilot.get("undefined_counts") or {}).values())
        items = pilot.get("items_without_trio", 0)
        parts = [_plural(deltas, "hypothesis delta") + " undefined" if deltas else "",
                 _plural(items, "item") + " without a complete trio" if items else ""]
        line += "".join(f"; {p}" if i == 0 else f", {p}"
                        for i, p in enumerate(filter(None, parts)))
    return line + ")"

