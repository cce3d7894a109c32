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
and how many ratings and units the setting leaves for agreement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SheetflowError

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..rubric import Dimension
    from ..study import Study
    from .context import Context

NA_SETTINGS = ("missing", "category")


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


def na_counts(ctx: Context) -> dict[str, dict[str, int]]:
    """Per dimension with N/A labels: N/A answers, ratings and units left for agreement.

    ``n_ratings`` and ``n_units`` count what agreement uses under the setting (see
    :meth:`Context.ratings`): a unit counts when two or more raters have a value for it.
    """
    out = {}
    for dim in ctx.study.rubric.dimensions:
        if not dim.na_choices or dim.kind != "categorical" or dim.scope != "response":
            continue
        rows = ctx.first[ctx.first["dimension"] == dim.id]
        answered = rows[rows["value"].notna() & (rows["value"].astype(str) != "")]
        used = ctx.ratings(dim.id)
        per_unit = used.groupby("unit")["rater"].nunique()
        out[dim.id] = {"n_na": int(answered["value"].isin(dim.na_choices).sum()),
                       "n_answers": len(answered), "n_ratings": len(used),
                       "n_units": int((per_unit >= 2).sum())}
    return out


def na_methods(ctx: Context) -> list[tuple[str, str]]:
    """The Methods entry: the setting and the n it leaves per dimension."""
    counts = na_counts(ctx)
    if not counts:
        return []
    setting = na_handling(ctx.study)
    rule = ("left out (missing): agreement over the answers with a rating; two N/A answers "
            "do not count as agreement" if setting == "missing" else
            "a category of its own: two N/A answers agree, N/A against a rating disagrees; "
            "the dimension is analysed at the nominal level")
    parts = [f"{dim}: {c['n_na']} of {c['n_answers']} answers N/A; agreement uses "
             f"{c['n_ratings']} ratings on {c['n_units']} units rated by two or more"
             for dim, c in counts.items()]
    return [("N/A answers", f"[analysis.params] na_handling = \"{setting}\": N/A is {rule}. "
             + "; ".join(parts) + ".")]
