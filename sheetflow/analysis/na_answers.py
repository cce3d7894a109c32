"""Counting a column's N/A answers where they leave a figure undefined.

Apart from :mod:`.na`, which :mod:`.context` imports, because these read a
:class:`~.context.Context`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from .na import na_handling

if TYPE_CHECKING:
    from .context import Context


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


def na_left_out_note(ctx: Context, dim_id: str) -> str:
    """The N/A answers a defined figure on ``dim_id`` was taken without, and the units
    left to it, for its note: the unit count beside the figure (12 where the others
    have 18) says nothing of why otherwise.

    Parameters
    ----------
    ctx : Context
    dim_id : str

    Returns
    -------
    str
        ``'6 of 36 answers N/A, left out (na_handling = "missing"): 12 of 18 units'``
        (the units two or more raters answered, and how many of them keep two or more
        ratings without the N/A answers); "" when N/A is a category of its own or no
        answer is N/A.
    """
    if na_handling(ctx.study) != "missing":
        return ""
    n_na, n_answers = na_answers(ctx, dim_id)
    if n_na == 0:
        return ""
    before, lost = _pairable_lost(ctx, dim_id)
    return (f"{n_na} of {n_answers} answers N/A, left out (na_handling = \"missing\"): "
            f"{before - lost} of {before} units")
