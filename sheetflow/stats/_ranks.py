"""Average ranks and Spearman's rho with its t-test p-value, in numpy.

They give the floats :func:`scipy.stats.rankdata` and :func:`scipy.stats.spearmanr`
give, by the same steps, without importing :mod:`scipy.stats` (about 45 MB of memory
the analysis does not otherwise need).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from sheetflow.stats import _dist

__all__ = ["EXACT_MAX_N", "rankdata", "ranks_and_ties", "spearman_exact_p", "spearman_rho_p"]


def rankdata(values: ArrayLike) -> np.ndarray:
    """Ranks 1..n of a 1-d array, ties sharing the mean of their ranks.

    Parameters
    ----------
    values : array_like
        The values (no NaN: the callers drop missing values first).

    Returns
    -------
    numpy.ndarray of float
        ``scipy.stats.rankdata(values)`` (its default ``method="average"``).
    """
    return ranks_and_ties(values)[0]


def ranks_and_ties(values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rankdata` of ``values`` and the sizes of their groups of equal values, in
    increasing order of the value, from one sort.

    Parameters
    ----------
    values : array_like
        The values (no NaN).

    Returns
    -------
    (ranks, counts) : tuple of numpy.ndarray
        The average ranks (float), and the size of each group of equal values (int).
    """
    x = np.asarray(values).ravel()
    order, starts, counts = _groups(x)
    mean_rank = (starts + 1.0) + (counts - 1.0) / 2.0
    ranks = np.empty(x.size, dtype=float)
    ranks[order] = np.repeat(mean_rank, counts)
    return ranks, counts


def _groups(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stable sort order of ``x``, and where each run of equal values starts in it
    and how long it is."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    new = np.concatenate([[True], ordered[1:] != ordered[:-1]]) if x.size else np.array([], bool)
    starts = np.flatnonzero(new)
    counts = np.diff(starts, append=x.size)
    return order, starts, counts


def spearman_rho_p(a: ArrayLike, b: ArrayLike) -> tuple[float, float]:
    """Spearman's rho and its two-sided p-value, as :func:`scipy.stats.spearmanr`.

    Parameters
    ----------
    a, b : array_like
        Paired values: at least three pairs, no NaN, neither constant (the callers
        check this).

    Returns
    -------
    (rho, p) : tuple of float
        ``rho`` is Pearson's r of the average ranks (:func:`numpy.corrcoef`);
        ``p = 2 * t_sf(|t|, n - 2)`` with ``t = rho * sqrt((n - 2) / ((1 + rho)(1 -
        rho)))``, the fraction clipped at 0 against rounding; ``|rho| = 1`` gives an
        infinite ``t`` and ``p = 0``.
    """
    ranked = np.column_stack([rankdata(a), rankdata(b)])
    rho = np.corrcoef(ranked, rowvar=False)[1, 0]
    dof = ranked.shape[0] - 2
    with np.errstate(divide="ignore"):
        t = rho * np.sqrt((dof / ((rho + 1.0) * (1.0 - rho))).clip(0))
    return float(rho), float(2 * _dist.t_sf(np.abs(t), dof))


EXACT_MAX_N = 10
"""Up to this many pairs without ties, Spearman's p comes from its exact null
distribution (the t approximation is poor on few pairs; 10! orderings are counted
in a few milliseconds)."""


def spearman_exact_p(ranks_a: np.ndarray, ranks_b: np.ndarray) -> float | None:
    """Spearman's two-sided p from the exact permutation distribution, without ties.

    Parameters
    ----------
    ranks_a, ranks_b : numpy.ndarray
        The ranks (:func:`rankdata`) of paired values, no NaN.

    Returns
    -------
    float or None
        With :math:`S = \\sum (r_a - r_b)^2` and every ordering of one side equally
        likely, ``min(1, 2 min(P(S <= s), P(S >= s)))``: the exact p for up to
        :data:`EXACT_MAX_N` pairs, and ``2 / n!`` at :math:`|\\rho| = 1` for any n
        (one ordering of the n! gives S = 0, one the largest S). None where a side
        holds ties (its ranks are not a permutation) or n is too large to count.
    """
    n = int(ranks_a.size)
    if not (_untied(ranks_a) and _untied(ranks_b)):
        return None
    s = round(float(((ranks_a - ranks_b) ** 2).sum()))
    largest = n * (n * n - 1) // 3
    if s in (0, largest):
        return min(1.0, 2.0 / math.factorial(n))
    if n > EXACT_MAX_N:
        return None
    counts = _s_counts(n)
    total = float(counts.sum())
    low, high = counts[: s + 1].sum() / total, counts[s:].sum() / total
    return float(min(1.0, 2.0 * min(low, high)))


def _untied(ranks: np.ndarray) -> bool:
    """Whether average ranks are 1..n each once (no two values equal)."""
    return bool((np.sort(ranks) == np.arange(1, ranks.size + 1)).all())


@lru_cache(maxsize=EXACT_MAX_N + 1)
def _s_counts(n: int) -> np.ndarray:
    """How many of the n! orderings give each :math:`S = \\sum_i (i - \\pi(i))^2`.

    Positions are filled in order; a state is the set of ranks already placed (a bit
    mask), so the 2^n states carry counts by S instead of n! orderings one by one.
    """
    size = n * (n * n - 1) // 3 + 1
    table = np.zeros((1 << n, size), dtype=np.int64)
    table[0, 0] = 1
    for mask in range(1 << n):  # a mask only ever adds bits, so it is final here
        row = table[mask]
        if not row.any():
            continue
        place = bin(mask).count("1")
        for rank in range(n):
            if not mask >> rank & 1:
                step = (place - rank) ** 2
                table[mask | 1 << rank, step:] += row[: size - step]
    return table[-1]
