"""What a simulated plan's figures are worth: their Monte Carlo error, in words.

A simulated design's expected width is the median of ``simulations`` studies and its
share clearing an edge a proportion of them, so each carries a simulation standard
error (:func:`~.simulate.median_se`, :func:`~.simulate.share_se`). A design whose
figure lies less than :data:`~.design.SE_MULTIPLE` standard errors from the target is
within simulation error of it: the plan still applies its rule (median width at most
the target, share at least the probability) but says that the simulation does not
settle it, and never calls the recommended design better than a cheaper one whose
shortfall is within simulation error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..spec.model import MIN_RESAMPLES
from ..words import counted, percent
from .design import SE_MULTIPLE, PlanResult, Target

__all__ = ["METHOD", "closed_edge_text", "figure_text", "left_out_notes", "no_interval_text",
           "resting_text", "short_of_all", "simulation_error_notes", "target_error_text",
           "width_text"]

METHOD = (
    "Simulation error",
    "A simulated figure is shown with its Monte Carlo standard error (SE): for the "
    "share of studies clearing the edge, the binomial sqrt(p (1 - p) / n) over the n "
    "simulated studies; for the expected (median) width, the median's order-statistic "
    "95% interval (ranks n/2 -/+ 1.96 sqrt(n)/2) divided by 2 x 1.96, which needs no "
    "assumption on the widths' distribution. A design whose figure lies less than "
    f"{SE_MULTIPLE:g} SEs from the target is marked within simulation error: it meets "
    "or misses the target by the rule, but the simulation does not settle which, and no "
    "design is called better than another on such a difference (more simulated "
    "studies, --simulations, narrow it). Closed forms have no simulation error.")
"""The Methods entry on the simulation error: (topic, text)."""


def figure_text(target: Target, row: dict[str, Any], items_word: str = "items") -> str:
    """A design's simulated figure with its SE: "expected width 0.098 (simulation SE
    0.0041)", or "clears the edge in 85.0% of studies (simulation SE 3.6%)"; without an
    SE (a closed form) the figure alone, and for a closed form's lower bound, which
    simulates nothing, what its formula gives (:func:`closed_edge_text`)."""
    value, se, _ = target.figure(row)
    if target.edge is not None and not np.isfinite(value):
        return closed_edge_text(target, row, items_word)
    resting = ""
    if target.edge is not None:  # a share of every simulated study: none left out
        said = f"clears {target.edge:g} in {percent(value)} of simulated studies"
        error = percent(se) if np.isfinite(se) else ""
    else:
        said = f"expected width {value:.3f}"
        error = f"{se:.2g}" if np.isfinite(se) else ""
        resting = resting_text(row)
    if error:
        return f"{said} (simulation SE {error}{'; ' + resting if resting else ''})"
    return f"{said} ({resting})" if resting else said


def closed_edge_text(target: Target, row: dict[str, Any], items_word: str = "items") -> str:
    """What a closed form says of a design's lower bound: "by the formula its lower limit
    clears 0.6 with probability 0.8 or more (25 cases needed; no simulated share)".

    A closed form (Walter, Eliasziw & Donner's test, kappaSize's power) gives the item
    count at which the lower limit clears the edge with the target's probability, not a
    share of simulated studies: a design with at least that many meets it, one with fewer
    falls short of it."""
    assert target.edge is not None
    need = row.get("items_needed")
    if need is None or not np.isfinite(float(need)):
        return f"a closed form (no simulated share of studies clearing {target.edge:g})"
    said = f"by the formula its lower limit clears {target.edge:g} with probability " \
        f"{target.probability:g}"
    if int(row["items"]) >= int(need):
        return f"{said} or more ({int(need)} {items_word} needed; no simulated share)"
    return f"{said} only from {int(need)} {items_word} (no simulated share)"


def width_text(row: dict[str, Any]) -> str:
    """A design's expected width with its SE, to stand in parentheses: "expected width
    0.080, simulation SE 0.0031"; without an SE (a closed form) the width alone."""
    width, se = float(row["expected_width"]), float(row.get("width_se", np.nan))
    said = f"expected width {width:.3f}"
    said = f"{said}, simulation SE {se:.2g}" if np.isfinite(se) else said
    resting = resting_text(row)
    return f"{said}, {resting}" if resting else said


def _count(row: dict[str, Any], key: str) -> float:
    value = row.get(key, np.nan)
    return float(value) if value is not None else float("nan")


def short_of_all(row: dict[str, Any]) -> bool:
    """Whether some of a simulated design's studies have no interval (counted as
    infinitely wide), or their intervals rest on fewer than all their bootstrap
    resamples (those without variation have no alpha and are left out)."""
    studies, used = _count(row, "simulations"), _count(row, "studies_used")
    resamples, total = _count(row, "resamples_used"), _count(row, "resamples_total")
    return bool((np.isfinite(used) and used < studies)
                or (np.isfinite(total) and resamples < total))


def _resting(row: dict[str, Any]) -> str:
    """The counts of :func:`resting_text`: "21 of 40 simulated studies with an interval,
    the other 19 counted as infinitely wide, and 3,012 of 4,200 bootstrap resamples in
    those intervals"."""
    used, studies = int(row["studies_used"]), int(row["simulations"])
    said = f"{used:,} of {studies:,} simulated studies with an interval"
    if used < studies:
        said += f", the other {studies - used:,} counted as infinitely wide,"
    total = _count(row, "resamples_total")
    if np.isfinite(total) and used:
        said += f" and {int(row['resamples_used']):,} of {int(total):,} bootstrap " \
            "resamples in those intervals"
    return said.rstrip(",")


