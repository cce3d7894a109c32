"""N/A answers: a stated plan setting, and the n it leaves (protocol 003).

A categorical dimension may list labels that mean "not applicable" (``na = ["N/A"]``,
003's faithfulness). Whether two raters who both answer N/A agree is a choice the plan
states in ``[analysis.params] na_handling``:

- ``"missing"`` (default): an N/A answer is left out; agreement is computed over the
  answers with a rating on the scale (ordinal stays ordinal);
- ``"category"``: N/A is a category of its own; two N/A answers agree, N/A against a
  rating disagrees. The dimension is then analysed at the nominal level, since N/A
  has no place on the ordered scale.

The Methods sheet states the setting and, per dimension, how many answers were N/A
and how many ratings and units the setting leaves for agreement
(:func:`.p003_answer_review.na_counts`). Where a figure is undefined on a column whose
N/A answers were left out, its reason says so (:func:`with_na_answers`): a column
answered N/A throughout has no rating left, and "no ratings" alone would hide that
every rater did answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from ..errors import SheetflowError
from ..spec.params import NA_SETTINGS

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..spec.rubric import Dimension
    from ..spec.study import Study
    from .context import Context


def na_handling(study: Study) -> str:
    """The plan's N/A setting (``missing`` unless ``[analysis.params] na_handling``).

    Raises
    ------
    SheetflowError
        The setting is not one of :data:`NA_SETTINGS`.
    """
    value = study.plan.params.get("na_handling", "missing")
    if value not in NA_SETTINGS:
        raise SheetflowError(f"{study.root / 'study.toml'}: [analysis.params] na_handling = "
                             f"{value!r}; allowed: {', '.join(NA_SETTINGS)}")
    return str(value)


def na_as_category(study: Study, dim: Dimension) -> bool:
    """Whether ``dim``'s N/A labels are kept as a category of their own."""
    return bool(dim.na_choices) and dim.kind == "categorical" and \
        na_handling(study) == "category"


def na_answers(ctx: Context, dim_id: str) -> tuple[int, int]:
    """The sitting-1 answers of ``dim_id`` that are N/A, and all its answers.

    Parameters
    ----------
    ctx : Context
    dim_id : str
        A dimension or total id.

    Returns
    -------
    (int, int)
        (N/A answers, answers given), blank cells not counted; (0, 0) for a measure
        without N/A labels (a total, a scale).
    """
    answered = _answered(ctx, dim_id)
    if answered is None:
        return 0, 0
    dim = ctx.study.rubric.dimension(dim_id)
    return int(answered["value"].isin(dim.na_choices).sum()), len(answered)


def _answered(ctx: Context, dim_id: str) -> pd.DataFrame | None:
    """The sitting-1 answers of a categorical dimension with N/A labels, blank cells
    left out; None for any other measure."""
    dim = next((d for d in ctx.study.rubric.dimensions if d.id == dim_id), None)
    if dim is None or not dim.na_choices or dim.kind != "categorical":
        return None
    rows = ctx.first[ctx.first["dimension"] == dim_id]
    return rows[rows["value"].notna() & (rows["value"].astype(str) != "")]


def _pairable_lost(ctx: Context, dim_id: str) -> tuple[int, int]:
    """(units rated by two or more raters counting the N/A answers, how many of them
    leaving the N/A answers out leaves with fewer than two ratings)."""
    answered = _answered(ctx, dim_id)
    if answered is None:
        return 0, 0
    before = int((answered.groupby("unit")["rater"].nunique() >= 2).sum())
    after = int((ctx.ratings(dim_id).groupby("unit")["rater"].nunique() >= 2).sum())
    return before, before - after


def with_na_answers(ctx: Context, dim_id: str, reason: str) -> str:
    """Why a figure on ``dim_id`` is undefined, with the N/A answers left out of it.

    Parameters
    ----------
    ctx : Context
    dim_id : str
    reason : str
        The reason the statistic gives ("no ratings", "no unit has two or more
        values (nothing pairable)").

    Returns
    -------
    str
        ``reason`` as it is when N/A is a category of its own, or leaving the N/A
        answers out cost no unit its second rating (they are not why). When every
        answer was N/A and left out, that instead (the statistic saw no rating, though
        every rater answered), with what to set to count them; else ``reason``
        followed by the N/A answers and the units they leave with fewer than two
        ratings.
    """
    if na_handling(ctx.study) != "missing":
        return reason
    n_na, n_answers = na_answers(ctx, dim_id)
    if n_na == 0:
        return reason
    if n_na == n_answers:
        return (f"every answer is N/A ({n_na} of {n_answers}), counted as missing "
                '(na_handling = "missing"), so no rating is left to measure agreement on; '
                'na_handling = "category" would count two N/A answers as agreeing')
    before, lost = _pairable_lost(ctx, dim_id)
    if lost == 0:
        return reason
    return (f"{reason}; {n_na} of {n_answers} answers N/A, counted as missing "
            f'(na_handling = "missing"), leave {lost} of the {before} units two or more '
            "raters answered with fewer than two ratings")
