"""``out/plan.xlsx``: the plan in words, every design, a chart of width against items.

Sheets: "Plan" (what is planned, the target, the notes and one row per design, the
cheapest marked), "Chart" (a chart sheet: expected width against items, one line per
rater count, the target width dashed), "Chart data" (the chart's figures) and
"Methods" (the conventions behind the figures, then the References: in full, each
source the text cites, one a row).

Legible on paper, by the print setup every workbook shares
(:mod:`sheetflow.workbook.printing`): every sheet fits the page width at 70% or more
(the design table's columns are chosen to fit), in portrait when its columns fit a
portrait page and in landscape otherwise; the design table's header row repeats on
every page; long texts wrap, with row heights set for them (LibreOffice does not grow
rows of merged cells); the chart is alone on its chart sheet's page. Booleans read
Yes/No, counts are whole numbers, shares are percentages, headers are words.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import xlsxwriter

from ..citations import (
    FLEISS_COHEN_EVERITT_1969,
    GWET_2014,
    HAYES_KRIPPENDORFF_2007,
    UNIT_BOOTSTRAP,
    ZAPF_2016,
    cited_entries,
)
from ..errors import close_workbook
from ..staging import OutputSet, remove_own_partials
from ..workbook.app_props import SheetflowWorkbook
from ..workbook.printing import MARGINS, row_points, set_print
from .design import PlanResult
from .sim_error import METHOD as SIMULATION_ERROR
from .sim_error import no_interval_text, short_of_all

_NAMES = {"alpha": "Krippendorff's alpha", "fleiss_kappa": "Fleiss' kappa",
          "cohen_kappa": "Cohen's kappa", "icc": "ICC"}

_METHODS = (
    ("Expected width", "The full width (upper minus lower limit) of the 95% interval a "
     "design can expect. Simulated plans: the median over the design's simulated studies "
     "(the 10th and 90th percentiles beside it). Closed forms: the interval of the "
     "anticipated value at that size (kappa: Donner & Rotondi 2010 as R's kappaSize; the "
     "ICC: Bonett 2002)."),
    ("ICC, few items", "Bonett's width is a large-sample approximation. Where it is more "
     "than 10% from the exact expected width of the ICC's exact-F interval (McGraw & Wong "
     "1996, consistency form, averaged over the distribution of its F ratio), as with few "
     "items, a design's width is the exact one (its method says so), and the items "
     "needed are those at which that width meets the target."),
    ("No interval", "A" + no_interval_text()[1:] + " Where any study has no "
     "interval, the table says how many studies of each design have one, and how many "
     "bootstrap resamples those intervals rest on."),
    ("Needed", "Closed forms: the fewest items that meet the target with that many raters "
     "(a width: the interval's formula; a lower limit: the power of the test of the edge, "
     "Donner & Eliasziw 1992 for kappa, Walter, Eliasziw & Donner 1998 for the ICC; with "
     "an assurance, Zou 2012; the ICC's width with 2 raters at 0.7 or more adds Bonett's "
     "correction, 5 x the ICC, as R's presize). A design meets the target when its items "
     "reach it."),
    ("Model", "Simulated plans assume agreement so: each unit has a true value drawn from "
     "the value shares; each rater reports it with probability sqrt(alpha), otherwise an "
     "independent draw from the shares, so the population alpha (and kappa) is the "
     "anticipated value."),
    ("Pilot", "A pilot is resampled: units with replacement, and within each unit as many "
     "of its values as the design has raters, without replacement. When the grid has more "
     "raters than the pilot's units hold values, every design is drawn instead from a "
     "model fitted to the pilot, so all designs are compared by one method: a unit's true "
     "value is drawn from the pilot's value shares; each rater reports it, or else a value "
     "the pilot's raters paired with it (the pilot's coincidences), as often as makes the "
     "model's alpha the pilot's."),
    ("Internal team", "Where the decision's alpha counts the internal team's totals as "
     "one more rater beside the validators (protocol 000), the internal team is in every "
     "design: a design of k validators is simulated with k + 1 raters, a pilot's units "
     "keeping the team's total in every resampled unit and resampling the validators' "
     "values; the designs, costs and ratings per dimension count the validators."),
    ("Interval", "Each simulated study's interval is the one analyze reports: alpha's "
     f"percentile interval of its units resampled, {UNIT_BOOTSTRAP}; Fleiss' kappa "
     "with the non-null variance of Gwet "
     "(2014); Cohen's kappa's normal-theory interval with the non-null variance of "
     "Fleiss, Cohen & Everitt (1969)."),
    ("Weighted kappa", "Cohen's kappa is sized as analyze reports it: unweighted on a "
     "nominal measure; on an ordered one (ordinal, interval or ratio) quadratic-weighted, "
     "on the ranks of labelled values and on the numbers of numeric ones, and then always "
     "by simulation, since the closed forms of Donner & Rotondi (2010) are for unweighted "
     "kappa. Under the model, the weighted kappa is the anticipated value too. Fleiss' "
     "kappa, which analyze computes unweighted, is sized unweighted."),
    ("Clearing the edge", "The share of simulated studies whose lower limit is at or above "
     "the target's edge (lower-bound targets only)."),
    SIMULATION_ERROR,
    ("Cost", "raters x cost per rater + rated items x cost per item, the rated items "
     "being raters x items (where second raters rate only a subset, the primary raters' "
     "items plus the second raters' subset); without costs, the ratings per dimension, "
     "which each dimension of the measure receives: the rated items, two rated responses "
     "per case in a paired study."),
    ("Second-rater subset", "Where second raters rate only a share of the items, agreement "
     "is computed on the items every rater rated, so each design is sized on its subset: "
     "as the lock draws it for the study's own items, else the fraction of the items "
     "rounded up (the fewest a draw can take)."),
    ("Seed", "Each design's studies are drawn from numpy's default_rng([seed, raters, "
     "units]), the raters being those simulated (with the internal team where it rates, "
     "one more than the design's count) and the units those rated (two per case in a "
     "paired study), so a design's result does not depend on the rest of the grid; "
     "alpha's bootstrap resamples from default_rng([seed, units, resamples, 1]), shared "
     "by every design of that many units."),
)

REFERENCES = (
    "Donner, A., & Rotondi, M. A. (2010). Sample size requirements for interval estimation "
    "of the kappa statistic for interobserver agreement studies with a binary outcome and "
    "multiple raters. The International Journal of Biostatistics 6(1), article 31.",
    "Bonett, D. G. (2002). Sample size requirements for estimating intraclass correlations "
    "with desired precision. Statistics in Medicine 21(9), 1331-1335.",
    "Donner, A., & Eliasziw, M. (1992). A goodness-of-fit approach to inference procedures "
    "for the kappa statistic: confidence interval construction, significance-testing and "
    "sample size estimation. Statistics in Medicine 11(11), 1511-1519.",
    "McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass "
    "correlation coefficients. Psychological Methods 1(1), 30-46.",
    "Walter, S. D., Eliasziw, M., & Donner, A. (1998). Sample size and optimal designs for "
    "reliability studies. Statistics in Medicine 17(1), 101-110.",
    "Zou, G. Y. (2012). Sample size formulas for estimating intraclass correlation "
    "coefficients with precision and assurance. Statistics in Medicine 31(29), 3972-3981.",
    GWET_2014,
    FLEISS_COHEN_EVERITT_1969,
    ZAPF_2016,
    HAYES_KRIPPENDORFF_2007,
)
"""The sources the Methods text may cite, in full; the sheet lists those it cites."""


def _references() -> list[str]:
    """The entries of :data:`REFERENCES` the Methods text cites, in their order."""
    return cited_entries((text for _, text in _METHODS), REFERENCES)


def write_plan_workbook(result: PlanResult, path: str | Path) -> Path:
    """Write the plan workbook to ``path`` (whole or not at all); the path.

    See the module notes for its sheets and print setup.
    """
    path = Path(path)
    remove_own_partials(path)  # what a plan killed before its commit left beside it
    with OutputSet(label="plan", what="workbook") as outputs:
        wb = SheetflowWorkbook(str(outputs.stage(path)))
        formats = _formats(wb)
        _plan_sheet(wb, formats, result)
        _chart(wb, formats, result)
        _methods_sheet(wb, formats)
        close_workbook(wb, path)
    return path


def _formats(wb: xlsxwriter.Workbook) -> dict[str, Any]:
    base = {"valign": "top"}
    spec = {
        "label": {"bold": True}, "text": {}, "wrap": {"text_wrap": True},
        "yes_no": {"align": "center"},
        "head": {"bold": True, "text_wrap": True, "bottom": 1},
        "title": {"bold": True, "font_size": 14},
        "count": {"num_format": "0"}, "width": {"num_format": "0.000"},
        "share": {"num_format": "0%"}, "cost": {"num_format": "#,##0.##"},
        # a simulation SE is small beside its figure: shown to two more places
        "se": {"num_format": "0.00000"}, "share_se": {"num_format": "0.0%"},
    }
    out = {}
    for name, extra in spec.items():
        out[name] = wb.add_format({**base, **extra})
        out[name + "+"] = wb.add_format({**base, **extra, "bold": True, "bg_color": "#C6EFCE"})
    return out


def _columns(result: PlanResult) -> list[tuple[str, str, str, float]]:
    """(header, table column, format, width) of the design table, only the columns this
    plan fills."""
    t, simulated = result.table, result.simulations > 0
    # beside the simulation's error columns the others give a character or two: the
    # page holds them all at 70%, and the method keeps its one line
    narrow = 1 if simulated else 0
    cost = result.costs.unit.capitalize()  # "Ratings per dimension" without prices
    # where the internal team rates in every design, the header says the count is beside it
    raters_head = (f"{result.raters_word.capitalize()} (plus the internal team)"
                   if result.team else result.raters_word.capitalize())
    cols = [(raters_head, "raters", "count", (11 if result.team else 9) - narrow),
            (result.items_word.capitalize(), "items", "count", 10 - 2 * narrow)]
    if "subset" in t:  # the second-rater subset, on which agreement is computed
        cols.append(("Rated by every rater", "subset", "count", 10))
    if result.units_per_item > 1:
        cols.append(("Rated responses", "units", "count", 10 - narrow))
    cols.append(("Expected width", "expected_width", "width", 9 - narrow))
    if simulated and any(short_of_all(r) for r in t.to_dict("records")):
        # studies without an interval (infinitely wide) or resamples without an alpha:
        # what the width rests on
        cols.append(("Simulated studies with an interval", "studies_used", "count", 10))
        if t["resamples_total"].notna().any():
            cols += [("Bootstrap resamples used", "resamples_used", "count", 10),
                     ("Bootstrap resamples in all", "resamples_total", "count", 10)]
    if simulated:
        cols += [("Width, simulation SE", "width_se", "se", 10),
                 ("Width, 10th percentile", "width_q10", "width", 9),
                 ("Width, 90th percentile", "width_q90", "width", 9)]
    if result.target.edge is not None and simulated:
        cols += [("Studies clearing the edge", "p_lower", "share", 10),
                 ("Clearing, simulation SE", "p_lower_se", "share_se", 10)]
    if simulated:
        cols.append(("Within simulation error of the target", "within_error", "yes_no", 10))
    if "items_needed" in t:
        cols.append((f"{result.items_word.capitalize()} needed", "items_needed", "count", 10))
    cols += [("Meets the target", "meets", "yes_no", 9 - narrow), (cost, "cost", "cost", 10),
             ("Cheapest", "cheapest", "yes_no", 9 - narrow)]
    if "note" in t and t["note"].astype(bool).any():  # a count the protocol does not fix
        # both wrap, their rows as tall as they need: the page still holds every column
        return [*cols, ("Method", "method", "wrap", 10), ("Note", "note", "wrap", 10)]
    return [*cols, ("Method", "method", "wrap", 19)]


def _plan_sheet(wb: xlsxwriter.Workbook, f: dict[str, Any], result: PlanResult) -> None:
    ws = wb.add_worksheet("Plan")
    cols = _columns(result)
    widths = [w for *_, w in cols]
    for c, w in enumerate(widths):
        ws.set_column(c, c, w)
    last = len(cols) - 1
    what = _what(result)
    ws.write(0, 0, f"Plan: {what}", f["title"])
    weighted = f", {result.weighting}" if result.weighting else ""
    head = [("Planned", f"{what}, {result.level} level{weighted}"), ("Method", result.method),
            ("Anticipated", result.source), ("Target", result.target.describe())]
    if result.simulations:
        # only alpha's simulated intervals are bootstrapped (a kappa's is normal-theory)
        resamples = f", {result.n_boot} bootstrap resamples each" \
            if result.statistic == "alpha" else ""
        head += [("Simulated studies", f"{result.simulations} per design{resamples}"),
                 ("Seed", str(result.seed))]
    label_cols = 2  # labels span the first two columns
    row = 2
    for label, text in head:
        ws.merge_range(row, 0, row, label_cols - 1, label, f["label"])
        ws.merge_range(row, label_cols, row, last, text, f["wrap"])
        ws.set_row(row, _height(text, sum(widths[label_cols:])))
        row += 1
    row += 1
    for note in result.notes:
        ws.merge_range(row, 0, row, last, note, f["wrap"])
        ws.set_row(row, _height(note, sum(widths)))
        row += 1
    row += 1
    header_row = row
    for c, (header, *_rest) in enumerate(cols):
        ws.write(row, c, header, f["head"])
    ws.set_row(row, max(_height(h, w) for h, _, _, w in cols))
    for rec in result.table.to_dict("records"):
        row += 1
        mark = "+" if rec["cheapest"] else ""
        for c, (_, name, kind, _w) in enumerate(cols):
            ws.write(row, c, *_cell(rec.get(name), name, kind, f, mark))
        wrapped = [(str(rec.get(name) or ""), w) for _, name, kind, w in cols if kind == "wrap"]
        ws.set_row(row, row_points(wrapped))  # a note or method may wrap to more lines
    ws.freeze_panes(header_row + 1, 0)
    set_print(ws, widths, header_rows=header_row + 1, header_from=header_row)


def _what(result: PlanResult) -> str:
    """The statistic and measure in words: "Cohen's kappa on 'keep'"."""
    measure = result.measure.split(" ", 1)[-1]
    return f"{_NAMES.get(result.statistic, result.statistic)} on '{measure}'"


def _cell(value: Any, name: str, kind: str, f: dict[str, Any], mark: str) -> tuple:
    """What one table cell shows: Yes/No for booleans, "infinite" for an infinite width,
    blank for an undefined number."""
    if name in ("meets", "cheapest", "within_error"):
        return ("Yes" if value else "No", f["yes_no" + mark])
    if isinstance(value, float) and value == math.inf:  # no interval in enough studies
        return ("infinite", f["text" + mark])
    if isinstance(value, float) and not math.isfinite(value):
        return ("", f["text" + mark])
    if kind == "count":
        return (int(value), f["count" + mark])
    return (value, f[kind + mark])


def _chart(wb: xlsxwriter.Workbook, f: dict[str, Any], result: PlanResult) -> None:
    """Width against items per rater count: the figures on "Chart data", the chart on a
    chart sheet of its own (one page, never split)."""
    sheet = wb.add_chartsheet("Chart")
    ws = wb.add_worksheet("Chart data")
    pivot = result.table.pivot_table(index="items", columns="raters", values="expected_width")
    target = result.target.width
    headers = [result.items_word.capitalize()] + [
        f"Expected width, {result.who(int(r))}" for r in pivot.columns]
    if target is not None:
        headers.append("Target width")
    widths = [10] + [12] * (len(headers) - 1)
    for c, (h, w) in enumerate(zip(headers, widths, strict=True)):
        ws.set_column(c, c, w)
        ws.write(0, c, h, f["head"])
    ws.set_row(0, max(_height(h, w) for h, w in zip(headers, widths, strict=True)))
    for i, (n, values) in enumerate(pivot.iterrows(), start=1):
        ws.write(i, 0, int(n), f["count"])
        for c, v in enumerate(values, start=1):
            if math.isfinite(v):  # an infinite width (no interval) is off the chart
                ws.write(i, c, float(v), f["width"])
        if target is not None:
            ws.write(i, len(headers) - 1, target, f["width"])
    set_print(ws, widths, header_rows=1)
    last = len(pivot)
    chart = wb.add_chart({"type": "scatter", "subtype": "straight_with_markers"})
    for c in range(1, len(headers)):
        series = {"name": ["Chart data", 0, c], "categories": ["Chart data", 1, 0, last, 0],
                  "values": ["Chart data", 1, c, last, c]}
        if target is not None and c == len(headers) - 1:
            series.update({"line": {"dash_type": "dash"}, "marker": {"type": "none"}})
        chart.add_series(series)
    chart.set_title({"name": f"Expected 95% interval width: {_what(result)}"})
    chart.set_x_axis({"name": f"{result.items_word} (log scale)", "log_base": 10})
    chart.set_y_axis({"name": "expected width", "min": 0})
    chart.set_legend({"position": "bottom"})
    sheet.set_chart(chart)
    sheet.set_landscape()
    sheet.set_margins(**MARGINS)


def _methods_sheet(wb: xlsxwriter.Workbook, f: dict[str, Any]) -> None:
    ws = wb.add_worksheet("Methods")
    widths = [18, 58]
    for c, w in enumerate(widths):
        ws.set_column(c, c, w)
    ws.write(0, 0, "Topic", f["head"])
    ws.write(0, 1, "What the figures mean", f["head"])
    references = _references()
    rows = [*_METHODS, ("References", references[0]), *(("", r) for r in references[1:])]
    for i, (topic, text) in enumerate(rows, start=1):
        ws.write(i, 0, topic, f["label"])
        ws.write(i, 1, text, f["wrap"])
        # prose in the regular face: measured letter by letter, so no row is a line
        # taller than its text (every character counted as a digit over-counts)
        ws.set_row(i, row_points([(text, widths[1])], proportional=True))
    set_print(ws, widths, header_rows=1)


def _height(text: str, width: float) -> float:
    """Points a row needs for ``text`` wrapped in ``width`` characters."""
    return row_points([(text, width)])