def resting_text(row: dict[str, Any]) -> str:
    """What a simulated width rests on where some studies have no interval or some
    resamples no alpha (:func:`_resting`); "" when every study has one on all its
    resamples (or for a closed form)."""
    return _resting(row) if short_of_all(row) else ""


def left_out_notes(result: PlanResult) -> list[str]:
    """A note naming the designs some of whose simulated studies have no interval or
    whose intervals rest on fewer than all their bootstrap resamples, and what that
    does to them ([] when none)."""
    t = result.table
    if "studies_used" not in t:
        return []
    rows = [r for r in t.to_dict("records") if short_of_all(r)]
    if not rows:
        return []
    named = "; ".join(f"{_design(result, r)}: {_resting(r)}" for r in rows[:4])
    more = f"; and {len(rows) - 4} more" if len(rows) > 4 else ""
    return [f"{counted(len(rows), 'design')} {'has' if len(rows) == 1 else 'have'} "
            f"simulated studies without an interval or resamples without an alpha ({named}"
            f"{more}): {no_interval_text(bool(t['resamples_total'].notna().any()))}"]


def no_interval_text(bootstrap: bool = True) -> str:
    """Why a simulated study has no interval and what counts it, for the notes and the
    Methods; ``bootstrap``: whether the intervals are alpha's bootstrap ones (a
    kappa's are normal-theory: no resamples to name)."""
    if not bootstrap:
        return ("a simulated study has no interval where its ratings do not vary or where "
                "its interval has zero width (a standard error of 0, as at a kappa of 1); "
                "such a study counts as infinitely wide in the median width and its "
                "percentiles and as not clearing an edge, so a design too small to vary "
                "does not meet a target on the few studies that do.")
    return ("a simulated study has no interval where its ratings do not vary, where its "
            "interval has zero width (all bootstrap resamples equal, or a standard error "
            f"of 0) or where it rests on fewer than {MIN_RESAMPLES} bootstrap resamples "
            "with an alpha (too few for a 95% interval); such a study counts as infinitely "
            "wide in the median width and its percentiles and as not clearing an edge, so "
            "a design too small to vary does not meet a target on the few studies that "
            "do. A resample whose ratings do not vary has no alpha and is left out of its "
            "study's interval, as analyze leaves it out.")


def target_error_text(target: Target, row: dict[str, Any]) -> str:
    """What a design lying less than :data:`~.design.SE_MULTIPLE` simulation SEs from
    the target is worth, as a sentence to follow the one naming it ("" when it lies
    further, or has no simulation error): meeting the target, the simulation does not
    settle it; missing it, the simulation does not show it falls short."""
    if not target.within_error(row):
        return ""
    if target.met(row):
        return (f" It is within simulation error of the target (less than {SE_MULTIPLE:g} "
                "simulation SEs from it): the simulation does not settle whether it meets "
                "it; more simulated studies (--simulations) would.")
    return (f" It misses the target by less than {SE_MULTIPLE:g} simulation SEs: within "
            "simulation error, so the simulation does not show that it falls short.")


def simulation_error_notes(result: PlanResult) -> list[str]:
    """Notes on the recommendation where the simulation does not settle it.

    Parameters
    ----------
    result : PlanResult
        A plan whose table has ``meets``, ``within_error``, ``cost`` and ``cheapest``.

    Returns
    -------
    list of str
        When the cheapest design meeting the target is within simulation error of it,
        a note saying so; when designs cheaper than it (or, with none meeting, any
        design) miss the target by less than :data:`~.design.SE_MULTIPLE` SEs, a note
        naming them as within simulation error, not shown to fall short. Empty for a
        closed form or where every figure is clear of the target.
    """
    t = result.table
    if "within_error" not in t or not t["within_error"].any():
        return []
    notes = []
    best = result.chosen()
    if best is not None and best["within_error"]:
        notes.append(
            f"The cheapest design meeting the target, {_design(result, best)}, "
            f"{figure_text(result.target, best)}, is within simulation error of the "
            f"target (less than {SE_MULTIPLE:g} simulation SEs from it): the simulation "
            "does not settle whether it meets it; more simulated studies (--simulations) "
            "would.")
    near = t[t["within_error"] & ~t["meets"].astype(bool)]
    if best is not None:
        near = near[near["cost"] <= best["cost"]]
    if not near.empty:
        rows = near.to_dict("records")
        named = "; ".join(f"{_design(result, r)}, {figure_text(result.target, r)}"
                          for r in rows[:4])
        more = f"; and {len(rows) - 4} more" if len(rows) > 4 else ""
        them = "it" if len(rows) == 1 else "them"
        than = (f"so the simulation does not show {them} worse than the cheapest design "
                "meeting it" if best is not None else "so the simulation does not show "
                f"that {them} fall{'s' if len(rows) == 1 else ''} short")
        # the designs last, after a colon: their figures have brackets of their own
        notes.append(
            f"{counted(len(rows), 'design')} {'misses' if len(rows) == 1 else 'miss'} "
            f"the target by less than {SE_MULTIPLE:g} simulation SEs, within simulation "
            f"error, {than}: {named}{more}.")
    return notes


def _design(result: PlanResult, row: dict[str, Any]) -> str:
    """"4 raters x 25 items"."""
    return f"{result.who(int(row['raters']))} x {int(row['items'])} {result.items_word}"
