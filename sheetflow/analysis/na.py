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
N/A answers were left out, its reason says so (:func:`.na_answers.with_na_answers`): a column
answered N/A throughout has no rating left, and "no ratings" alone would hide that
every rater did answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SheetflowError
from ..spec.params import NA_SETTINGS

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..spec.rubric import Dimension
    from ..spec.study import Study


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
