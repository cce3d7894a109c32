"""Designs from closed forms: kappa (Donner-Rotondi, as kappaSize) and the ICC test.

:func:`plan_kappa` gives every (raters, items) design of a grid its expected two-sided
95% interval of kappa (:func:`.kappa_size.kappa_interval`) and the items it needs: for
a width target the fewest items whose expected interval is that narrow; for a
lower-bound target (``edge``, ``probability``) kappaSize's power: the items for which
the two-sided test of kappa = edge at 0.05 rejects with that probability, i.e. the 95%
interval's lower limit clears the edge that often. :func:`plan_icc_edge` does the same
for the ICC with Walter, Eliasziw & Donner's (1998) test.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .closed_forms import icc_test_items
from .design import Costs, PlanResult, Target, finish_table, icc_row
from .kappa_size import FIRST_N, kappa_interval, kappa_power_items

__all__ = ["KAPPA_CATEGORIES", "KAPPA_RATERS", "kappa_covered", "plan_icc_edge",
           "plan_kappa"]

KAPPA_RATERS = range(2, 7)
KAPPA_CATEGORIES = range(2, 6)
MAX_ITEMS = 100_000


def kappa_covered(raters: Sequence[int], categories: int) -> bool:
    """Whether kappaSize's models cover every rater count and this many categories."""
    return categories in KAPPA_CATEGORIES and all(r in KAPPA_RATERS for r in raters)


def _width(kappa: float, items: int, shares: Sequence[float], raters: int) -> float:
    low, high = kappa_interval(kappa, items, shares, raters)
    return high - low


def _items_for_width(kappa: float, width: float, shares: Sequence[float], raters: int) -> int:
    """The fewest items (>= 11, kappaSize's floor) whose expected interval is <= width."""
    low, high = FIRST_N, FIRST_N
    while _width(kappa, high, shares, raters) > width:
        low, high = high, high * 2
        if high > MAX_ITEMS:
            return MAX_ITEMS + 1
    while low < high:
        mid = (low + high) // 2
        low, high = (mid + 1, high) if _width(kappa, mid, shares, raters) > width else (low, mid)
    return high


def kappa_items_needed(kappa: float, shares: Sequence[float], raters: int,
                       target: Target) -> int:
    """Items one rater count needs to meet ``target`` (see the module notes)."""
    if target.edge is not None:
        if not 0 < target.edge < kappa:
            raise ValueError(f"the edge {target.edge:g} must lie between 0 and the "
                             f"anticipated kappa {kappa:g}.")
        return kappa_power_items(target.edge, kappa, shares, raters, alpha=0.05,
                                 power=target.probability)[0]
    assert target.width is not None
    return _items_for_width(kappa, target.width, shares, raters)


def plan_kappa(kappa: float, shares: Sequence[float], *, raters: Sequence[int],
               items: Sequence[int], target: Target, costs: Costs | None = None,
               measure: str, level: str, statistic: str, source: str) -> PlanResult:
    """Kappa designs from kappaSize's closed forms (2-6 raters, 2-5 categories)."""
    costs = costs or Costs()
    rows = []
    for r in raters:
        need = kappa_items_needed(kappa, shares, r, target)
        for n in items:
            low, high = kappa_interval(kappa, max(n, 2), shares, r)
            rows.append({"raters": r, "items": n, "units": n, "items_needed": need,
                         "expected_width": high - low, "ci_low": low, "ci_high": high,
                         "p_lower": np.nan, "estimate_median": kappa,
                         "method": "closed form"})
    table = pd.DataFrame(rows)
    method = ("Donner & Eliasziw (1992) power, as kappaSize" if target.edge is not None
              else "Donner & Rotondi (2010) interval, as kappaSize")
    return PlanResult(measure, level, method, source, target, costs,
                      finish_table(table, target, costs, (table["items"]
                                                          >= table["items_needed"]).tolist()),
                      statistic=statistic)


def plan_icc_edge(rho: float, *, raters: Sequence[int], items: Sequence[int],
                  target: Target, costs: Costs | None = None, measure: str,
                  source: str) -> PlanResult:
    """ICC designs for a lower bound: Walter, Eliasziw & Donner's (1998) test of
    rho = edge (two-sided 0.05) with power ``probability``; widths from Bonett (2002), or
    the exact one where his approximation does not hold (:func:`.design.icc_row`)."""
    assert target.edge is not None
    if not 0 <= target.edge < rho < 1:
        raise ValueError(f"the edge {target.edge:g} must lie between 0 and the "
                         f"anticipated ICC {rho:g}.")
    costs = costs or Costs()
    rows = []
    for r in raters:
        need = icc_test_items(target.edge, rho, r, alpha=0.05, power=target.probability)
        rows += [icc_row(rho, r, max(n, 2), need) | {"items": n, "units": n}
                 for n in items]
    table = pd.DataFrame(rows)
    meets = (table["items"] >= table["items_needed"]).tolist()
    return PlanResult(measure, "interval", "Walter, Eliasziw & Donner (1998)", source,
                      target, costs, finish_table(table, target, costs, meets),
                      statistic="icc")
