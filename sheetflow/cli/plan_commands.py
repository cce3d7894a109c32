"""``sheetflow plan``: how many raters and items reach a target precision."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import UsageError
from . import EXIT_DATA, reports_errors


def _ints(text: str | None) -> list[int] | None:
    """'2-6' or '10,25,50' (or a mix) to a list of ints."""
    if text is None:
        return None
    out: list[int] = []
    try:
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    except ValueError:
        raise UsageError(f"{text!r} is not a list of whole numbers like 2-6 or 10,25,50") \
            from None
    return out


def _floats(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise UsageError(f"--shares {text!r}: give numbers separated by commas") from None


@click.command("plan")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--statistic", type=click.Choice(["alpha", "icc"]), default="alpha",
              show_default=True, help="Krippendorff's alpha (simulated) or the ICC (Bonett).")
@click.option("--measure", help="Total or dimension id (default: the first total).")
@click.option("--expected", type=float, help="Anticipated alpha or ICC, e.g. 0.75.")
@click.option("--shares", help="Anticipated shares of the measure's values, comma-separated.")
@click.option("--pilot", type=click.Path(dir_okay=False, path_type=Path),
              help="Pilot ratings CSV (unit, rater, value) instead of --expected.")
@click.option("--width", type=float, help="Target: full 95% interval width at most W.")
@click.option("--above", type=float, help="Target: lower limit at or above this band edge.")
@click.option("--probability", type=float, default=0.8, show_default=True,
              help="With --above: the share of studies that must clear the edge.")
@click.option("--raters", "raters_text", help="Rater counts, e.g. 2-6 (default 2-6).")
@click.option("--items", "items_text", help="Item counts, e.g. 10,25,50,100,200.")
@click.option("--cost-rater", type=float, default=0.0, help="Fixed cost per rater.")
@click.option("--cost-item", type=float, default=0.0, help="Cost of one rater rating one item.")
@click.option("--simulations", type=click.IntRange(1), default=100, show_default=True)
@click.option("--n-boot", type=click.IntRange(1), default=500, show_default=True,
              help="Bootstrap resamples per simulated study.")
@click.option("--seed", type=int, help="Seed (default: the plan's seed).")
@click.option("--assurance", type=float, help="ICC: plan with Zou (2012) at this assurance.")
@click.option("--record", is_flag=True,
              help="Write the chosen design to sizing.json (the spec hash covers it).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@reports_errors
def plan_command(directory: Path, statistic: str, measure: str | None,
                 expected: float | None, shares: str | None, pilot: Path | None,
                 width: float | None, above: float | None, probability: float,
                 raters_text: str | None, items_text: str | None, cost_rater: float,
                 cost_item: float, simulations: int, n_boot: int, seed: int | None,
                 assurance: float | None, record: bool, as_json: bool) -> None:
    """Plan DIRECTORY's study: designs (raters x items) meeting a precision target.

    Writes out/plan.xlsx (designs and a chart of width against items). Exits 1 when
    no design of the grid meets the target.
    """
    from ..plan import Costs, Target, plan_study, record_plan
    from ..plan.workbook import write_plan_workbook

    try:
        target = None if width is None and above is None else Target(width, above, probability)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    kwargs: dict[str, Any] = dict(
        statistic=statistic, measure=measure, expected=expected, shares=_floats(shares),
        pilot=pilot, target=target, raters=_ints(raters_text), items=_ints(items_text),
        costs=Costs(cost_rater, cost_item), simulations=simulations, n_boot=n_boot,
        seed=seed, assurance=assurance)
    if as_json:
        result = plan_study(directory, **kwargs)
    else:
        with click.progressbar(length=1, label="simulating designs", file=sys.stderr) as bar:
            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)
            result = plan_study(directory, progress=progress, **kwargs)
    workbook = write_plan_workbook(result, directory / "out" / "plan.xlsx")
    recorded = record_plan(directory, result) if record and result.chosen() else None
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        _echo(result, workbook, recorded)
    if result.chosen() is None:
        click.get_current_context().exit(EXIT_DATA)


def _echo(result: Any, workbook: Path, recorded: Path | None) -> None:
    click.echo(f"measure    {result.measure} ({result.level})")
    click.echo(f"source     {result.source}")
    click.echo(f"method     {result.method}"
               + (f", {result.simulations} simulated studies per design, "
                  f"{result.n_boot} bootstrap resamples, seed {result.seed}"
                  if result.simulations else ""))
    click.echo(f"target     {result.target.describe()}")
    click.echo(f"  raters  items  width   {result.costs.unit:>8}  meets")
    for row in result.table.to_dict("records"):
        flag = "yes" if row["meets"] else "no"
        star = "  <- cheapest" if row["cheapest"] else ""
        click.echo(f"  {row['raters']:6d} {row['items']:6d}  {row['expected_width']:.3f} "
                   f"{row['cost']:9g}  {flag}{star}")
    click.echo(f"wrote {workbook}")
    if recorded:
        click.echo(f"recorded   {recorded} (the spec hash now covers this design)")
    for note in result.notes:
        click.echo(f"note: {note}")
    best = result.chosen()
    if best is None:
        click.echo("no design of the grid meets the target: try more items (--items) or "
                   "raters (--raters)")
    else:
        click.echo(f"cheapest   {int(best['raters'])} raters x {int(best['items'])} items, "
                   f"expected width {best['expected_width']:.3f}, "
                   f"{result.costs.unit} {best['cost']:g}")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(plan_command)
