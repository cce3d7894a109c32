"""The second-rater subset as the analysis sees it: which items the second raters
must score (drawn at generation, or at data lock from the items completed then), and
what a statistic's listwise-deletion note says in a study where only that subset is
rated twice by design."""

from __future__ import annotations

import pandas as pd

from ..packs.second_rater import draw, read_selection, selects_at_lock
from ..spec.study import Study
from ..stats._util import listwise_note
from .context import Context


def second_rater_expected(study: Study, completed: list[str] | None = None) -> list[str] | None:
    """Item ids the second raters must score, or None before the lock draws them.

    Within each stratum, items are ranked by ``sha256(spec hash + ":" + item id)`` and
    the first ``ceil(fraction * n)`` taken (protocol 002). ``select_at = "lock"``: the
    items drawn from are those completed at data lock, as the lock recorded them; the
    draw is redone from them, not read back from the lock's selection. ``completed``
    (every primary rater scored them, in the data now) stands in only for a record
    without that list. None until ``sheetflow lock`` has run. Otherwise all items, as
    at generation.
    """
    plan = study.design.second_rater
    if plan is None:
        return [it.id for it in study.items]
    pool = study.items
    if selects_at_lock(study):
        selection = read_selection(study)
        if selection is None:
            return None
        # a primary return changed after the lock (an item left blank) must not move
        # the subset: the second rater scored the one drawn at lock, and was told
        # "extra W005, missing W014" of items never in their pack
        at_lock = selection.record.get("completed")
        done = set(at_lock if isinstance(at_lock, list) else completed or [])
        pool = tuple(it for it in study.items if it.id in done)
    strata = draw(pool, plan.strata, plan.fraction, study.hash)
    chosen = {i for s in strata.values() for i in s["selected"]}
    return [it.id for it in study.items if it.id in chosen]


def completed_items(ctx: Context) -> list[str]:
    """Items every primary rater scored completely (a total), as the lock defines them."""
    tid = ctx.study.rubric.totals[0].id if ctx.study.rubric.totals else None
    primaries = [r.id for r in ctx.study.raters if r.role != "second"]
    rows = ctx.numeric(tid) if tid else ctx.first
    rows = rows[rows["rater"].isin(primaries)]
    done = rows.groupby("case")["rater"].nunique()
    return done[done == len(primaries)].index.tolist()


def subset_note(ctx: Context, ratings: pd.DataFrame) -> tuple[str, str, int] | None:
    """The listwise-deletion note a statistic on ``ratings`` (unit, rater, case) gives,
    and what to say instead of it in a study with a second-rater subset.

    Only the subset is meant to be rated twice: the items outside it are named as such
    ("12 of 16 items are outside the second-rater subset (rated once)"), and only a
    selected item lacking a rating is called missing. None for a study without a
    subset, before the lock draws it, or when no unit was left out.

    Returns
    -------
    tuple of (str, str, int) or None
        ``(note as said, note to say, items dropped)``: the last counts only the
        selected items lacking a rating, what ``n_dropped`` means (the items outside the
        subset were never to be rated twice).
    """
    if ctx.study.design.second_rater is None or ratings.empty:
        return None
    expected = second_rater_expected(ctx.study, completed_items(ctx))
    counts = ratings.groupby("unit")["rater"].nunique()
    dropped = counts[counts < ratings["rater"].nunique()]
    if expected is None or not len(dropped):
        return None
    said = listwise_note(len(dropped), len(counts))
    case_of = ratings.groupby("unit")["case"].first()
    inside = dropped[case_of[dropped.index].isin(expected).to_numpy()]
    outside = dropped.drop(inside.index)
    parts = []
    if len(outside):
        # with one primary rater an item outside the subset has exactly one rating
        how = "rated once" if (outside == 1).all() else "not rated by every rater"
        parts.append(f"{len(outside)} of {len(counts)} items are outside the second-rater "
                     f"subset ({how})")
    if len(inside):
        parts.append(f"listwise deletion: {len(inside)} of {len(expected)} items in the "
                     "second-rater subset dropped for a missing rating")
    return said, "; ".join(parts), len(inside)
