"""``out/plan.xlsx``: the notes, every design, and a chart of width against items."""

from __future__ import annotations

from pathlib import Path

import xlsxwriter

from ..errors import close_workbook
from ..staging import OutputSet
from .design import PlanResult

_METHODS = (
    ("expected width", "The full width (upper minus lower) of the 95% interval a design can "
     "expect: the median over its simulated studies (10th and 90th percentiles in "
     "width_q10, width_q90), or Bonett's (2002) formula for the ICC."),
    ("model", "Assumed agreement: each unit has a true value drawn from the value shares; "
     "each rater reports it with probability sqrt(alpha), otherwise an independent draw "
     "from the shares, so the population alpha (and kappa) is the anticipated value."),
    ("pilot", "A pilot is resampled: units with replacement, and within each unit as many "
     "of its values as the design has raters, without replacement; more raters than the "
     "pilot holds are drawn from the model fitted to the pilot."),
    ("interval", "Each simulated study's interval is the one analyze reports: alpha's "
     "percentile unit bootstrap; Fleiss' kappa with Gwet's non-null variance; Cohen's "
     "kappa's normal-theory interval."),
    ("p_lower", "The share of simulated studies whose lower limit is at or above the "
     "target's edge (lower-bound targets only)."),
    ("cost", "raters x (cost per rater + items x cost per item); without costs, the number "
     "of ratings (raters x items)."),
    ("seed", "Each design's studies are drawn from numpy's default_rng([seed, raters, "
     "units]), so a design's result does not depend on the rest of the grid."),
)
_COLUMNS = ("raters", "items", "units", "expected_width", "width_q10", "width_q90",
            "p_lower", "meets", "cost", "cheapest", "method")


def write_plan_workbook(result: PlanResult, path: str | Path) -> Path:
    """Write the plan workbook to ``path`` (whole or not at all); the path.

    Sheet "Plan": the measure, source, target, notes and one row per design (the
    cheapest design meeting the target marked). Sheet "Chart": expected width against
    items, one line per rater count, with the target width as a dashed line. Sheet
    "Methods": the conventions behind the figures.
    """
    path = Path(path)
    with OutputSet() as outputs:
        wb = xlsxwriter.Workbook(str(outputs.stage(path)))
        bold = wb.add_format({"bold": True})
        num = wb.add_format({"num_format": "0.000"})
        mark = wb.add_format({"bold": True, "bg_color": "#C6EFCE"})
        ws = wb.add_worksheet("Plan")
        head = [("measure", result.measure), ("level", result.level),
                ("method", result.method), ("source", result.source),
                ("target", result.target.describe()),
                ("simulations per design", result.simulations), ("seed", result.seed)]
        for i, (k, v) in enumerate(head):
            ws.write(i, 0, k, bold)
            ws.write(i, 1, v)
        row = len(head) + 1
        for note in result.notes:
            ws.write(row, 0, note)
            row += 1
        row += 1

        table = result.table
        for c, name in enumerate(_COLUMNS):
            ws.write(row, c, result.costs.unit if name == "cost" else name, bold)
        for rec in table.to_dict("records"):
            row += 1
            for c, name in enumerate(_COLUMNS):
                value = rec.get(name)
                if isinstance(value, float) and value != value:  # NaN: leave blank
                    continue
                fmt = mark if rec["cheapest"] else (num if isinstance(value, float) else None)
                ws.write(row, c, bool(value) if name in ("meets", "cheapest") else value, fmt)
        ws.set_column(0, 0, 14)
        _chart(wb, result)
        methods = wb.add_worksheet("Methods")
        methods.set_column(0, 0, 16)
        methods.set_column(1, 1, 110, wb.add_format({"text_wrap": True, "valign": "top"}))
        for i, (topic, text) in enumerate(_METHODS):
            methods.write(i, 0, topic, bold)
            methods.write(i, 1, text)
        close_workbook(wb, path)
    return path


def _chart(wb: xlsxwriter.Workbook, result: PlanResult) -> None:
    """Width against items per rater count, from a small pivot on its own sheet."""
    ws = wb.add_worksheet("Chart")
    pivot = result.table.pivot_table(index="items", columns="raters", values="expected_width")
    ws.write(0, 0, "items")
    for c, r in enumerate(pivot.columns, start=1):
        ws.write(0, c, f"{r} raters")
    target = result.target.width
    if target is not None:
        ws.write(0, len(pivot.columns) + 1, "target width")
    for i, (n, values) in enumerate(pivot.iterrows(), start=1):
        ws.write(i, 0, int(n))
        for c, v in enumerate(values, start=1):
            if v == v:
                ws.write(i, c, float(v))
        if target is not None:
            ws.write(i, len(pivot.columns) + 1, target)
    last = len(pivot)
    chart = wb.add_chart({"type": "scatter", "subtype": "straight_with_markers"})
    for c in range(1, len(pivot.columns) + 1 + (target is not None)):
        series = {"name": ["Chart", 0, c], "categories": ["Chart", 1, 0, last, 0],
                  "values": ["Chart", 1, c, last, c]}
        if c == len(pivot.columns) + 1:
            series.update({"line": {"dash_type": "dash"}, "marker": {"type": "none"}})
        chart.add_series(series)
    chart.set_title({"name": f"Expected 95% interval width of {result.measure}"})
    chart.set_x_axis({"name": "items (cases)", "log_base": 10})
    chart.set_y_axis({"name": "expected width", "min": 0})
    chart.set_size({"width": 720, "height": 420})
    ws.insert_chart(1, len(pivot.columns) + 3, chart)
