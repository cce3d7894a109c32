"""``sheetflow plan``: how many raters and items reach a target precision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..spec.model import MIN_RESAMPLES
from ..words import percent
from .common import EXIT_DATA, Enough, NonNegative, Output, command

# the fewest simulated studies per design: a median width, or a share of studies at
# 0.8, from fewer moves by a whole step when one study changes
MIN_SIMULATIONS = 20


def Amount() -> NonNegative:  # named as a type, as click.IntRange is
    """A cost: a finite number, 0 or more (a negative or nan cost made the cheapest
    design a nonsense one, in silence)."""
    return NonNegative("amount", "a number", "a cost of 0 or more")


def _usage(message: str) -> Exception:
    from ..errors import UsageError

    return UsageError(message)


def _ints(text: str | None, option: str) -> list[int] | None:
    """'2-6' or '10,25,50' (or a mix) to a list of ints; ``option`` names the option in
    a refusal (both --raters and --items read this way)."""
    if text is None:
        return None
    out: list[int] = []
    try:
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            if hi and int(hi) < int(lo):  # range() would give nothing, and the default ran
                raise _usage(f"{option} {part.strip()!r} runs backwards; give it low to "
                             f"high, like {int(hi)}-{int(lo)}")
            out += list(range(int(lo), int(hi) + 1)) if hi else [int(lo)]
    except ValueError:
        raise _usage(f"{option} {text!r} is not a list of whole numbers like 2-6 or "
                     "10,25,50") from None
    return out


def _floats(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise _usage(f"--shares {text!r}: give numbers separated by commas") from None


@command("plan")
@click.option("--statistic", type=click.Choice(["alpha", "fleiss_kappa", "cohen_kappa", "icc"]),
              help="What to plan (default: what the study's protocol decides on).")
@click.option("--method", type=click.Choice(["closed", "simulate"]),
              help="Closed form or simulation (default: closed where one exists).")
@click.option("--measure", help="Total or dimension id (default: the first total).")
@click.option("--expected", type=float,
              help="Anticipated value of the statistic, e.g. 0.75 (default: the study's "
                   "own collected ratings as a pilot once a unit in them has two "
                   "ratings, else 0.75).")
@click.option("--shares", help="Anticipated shares of the measure's values, comma-separated.")
@click.option("--pilot", type=click.Path(dir_okay=False, path_type=Path),
              help="Pilot ratings CSV (unit, rater, value) instead of --expected.")
@click.option("--width", type=float, help="Target: full 95% interval width at most W.")
@click.option("--above", type=float, help="Target: lower limit at or above this band edge.")
@click.option("--probability", type=float, default=0.8, show_default=True,
              help="With --above: the share of studies that must clear the edge.")
@click.option("--raters", "raters_text", help="Rater counts, e.g. 2-6 (default 2-6).")
@click.option("--items", "items_text", help="Item counts, e.g. 10,25,50,100,200.")
@click.option("--cost-rater", type=Amount(), default=0.0, help="Fixed cost per rater.")
@click.option("--cost-item", type=Amount(), default=0.0,
              help="Cost of one rater rating one item.")
@click.option("--simulations", default=100, show_default=True,
              type=Enough(MIN_SIMULATIONS, "a median width or a share of studies needs more"),
              help="Simulated studies per design.")
@click.option("--n-boot", default=500, show_default=True,
              type=Enough(MIN_RESAMPLES, "a 95% interval from fewer comes out narrow by "
                                         "construction"),
              help="Bootstrap resamples per simulated study.")
@click.option("--seed", type=click.IntRange(min=0), help="Seed (default: the plan's seed).")
@click.option("--assurance", type=float, help="ICC: plan with Zou (2012) at this assurance.")
@click.option("--record", is_flag=True,
              help="Write the chosen design to sizing.json (the spec hash covers it).")
def plan_command(out: Output, directory: Path, statistic: str | None, method: str | None,
                 measure: str | None,
                 expected: float | None, shares: str | None, pilot: Path | None,
                 width: float | None, above: float | None, probability: float,
                 raters_text: str | None, items_text: str | None, cost_rater: float,
                 cost_item: float, simulations: int, n_boot: int, seed: int | None,
                 assurance: float | None, record: bool) -> None:
    """Plan DIRECTORY's study: designs (raters x items) meeting a precision target.

    Writes out/plan.xlsx (designs and a chart of width against items). Exits 1 when
    no design of the grid meets the target. See docs/plan.md.

    Example: sheetflow plan my-study --expected 0.75
    """
    from ..collect.run_lock import study_lock
    from ..plan import Costs, Target, plan_study, record_plan
    from ..plan.record import check_recordable
    from ..plan.workbook import write_plan_workbook

    if record:  # refused before anything is computed or written
        check_recordable(directory)

    try:
        target = None if width is None and above is None else Target(width, above, probability)
    except ValueError as exc:
        raise _usage(str(exc)) from exc
    progress = out.progress("simulating designs")
    # the study lock: no collect replaces out/ratings.csv (a pilot) while plan reads it
    with study_lock(directory, "plan"):
        try:
            result = plan_study(
                directory, statistic=statistic, measure=measure, expected=expected,
                shares=_floats(shares), pilot=pilot, target=target,
                raters=_ints(raters_text, "--raters"), items=_ints(items_text, "--items"),
                costs=Costs(cost_rater, cost_item), simulations=simulations, n_boot=n_boot,
                seed=seed, assurance=assurance, method=method, progress=progress)
        finally:
            progress.close()
        workbook = write_plan_workbook(result, directory / "out" / "plan.xlsx")
        recorded = record_plan(directory, result) if record and result.chosen() else None
    _echo(out, result, workbook, recorded)
    none = result.chosen() is None
    problem = [f"{directory}: no design of the grid meets the target"] if none else []
    out.json({"ok": not none, **result.to_dict(), "outputs": [str(workbook)],
              "recorded": str(recorded) if recorded else None,
              **({"exit_code": EXIT_DATA, "errors": problem} if none else {})})
    if none:
        click.get_current_context().exit(EXIT_DATA)


def _echo(out: Output, result: Any, workbook: Path, recorded: Path | None) -> None:
    from ..plan.sim_error import figure_text, resting_text

    weighted = f", {result.weighting}, as analyze reports it" if result.weighting else ""
    out.say(f"statistic  {result.measure} ({result.level}){weighted}")
    out.say(f"source     {result.source}")
    # only alpha's simulated intervals are bootstrapped (a kappa's is normal-theory)
    resamples = f", {result.n_boot} bootstrap resamples" if result.statistic == "alpha" \
        else ""
    out.say(f"method     {result.method}"
            + (f", {result.simulations} simulated studies per design{resamples}, "
               f"seed {result.seed}" if result.simulations else ""))
    out.say(f"target     {result.target.describe()}")
    for line in _table_lines(result):
        out.say(line)
    out.say(f"wrote {workbook}")
    if recorded:
        out.say(f"recorded   {recorded} (the spec hash now covers this design)")
    for note in result.notes:
        out.say(f"note: {note}")
    best = result.chosen()
    if best is None:
        more = "" if result.raters_fixed else " or raters (--raters)"  # else refused
        out.headline(f"no design of the grid meets the target: try more items (--items){more}",
                     fg="yellow")
    else:
        figures = figure_text(result.target, best, result.items_word)
        if result.target.edge is not None:  # the width beside the share that decides
            resting = resting_text(best)
            figures = (f"expected width {best['expected_width']:.3f}"
                       f"{' (' + resting + ')' if resting else ''}, {figures}")
        close = ", within simulation error of the target" if best["within_error"] else ""
        # a design with another item count than the protocol fixes is not the protocol's
        departs = f" ({best['note']}: not the protocol's design)" if best.get("note") else ""
        out.headline(f"cheapest   {result.who(int(best['raters']))} x "
                     f"{int(best['items'])} {result.items_word}, {figures}, "
                     f"{result.costs.unit} {best['cost']:g}{close}{departs}")


def _table_lines(result: Any) -> list[str]:
    """The design table: one line per design under a header of words, each column as
    wide as its header; a paired plan shows its rated responses, which the ratings
    per dimension count, and a second-rater plan the items every rater rates."""
    t = result.table
    cols = [(result.raters_word, "raters", "d"), (result.items_word.split()[-1], "items", "d")]
    if "subset" in t:  # second raters rate only a subset: agreement is computed on it
        cols.append(("rated by all", "subset", "d"))
    if result.units_per_item > 1:
        cols.append(("responses", "units", "d"))
    cols.append(("width", "expected_width", ".3f"))
    if result.simulations:  # each simulated figure with its Monte Carlo error
        cols.append(("width SE", "width_se", ".2g"))
        cols += _resting_columns(result)
        if result.target.edge is not None:
            cols += [("clearing", "p_lower", "%"), ("SE", "p_lower_se", "%")]
    cols += [(result.costs.unit, "cost", "g"), ("meets", "meets", "")]
    if result.simulations:
        cols.append(("within error", "within_error", ""))
    if "items_needed" in t:
        cols.append((f"({cols[1][0]} needed)", "items_needed", "()"))
    if "note" in t and t["note"].astype(bool).any():  # a count the protocol does not fix
        cols.append(("note", "note", "s"))
    rows = [[_of(row, name, form[3:]) if form.startswith("of:") else _cell(row[name], form)
             for _, name, form in cols] for row in t.to_dict("records")]
    sizes = [max(len(head), *(len(r[c]) for r in rows)) for c, (head, _, _) in enumerate(cols)]
    # numbers align right, words (the note) left
    just = [str.ljust if form == "s" else str.rjust for _, _, form in cols]
    lines = ["  " + "  ".join(j(h, w) for (h, _, _), j, w in zip(cols, just, sizes,
                                                                strict=True)).rstrip()]
    for cells, cheapest in zip(rows, t["cheapest"], strict=True):
        line = "  " + "  ".join(j(c, w) for c, j, w in zip(cells, just, sizes, strict=True))
        lines.append(line.rstrip() + ("  <- cheapest" if cheapest else ""))
    return lines


def _resting_columns(result: Any) -> list[tuple[str, str, str]]:
    """Where a design's width rests on fewer than all its simulated studies or
    bootstrap resamples (those without variation have no alpha): how many it rests on,
    "21/40" beside the width; no columns where every design rests on all."""
    from ..plan.sim_error import short_of_all

    t = result.table
    if "studies_used" not in t or not any(short_of_all(r) for r in t.to_dict("records")):
        return []
    cols = [("with interval", "studies_used", "of:simulations")]
    if t["resamples_total"].notna().any():
        cols.append(("resamples used", "resamples_used", "of:resamples_total"))
    return cols


def _cell(value: Any, form: str) -> str:
    """One table cell: yes/no for ``meets`` and ``within_error``, a share as a
    percentage, a count (in brackets: the items needed), else the number in its
    format."""
    if form == "":
        return "yes" if value else "no"
    if form == "s":
        return str(value)
    if form == "%":
        return percent(value)
    if form in ("d", "()"):
        return f"({int(value)})" if form == "()" else str(int(value))
    return format(value, form)


def _of(row: dict[str, Any], name: str, whole: str) -> str:
    """A count of its whole: "21/40"."""
    return f"{int(row[name])}/{int(row[whole])}"


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(plan_command)
