"""Intervals for proportions: Wilson's score interval and Newcombe's for a difference.

Protocol 001 reports each arm's yield with an interval and the gap between two arms
with one: "fewer items means a wider interval, reported, not hidden".
"""

from __future__ import annotations

import math

import pandas as pd

from sheetflow.stats import _dist

_SHARE = ("k", "n", "share", "ci_low", "ci_high", "reason")
_DIFF = ("k1", "n1", "k2", "n2", "diff", "ci_low", "ci_high", "reason")


def wilson_interval(k: int, n: int, *, confidence: float = 0.95) -> pd.DataFrame:
    """The share ``k / n`` with Wilson's score interval.

    Parameters
    ----------
    k, n : int
        Successes and trials (``0 <= k <= n``).
    confidence : float, default 0.95

    Returns
    -------
    pandas.DataFrame
        One row: ``k, n, share, ci_low, ci_high, reason`` (NaN with the reason when
        ``n`` is 0).

    Notes
    -----
    Wilson (1927) [1]_, without continuity correction: the bounds are
    ``(p + z^2/2n -/+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``; unlike the Wald
    interval it stays inside [0, 1] and is not empty at ``k = 0`` or ``k = n``.

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and
           statistical inference. J. Am. Stat. Assoc. 22, 209-212.
    .. [2] Newcombe, R. G. (1998). Two-sided confidence intervals for the single
           proportion: comparison of seven methods. Stat. Med. 17, 857-872.

    Examples
    --------
    Newcombe (1998) [2]_, Table I: 81/263 gives 0.2553 to 0.3662.

    >>> row = wilson_interval(81, 263).loc[0]
    >>> round(float(row["ci_low"]), 4), round(float(row["ci_high"]), 4)
    (0.2553, 0.3662)
    """
    _check(k, n)
    if n == 0:
        return pd.DataFrame([dict(zip(_SHARE, (k, n, math.nan, math.nan, math.nan,
                                               "no trials"), strict=True))])
    low, high = _wilson(k, n, _z(confidence))
    return pd.DataFrame([dict(zip(_SHARE, (k, n, k / n, low, high, ""), strict=True))])


def newcombe_difference(k1: int, n1: int, k2: int, n2: int, *,
                        confidence: float = 0.95) -> pd.DataFrame:
    """The difference of two independent proportions with Newcombe's hybrid interval.

    Parameters
    ----------
    k1, n1 : int
        Successes and trials of the first group.
    k2, n2 : int
        Successes and trials of the second group.
    confidence : float, default 0.95

    Returns
    -------
    pandas.DataFrame
        One row: ``k1, n1, k2, n2, diff, ci_low, ci_high, reason``; ``diff`` is
        ``k1/n1 - k2/n2`` (NaN with the reason when a group is empty).

    Notes
    -----
    Newcombe's method 10 [1]_: with Wilson intervals ``(l1, u1)`` and ``(l2, u2)`` and
    ``d = p1 - p2``, the bounds are ``d - sqrt((p1-l1)^2 + (u2-p2)^2)`` and
    ``d + sqrt((u1-p1)^2 + (p2-l2)^2)``.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between
           independent proportions: comparison of eleven methods. Stat. Med. 17,
           873-890.

    Examples
    --------
    Newcombe (1998) [1]_, Table II, example (a): 56/70 - 48/80 gives 0.0524 to 0.3339.

    >>> row = newcombe_difference(56, 70, 48, 80).loc[0]
    >>> round(float(row["ci_low"]), 4), round(float(row["ci_high"]), 4)
    (0.0524, 0.3339)
    """
    _check(k1, n1)
    _check(k2, n2)
    if n1 == 0 or n2 == 0:
        return pd.DataFrame([dict(zip(_DIFF, (k1, n1, k2, n2, math.nan, math.nan, math.nan,
                                              "a group has no trials"), strict=True))])
    z = _z(confidence)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, z)
    l2, u2 = _wilson(k2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return pd.DataFrame([dict(zip(_DIFF, (k1, n1, k2, n2, d, low, high, ""), strict=True))])


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    denom = 1 + z * z / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # at k = 0 the lower bound is 0 exactly (and at k = n the upper is 1): centre and
    # half are equal there, and their difference in floating point was 2e-17
    low = 0.0 if k == 0 else max(0.0, (centre - half) / denom)
    high = 1.0 if k == n else min(1.0, (centre + half) / denom)
    return low, high


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence!r}")
    return float(_dist.norm_ppf(0.5 + confidence / 2))


def _check(k: int, n: int) -> None:
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, not k={k}, n={n}")
