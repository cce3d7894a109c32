"""The internal team as a rater in alpha (protocol 000 sections 4.1-4.2).

Protocol 000 says the validators' scores "will be aggregated with other external
validators and internal research team scores to compute IRR statistics", "into a
rater×case matrix". The internal scores file (``[analysis.params]
internal_scores_file``) holds one total per case and arm, on the rubric's own scale
(checked at load), so the rubric's first total takes the internal team as one more
rater beside the validators; that alpha is the decision's, and the validators-only
alpha is reported beside it. Every other column has no internal score: its alpha rests
on the validators only, and each such row says so.
"""

from __future__ import annotations

import pandas as pd

from ..spec.model import Study
from .context import Context

INTERNAL_RATER = "internal team"
"""The internal team's rater id in the alpha matrix (a space: no rater id of a spec)."""
INTERNAL_COLUMN = "total"
"""The internal scores file's column: a total on the rubric's own scale."""


def internal_measure(ctx: Context) -> str | None:
    """The measure the internal scores are a rating of: the rubric's first total, when
    the study has internal scores with totals; None otherwise."""
    return rated_by_internal(ctx.study, ctx.internal)


def rated_by_internal(study: Study, internal: pd.DataFrame | None) -> str | None:
    """:func:`internal_measure` from the study and its internal scores (``None`` when it
    has none), for callers without the ratings (``sheetflow plan`` before collect)."""
    if internal is None or internal.empty or not study.rubric.totals:
        return None
    if INTERNAL_COLUMN not in internal or internal[INTERNAL_COLUMN].isna().all():
        return None
    return study.rubric.totals[0].id


def with_internal_team(ctx: Context, ratings: pd.DataFrame) -> pd.DataFrame:
    """``ratings`` (unit, rater, value, arm, case) with one rating per unit from the
    internal team, on the units the validators rated (a unit is a case and arm)."""
    units = ratings.drop_duplicates(["case", "arm"])[["unit", "case", "arm"]]
    scores = ctx.internal[["case", "arm", INTERNAL_COLUMN]].dropna()
    team = units.merge(scores, on=["case", "arm"], how="inner").rename(
        columns={INTERNAL_COLUMN: "value"})
    team["rater"] = INTERNAL_RATER
    return pd.concat([ratings, team[["unit", "rater", "value", "arm", "case"]]],
                     ignore_index=True)


def validators_only_note(ctx: Context, measure: str) -> str:
    """What a column's alpha rests on when the internal scores do not rate it ("" for
    a study without internal scores)."""
    if ctx.internal is None or ctx.internal.empty:
        return ""
    source = ctx.study.plan.params.get("internal_scores_file", "the internal scores file")
    return f"validators only: {source} holds no score for this column (totals only)"


def with_internal_note(n_validators: int, shown: str) -> str:
    """The note beside the decision's alpha: who it rests on, and the validators-only
    alpha (``shown``, as the caller writes it) beside it."""
    who = "the validator" if n_validators == 1 else f"the {n_validators} validators"
    return (f"with the internal team's totals as one rater beside {who} (protocol 000 "
            f"sections 4.1-4.2); validators only: {shown}")
