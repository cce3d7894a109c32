"""A verdict dimension whose label follows from a total's band (protocol 004).

Protocol 004's judges give an ``overall_verdict`` (PASS_STRONG, PASS_ADEQUATE,
FAIL_WEAK, FAIL_CRITICAL) that the judge prompt defines by the mean of the six
dimensions (>= 4.0, 3.5-3.99, 2.5-3.49, < 2.5). A study states that rule once::

    [analysis.params.verdict_bands]
    dimension = "overall_verdict"      # the categorical verdict
    total = "overall"                  # the total (mean of D1-D6) it follows
    minimums = { PASS_STRONG = 4.0, PASS_ADEQUATE = 3.5, FAIL_WEAK = 2.5, FAIL_CRITICAL = 1.0 }

``collect`` then warns (``verdict-off-band``) on every answer whose verdict is not the
band of its own total, for human judges exactly as the JSONL import refuses such a
record from an automated judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .rubric import Rubric

PARAM = "verdict_bands"


@dataclass(frozen=True)
class VerdictRule:
    """``dimension``'s label is the band of ``total``: ``bands`` (label, lowest
    value), highest first; the lowest band covers everything below the next."""

    dimension: str
    total: str
    bands: tuple[tuple[str, float], ...]

    def label_for(self, value: float) -> str:
        """The label ``value`` earns."""
        for label, lowest in self.bands[:-1]:
            if value >= lowest:
                return label
        return self.bands[-1][0]


def verdict_rule(params: dict[str, Any]) -> VerdictRule | None:
    """The study's rule, or None when it states none (checked by :func:`problems`)."""
    table = params.get(PARAM)
    if not isinstance(table, dict) or problems(table, None):
        return None
    bands = sorted(((str(k), float(v)) for k, v in table["minimums"].items()),
                   key=lambda b: -b[1])
    return VerdictRule(str(table["dimension"]), str(table["total"]), tuple(bands))


def problems(table: Any, rubric: Rubric | None) -> list[str]:
    """What is wrong with a ``verdict_bands`` table (empty when nothing is)."""
    if not isinstance(table, dict):
        return [f"{PARAM} must be a table with dimension, total and minimums"]
    missing = [k for k in ("dimension", "total", "minimums") if k not in table]
    if missing:
        return [f"{PARAM} lacks {', '.join(missing)}"]
    minimums = table["minimums"]
    if not isinstance(minimums, dict) or not minimums or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in minimums.values()):
        return [f"{PARAM}.minimums must map each verdict label to its lowest value"]
    if rubric is None:
        return []
    out = []
    dims = {d.id: d for d in rubric.dimensions}
    dim = dims.get(str(table["dimension"]))
    if dim is None or dim.kind != "categorical":
        out.append(f"{PARAM}.dimension {table['dimension']!r} is not a categorical dimension")
    elif set(minimums) != set(dim.choices):
        out.append(f"{PARAM}.minimums labels {sorted(minimums)} differ from the choices of "
                   f"{dim.id!r} {sorted(dim.choices)}")
    if str(table["total"]) not in {t.id for t in rubric.totals}:
        out.append(f"{PARAM}.total {table['total']!r} is not one of the rubric's totals")
    return out
