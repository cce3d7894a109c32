"""Average ranks and Spearman's rho with its t-test p-value, in numpy.

They give the floats :func:`scipy.stats.rankdata` and :func:`scipy.stats.spearmanr`
give, by the same steps, without importing :mod:`scipy.stats` (about 45 MB of memory
the analysis does not otherwise need).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from sheetflow.stats import _dist

__all__ = ["rankdata", "ranks_and_ties", "spearman_rho_p"]


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
