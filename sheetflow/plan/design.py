"""Designs that meet a precision target: the grid, costs, the cheapest design, the search.

:func:`plan_alpha` simulates (see :mod:`.simulate`); :func:`plan_icc` uses Bonett's
formula (or Zou's, with an assurance). Both return a :class:`PlanResult` whose table
has one row per (raters, items) design with its expected interval width and cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..words import counted
from .formulas import bonett_icc_items, icc_design_width, icc_items_needed, zou_icc_items
from .pilot_model import grid_source
from .simulate import ModelSource, PilotSource, Progress, simulate_cell, simulate_grid

__all__ = ["Costs", "PlanResult", "Target", "cell_for_target", "finish_table",
           "items_for_target", "plan_alpha", "plan_icc"]


SE_MULTIPLE = 2.0
"""Simulated figures less than this many simulation standard errors apart (or from the
target) are within simulation error: no design is called better for it."""


@dataclass(frozen=True)
class Target:
    """What a design must reach: a full 95% interval width, or a lower limit above an edge.

    With ``edge`` set, a design meets the target when the interval's lower limit is at
    or above ``edge`` in at least ``probability`` of the simulated studies; otherwise
    when the expected (median) full width is at most ``width``.
    """

    width: float | None = None
    edge: float | None = None
    probability: float = 0.8

    def __post_init__(self) -> None:
        if (self.width is None) == (self.edge is None):
            raise ValueError("give either a target width (--width) or a lower-bound edge "
                             "(--above), not both.")
        if self.width is not None and not 0 < self.width < 2:
            raise ValueError(f"--width {self.width:g}: the target width must be between 0 and "
                             "2 (not either), e.g. 0.2.")
        if self.edge is not None and not -1 < self.edge < 1:  # every planned statistic
            raise ValueError(f"--above {self.edge:g}: the lower-bound edge {self.edge:g} must "
                             "lie between -1 and 1: no agreement statistic reaches it.")
        if not 0 < self.probability < 1:
            raise ValueError(f"--probability {self.probability:g}: the probability must be "
                             "between 0 and 1 (not either), e.g. 0.8.")

    def describe(self) -> str:
        """The target in words."""
        if self.width is not None:
            return f"95% interval no wider than {self.width:g}"
        return (f"lower limit of the 95% interval at or above {self.edge:g} "
                f"with probability {self.probability:g}")

    def met(self, row: dict[str, Any] | pd.Series) -> bool:
        """Whether one design row meets the target."""
        if self.edge is not None:
            return bool(np.nan_to_num(row["p_lower"]) >= self.probability)
        return bool(np.isfinite(row["expected_width"]) and row["expected_width"] <= self.width)

    def figure(self, row: dict[str, Any] | pd.Series) -> tuple[float, float, float]:
        """The simulated figure the target judges, its simulation standard error and the
        target's own value: (share clearing the edge, its SE, probability), or (expected
        width, its SE, width); the SE is NaN for a closed form."""
        if self.edge is not None:
            return (float(row.get("p_lower", np.nan)), float(row.get("p_lower_se", np.nan)),
                    self.probability)
        return (float(row.get("expected_width", np.nan)), float(row.get("width_se", np.nan)),
                float(self.width or np.nan))

    def within_error(self, row: dict[str, Any] | pd.Series) -> bool:
        """Whether a simulated design's figure lies less than :data:`SE_MULTIPLE`
        simulation standard errors from the target: the simulation does not tell whether
        it meets it (False for a closed form, which has no simulation error)."""
        value, se, goal = self.figure(row)
        if np.isfinite(value) and se == np.inf:
            # studies without an interval (infinitely wide) reach into the median's
            # error interval: nothing bounds it above, so a width at or below the
            # target is not settled; one above it is counted short (conservative)
            return bool(value <= goal)
        if not (np.isfinite(value) and np.isfinite(se)):
            return False
        return bool(abs(value - goal) < SE_MULTIPLE * se) if se > 0 else value == goal


@dataclass(frozen=True)
class Costs:
    """Cost of a design: ``raters x per_rater + rated items x per_item``.

    ``per_item`` is what one rater is paid for one item (a case of a paired study); the
    rated items are raters x items, or where second raters rate only a subset
    (:mod:`.subset`), the primaries' items plus the second raters' subset. With both
    zero the cost is the workload: the ratings each dimension of the measure receives,
    the rated items times the rated units of an item (two responses per paired case).
    """

    per_rater: float = 0.0
    per_item: float = 0.0

    @property
    def unit(self) -> str:
        """What the cost column counts."""
        return "cost" if self.per_rater or self.per_item else "ratings per dimension"

    def of(self, raters: int, items: int, units: int | None = None,
           rated: int | None = None) -> float:
        """The cost of ``raters`` raters rating ``items`` items, or without prices their
        ratings per dimension: ``rated x units / items`` (``units`` the items' rated
        units, two per case of a paired study, default ``items``; ``rated`` the items
        rated over all raters, default ``raters x items``)."""
        if not (self.per_rater or self.per_item):
            rated = raters * items if rated is None else rated
            return float(rated * (1 if units is None else units // items))
        if rated is None:
            return raters * (self.per_rater + items * self.per_item)
        return raters * self.per_rater + rated * self.per_item


EXACT_METHOD = "exact expected width"
"""An ICC design's method where Bonett's approximation does not hold (few items)."""


@dataclass
class PlanResult:
    """Designs over a grid with expected width and cost; the cheapest one that meets the target.

    Attributes
    ----------
    measure, level : str
        What is planned (e.g. ``alpha total``) and its level of measurement.
    method : str
        ``simulation``, ``pilot resampling`` or ``Bonett (2002)`` / ``Zou (2012)``.
    source : str
        Where the anticipated agreement comes from, in words.
    target : Target
    costs : Costs
    table : pandas.DataFrame
        ``raters, items, units, expected_width, width_se, width_q10, width_q90,
        p_lower, p_lower_se, estimate_median, undefined, simulations, studies_used,
        resamples_used, resamples_total, method, meets,
        within_error, cost, cheapest`` (the ``_se`` columns, a simulated figure's
        standard error, only in simulated plans).
    simulations, n_boot, seed : int
        0 for analytic plans.
    notes : list of str
        Plain-words lines for the report (filled by the caller, e.g. the band note).
    """

    measure: str
    level: str
    method: str
    source: str
    target: Target
    costs: Costs
    table: pd.DataFrame
    simulations: int = 0
    n_boot: int = 0
    seed: int = 0
    units_per_item: int = 1
    notes: list[str] = field(default_factory=list)
    statistic: str = "alpha"
    raters_word: str = "raters"  # "sittings" when one rater's two sittings are compared
    team: bool = False
    """Whether every design's alpha also counts the internal team as one more rater
    (protocol 000): the ``raters`` of a design are then the validators to recruit, and
    each design was simulated with one rater more."""
    raters_fixed: bool = False
    """Whether the rater count is not the plan's to choose (the protocol locks it, one
    rater's two sittings, Cohen's two raters): only more items can narrow the interval."""
    weighting: str = ""
    """How the planned kappa weighs disagreements, as analyze computes it ("quadratic-
    weighted on the ranks of its values"); "" for an unweighted statistic."""

    def who(self, raters: int) -> str:
        """A design's raters in words: "3 raters", or "3 validators plus the internal
        team" where the team rates in every design (no brackets: notes name designs
        within their own)."""
        # one validator beside the team is a design too (--raters 1 with protocol 000)
        return counted(raters, self.raters_word[:-1]) + (" plus the internal team"
                                                         if self.team else "")

    @property
    def items_word(self) -> str:
        """What an item of the grid is: "cases" for paired studies (two rated responses
        each), "repeated items" for one rater's two sittings, else "items"."""
        if self.raters_word == "sittings":
            return "repeated items"
        return "cases" if self.units_per_item > 1 else "items"

    def chosen(self) -> dict[str, Any] | None:
        """The cheapest design that meets the target (None when none does)."""
        hit = self.table[self.table["cheapest"]]
        return None if hit.empty else hit.iloc[0].to_dict()

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the chosen design's ``raters, items, expected_width`` (with its
        simulation SE, whether it is within simulation error of the target, and for a
        simulated width the studies and bootstrap resamples it rests on:
        ``studies_used`` of ``simulations``, ``resamples_used`` of ``resamples_total``),
        ``method, simulations`` at the top, then the target, source, notes and every design."""
        best = self.chosen()
        head = {"raters": None, "items": None, "expected_width": None,
                "expected_width_se": None, "within_error": None, "studies_used": None,
                "resamples_used": None, "resamples_total": None}
        if best is not None:
            head = {"raters": int(best["raters"]), "items": int(best["items"]),
                    "expected_width": _num(best["expected_width"]),
                    "expected_width_se": _num(best.get("width_se", np.nan)),
                    "within_error": bool(best["within_error"]),
                    # what a simulated width rests on (studies, resamples with an alpha)
                    **{k: _num(best.get(k, np.nan)) for k in
                       ("studies_used", "resamples_used", "resamples_total")}}
        return {**head, "plus_internal_team": self.team,
                "method": self.method, "simulations": self.simulations,
                "statistic": self.statistic, "weighting": self.weighting or None,
                "measure": self.measure, "level": self.level, "source": self.source,
                "target": self.target.describe(), "n_boot": self.n_boot, "seed": self.seed,
                "cost_unit": self.costs.unit, "notes": list(self.notes),
                "designs": [{k: _num(v) for k, v in row.items()}
                            for row in self.table.to_dict("records")]}


def _num(value: Any) -> Any:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else round(float(value), 6)
    return value


def finish_table(table: pd.DataFrame, target: Target, costs: Costs,
            meets: list[bool] | None = None) -> pd.DataFrame:
    """Add ``meets``, ``within_error`` (:meth:`Target.within_error`), ``cost`` (from
    ``raters, items, units`` and, where second raters rate a subset, ``rated_items``)
    and ``cheapest`` (fewest ratings, then fewest raters on ties)."""
    table = table.copy()
    table["meets"] = meets if meets is not None else [target.met(r) for _, r in table.iterrows()]
    table["within_error"] = [target.within_error(r) for _, r in table.iterrows()]
    subset = "rated_items" in table
    rated = table["rated_items"] if subset else table["raters"] * table["items"]
    table["cost"] = [costs.of(int(r), int(i), int(u), int(n) if subset else None)
                     for r, i, u, n in zip(table["raters"], table["items"], table["units"],
                                           rated, strict=True)]
    table["cheapest"] = False
    hits = table[table["meets"]]
    if not hits.empty:
        order = hits.assign(ratings=rated[hits.index]).sort_values(
            ["cost", "ratings", "raters"], kind="stable")
        table.loc[order.index[0], "cheapest"] = True
    return table


def plan_alpha(
    source: ModelSource | PilotSource, *, raters: Sequence[int], items: Sequence[int],
    target: Target, costs: Costs | None = None, units_per_item: int = 1,
    simulations: int = 200, n_boot: int = 500, confidence: float = 0.95, seed: int = 0,
    measure: str = "alpha", progress: Progress | None = None, statistic: str = "alpha",
    team: bool = False, weights: np.ndarray | None = None, weighting: str = "",
) -> PlanResult:
    """Simulate the interval of alpha (or a kappa) over a raters x items grid.

    Parameters
    ----------
    source : ModelSource or PilotSource
        Anticipated agreement, assumed or from a pilot. A pilot whose units hold fewer
        values than the grid's largest rater count is replaced by its model
        (:func:`~.pilot_model.grid_source`) for every design, so all designs are
        compared by one method.
    raters, items : sequence of int
        The grid. ``items`` are what the study lists (cases); each gives
        ``units_per_item`` rated units (2 for the two responses of a paired case).
    target : Target
    costs : Costs, optional
    simulations, n_boot : int
        Data sets per design and bootstrap resamples per data set.
    confidence : float, default 0.95
    seed : int
        Every design's data sets come from (seed, raters, units): reproducible.
    measure : str
        Name for the report.
    progress : callable, optional
        Called with (designs done, designs in all) after each design.
    statistic : {"alpha", "fleiss_kappa", "cohen_kappa"}
        Whose interval is simulated (see :mod:`.simulate`); the source's ``alpha`` is
        the anticipated value of that statistic.
    team : bool, default False
        The statistic also counts the internal team as one more rater (protocol 000's
        alpha): a design of ``r`` raters (the validators to recruit, the table's
        ``raters``) is simulated with ``r + 1``, the team among them in every study.
    weights : numpy.ndarray, optional
        Cohen's kappa's agreement weights over the source's domain (default unweighted).
    weighting : str, optional
        Those weights in words, for the report (e.g. "quadratic-weighted on the ranks of
        its values").

    Returns
    -------
    PlanResult
    """
    costs = costs or Costs()
    simulated = [r + int(team) for r in raters]
    source = grid_source(source, simulated)
    grid = simulate_grid(source, simulated, [i * units_per_item for i in items],
                         simulations=simulations, n_boot=n_boot, confidence=confidence,
                         edge=target.edge, seed=seed, progress=progress,
                         statistic=statistic, weights=weights)
    grid["raters"] -= int(team)  # the validators; the costs count them, not the team
    grid.insert(1, "items", grid["units"] // units_per_item)
    methods = sorted(set(grid["method"]))
    return PlanResult(measure, source.level, ", ".join(methods), source.describe(), target,
                      costs, finish_table(grid, target, costs), simulations, n_boot, seed,
                      units_per_item, statistic=statistic, team=team, weighting=weighting)


def plan_icc(
    rho: float, *, raters: Sequence[int], items: Sequence[int], target: Target,
    costs: Costs | None = None, confidence: float = 0.95, assurance: float | None = None,
    measure: str = "icc", source: str | None = None,
) -> PlanResult:
    """ICC designs from Bonett's formula (Zou's when ``assurance`` is given).

    Only width targets: the table's ``expected_width`` is Bonett's width for each
    design; with ``assurance`` a design meets the target when its items reach Zou's
    sample size (the width is then not exceeded with that probability); without it,
    when its items reach Bonett's, with his correction (+5 rho) for 2 raters and an ICC
    of 0.7 or more (:func:`~.formulas.bonett_icc_items`, ``small_k_adjust``), the width
    column staying the uncorrected formula's. Both are
    derived for the single-rater ICC of the one-way and consistency models; for
    absolute-agreement forms with rater effects they understate the width.

    Bonett's formula is a large-sample approximation: where his width differs from the
    exact expected width of the consistency ICC's exact-F interval by more than 10% of
    it (few items; :func:`~.formulas.icc_design_width`), the design's width is the
    exact one (its ``method`` :data:`EXACT_METHOD`), and the items needed are moved to
    where that width meets the target (:func:`~.formulas.icc_items_needed`).
    """
    if target.width is None:
        raise ValueError("Bonett's and Zou's widths take a width target (--width); a "
                         "lower bound (--above) is planned with the ICC test")
    costs = costs or Costs()
    rows = []
    for r in raters:
        # Bonett's +5 rho for k = 2, rho >= 0.7: without it the formula falls short of
        # the width (an exact-F simulation: median 0.2016 at 75 items for 0.75, width
        # 0.2); presize applies it and statpsych's exact-F rescaling agrees
        need = (zou_icc_items(rho, r, target.width, confidence, assurance)
                if assurance is not None
                else bonett_icc_items(rho, r, target.width, confidence, small_k_adjust=True))
        # checked by the exact width where Bonett's approximation does not hold
        need = icc_items_needed(rho, r, target.width, need, confidence,
                                fewer=assurance is None)
        rows += [icc_row(rho, r, n, need, confidence) for n in items]
    table = pd.DataFrame(rows)
    zou = assurance is not None
    meets = (table["items"] >= table["items_needed"]).tolist()
    method = f"Zou (2012), assurance {assurance:g}" if zou else "Bonett (2002)"
    if (table["method"] == EXACT_METHOD).any():  # a note names the designs
        method += ", the exact expected width where his approximation does not hold"
    return PlanResult(measure, "interval", method, source or f"assumed ICC {rho:g}", target,
                      costs,
                      finish_table(table, target, costs, meets), statistic="icc")


def icc_row(rho: float, raters: int, items: int, need: int,
            confidence: float = 0.95) -> dict[str, Any]:
    """One ICC design: its width (:func:`~.formulas.icc_design_width`: Bonett's, or the
    exact one where his approximation does not hold, its ``method`` then saying so)."""
    width, exact = icc_design_width(rho, raters, items, confidence)
    return {"raters": raters, "items": items, "units": items, "items_needed": need,
            "expected_width": width, "p_lower": np.nan, "estimate_median": rho,
            "method": EXACT_METHOD if exact else "closed form"}


def items_for_target(
    source: ModelSource | PilotSource, raters: int, width: float, *, units_per_item: int = 1,
    start_items: int = 20, simulations: int = 200, n_boot: int = 500,
    confidence: float = 0.95, seed: int = 0, max_items: int = 100_000,
    statistic: str = "alpha",
) -> tuple[int, float]:
    """The fewest items (approximately) whose expected width is at most ``width``.

    Starts at ``start_items`` and rescales by the square-root law (width ~ 1/sqrt(n)),
    re-simulating each guess, until the guess stops moving; the answer is checked by
    simulation and is the first guess found to meet the width.

    Returns
    -------
    (items, expected_width)
    """
    items, cell = cell_for_target(source, raters, width, units_per_item=units_per_item,
                                  start_items=start_items, simulations=simulations,
                                  n_boot=n_boot, confidence=confidence, seed=seed,
                                  max_items=max_items, statistic=statistic)
    return items, cell["expected_width"]


def cell_for_target(
    source: ModelSource | PilotSource, raters: int, width: float, *, units_per_item: int = 1,
    start_items: int = 20, simulations: int = 200, n_boot: int = 500,
    confidence: float = 0.95, seed: int = 0, max_items: int = 100_000,
    statistic: str = "alpha", weights: np.ndarray | None = None,
) -> tuple[int, dict[str, Any]]:
    """:func:`items_for_target`'s search, with the simulated design found whole
    (``weights``: Cohen's kappa's agreement weights, as :func:`plan_alpha` takes them).

    Returns
    -------
    (items, cell)
        The item count and its :func:`~.simulate.simulate_cell` figures: the expected
        width with its simulation standard error (``width_se``) and the rest.
    """
    items, seen, cells = max(2, start_items), {}, {}
    for _ in range(10):
        cell = cells[items] = simulate_cell(
            source, raters, items * units_per_item, simulations=simulations, n_boot=n_boot,
            confidence=confidence, seed=seed, statistic=statistic, weights=weights)
        w = seen[items] = cell["expected_width"]
        if not np.isfinite(w):
            items = min(items * 2, max_items)
            continue
        guess = min(max(2, math.ceil(items * (w / width) ** 2)), max_items)
        if w <= width and items - guess <= max(1, 0.03 * items):
            break  # meets the width and the square-root law sees no real saving
        if w > width:
            guess = min(max(guess, items + max(1, math.ceil(0.02 * items))), max_items)
        if guess == items:
            break
        items = guess
    ok = {n: v for n, v in seen.items() if np.isfinite(v) and v <= width}
    best = min(ok) if ok else max(seen)
    return best, cells[best]
