"""The second-rater subset: a design in which only a share of the items is rated twice.

With ``[design.second_rater]`` (protocol 002) the primary raters rate every item and
the second raters only the subset drawn at generate or at data lock: the first
``ceil(fraction x n)`` of each stratum (:func:`sheetflow.packs.second_rater.draw`).
Agreement is computed on the units every rater rated, which is that subset (the
analysis drops the other units listwise), so a plan sizes the statistic on the subset
and reads each design back as the items the study lists.

A design of the study's own item count takes its subset as the lock draws it from the
study's items and strata (or, after the lock, the subset it recorded). Any other item
count has no strata yet: its subset is ``ceil(fraction x items)``, the fewest a draw can
take (every further stratum rounds up once more), so the items a plan asks for are on
the safe side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import pandas as pd

from ..packs.second_rater import ceil_share, draw, locked_selection
from ..spec.model import Study
from .design import PlanResult, finish_table


@dataclass(frozen=True)
class Subset:
    """The second-rater subset of a study: its fraction, its own size, its primaries."""

    fraction: float
    own_items: int  # the items the study lists
    own: int  # the study's own subset: drawn as the lock draws it, or recorded at lock
    primaries: int  # raters who rate every item (role other than "second")
    locked: bool = False  # ``own`` is the subset the lock recorded

    def of(self, items: int) -> int:
        """The subset a design of ``items`` items has (see the module notes)."""
        return self.own if items == self.own_items else ceil_share(self.fraction, items)

    def items_for(self, subset: int) -> int:
        """The fewest items whose subset (``ceil(fraction x items)``) holds ``subset``."""
        if subset <= 0:
            return 0
        # ceil(f n) >= s  <=>  f n > s - 1, in exact arithmetic as ceil_share reads f
        return math.floor((subset - 1) / Fraction(repr(float(self.fraction)))) + 1

    def ratings(self, raters: int, items: int, subset: int) -> int:
        """Items rated over all raters: the primaries rate every item, the other raters
        the subset (a grid's rater count keeps the study's primaries, at least one, and
        adds second raters)."""
        primaries = max(1, min(self.primaries, raters - 1))
        return primaries * items + (raters - primaries) * subset

    def describe(self, items: int, word: str = "items") -> str:
        """``"4 of 16 items; the second-rater subset, fraction 0.25"``: no brackets of
        its own, as it is said within a design's."""
        drawn = "the second-rater subset recorded at lock" if self.locked and \
            items == self.own_items else "the second-rater subset"
        return f"{self.of(items)} of {items} {word}; {drawn}, fraction {self.fraction:g}"


def study_subset(study: Study) -> Subset | None:
    """The study's second-rater subset, or None when every rater rates every item."""
    plan = study.design.second_rater
    if plan is None:
        return None
    primaries = sum(r.role != "second" for r in study.raters)
    recorded = locked_selection(study)
    if recorded is not None:
        own, locked = len(recorded), True
    else:  # how many the draw selects does not depend on the hash it ranks by
        strata = draw(study.items, plan.strata, plan.fraction, plan_hash="")
        own, locked = sum(len(s["selected"]) for s in strata.values()), False
    return Subset(plan.fraction, len(study.items), max(2, own), primaries, locked)


def subset_counts(subset: Subset, items: list[int]) -> dict[int, int]:
    """Each item count of the grid -> its subset."""
    return {n: subset.of(n) for n in items}


def per_total(result: PlanResult, subset: Subset, counts: dict[int, int]) -> PlanResult:
    """A plan over subsets read back per item count of the study: ``items`` the study's
    items, ``subset`` those every rater rates, the items needed for the subset needed."""
    inner = result.table
    per = result.units_per_item
    rows = []
    for row in inner.to_dict("records"):
        for n, s in counts.items():
            if s != row["items"]:
                continue
            new = {**row, "items": n, "subset": s, "units": n * per,
                   "rated_items": subset.ratings(int(row["raters"]), n, s)}
            if "items_needed" in row:
                new["items_needed"] = subset.items_for(int(row["items_needed"]))
            rows.append(new)
    table = pd.DataFrame(rows).sort_values(["raters", "items"], kind="stable")
    table = table.reset_index(drop=True)
    meets = table["meets"].tolist()  # met on the subset, as the inner plan judged it
    result.table = finish_table(table.drop(columns=["meets", "cost", "cheapest"]),
                                result.target, result.costs, meets)
    return result
