"""Directional hypotheses between arms (protocol 004's H2-H4), checked at load.

A study lists them once::

    [analysis.params]
    hypotheses = [
      { id = "H2", better = "cell_b", worse = "cell_a", min_delta = 0.30 },
      { id = "H4", better = "cell_d", worse = "cell_a", relation = ">=" },
    ]

Each compares the ``better`` arm's trio mean with the ``worse`` arm's, per task
(:mod:`sheetflow.analysis.p004_judge_likert`). ``relation`` is the hypothesis's own
sign: ``">"`` (the default: "B > A", a tie is not in its direction) or ``">="`` ("D >=
A": a tie is; see :func:`directional`). An arm id misspelt here would compare
a cell with no scores and leave the hypothesis undefined in every task; ``check``
names it instead.
"""

from __future__ import annotations

from typing import Any

PARAM = "hypotheses"
RELATIONS = (">", ">=")


def directional(delta: float | None, tolerance: float, relation: str = ">") -> bool:
    """Whether ``delta`` (better minus worse) lies in the hypothesis's direction.

    Parameters
    ----------
    delta : float or None
        None or NaN (a cell without scores) is never directional.
    tolerance : float
        What rounding may leave of a tie (``direction_tolerance``).
    relation : {">", ">="}
        ``">"``: above ``tolerance`` (a tie is not directional); ``">="``: at or above
        ``-tolerance`` (a tie, to within rounding, is).

    Returns
    -------
    bool
    """
    if delta is None or delta != delta:
        return False
    return bool(delta >= -tolerance) if relation == ">=" else bool(delta > tolerance)


def problems(value: Any, arms: set[str]) -> list[str]:
    """What is wrong with a ``hypotheses`` list (empty when nothing is).

    Parameters
    ----------
    value : object
        ``[analysis.params] hypotheses`` as read.
    arms : set of str
        The design's arm ids (empty: not checked).

    Returns
    -------
    list of str
    """
    if not isinstance(value, list):
        return [f"{PARAM} must be a list of tables with id, better and worse"]
    out = []
    for n, h in enumerate(value, 1):
        if not isinstance(h, dict):
            out.append(f"{PARAM} entry {n} must be a table with id, better and worse")
            continue
        where = f"{PARAM} {h.get('id', n)!s}"
        missing = [k for k in ("id", "better", "worse") if k not in h]
        if missing:
            out.append(f"{where} lacks {', '.join(missing)}")
        out += [f"{where}: {side} = {h[side]!r} is not one of the design's arms "
                f"{sorted(arms)}" for side in ("better", "worse")
                if arms and side in h and h[side] not in arms]
        delta = h.get("min_delta", 0.0)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            out.append(f"{where}: min_delta = {delta!r} must be a number")
        if h.get("relation", ">") not in RELATIONS:
            out.append(f"{where}: relation = {h['relation']!r} must be \">\" (a tie is "
                       "not in the direction) or \">=\" (a tie is)")
    return out
