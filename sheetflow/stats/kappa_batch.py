"""Fleiss' and Cohen's kappa with their intervals for many complete data sets at once.

The same estimates and intervals as :func:`sheetflow.stats.fleiss_kappa` and
:func:`sheetflow.stats.cohen_kappa` (unweighted, or for Cohen's kappa with any agreement
weights), computed with array operations over a stack of data sets, for the planner's
simulated studies (hundreds of data sets of one size, every unit rated by every rater).
"""

from __future__ import annotations

import numpy as np

from sheetflow.stats import _dist, _util
from sheetflow.stats.kappa import _kappa_batch

__all__ = ["cohen_kappa_batch", "fleiss_kappa_complete_batch"]


def fleiss_kappa_complete_batch(counts: np.ndarray, confidence: float = 0.95,
                                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fleiss' kappa and its interval for ``S`` complete data sets.

    Parameters
    ----------
    counts : ndarray, shape (S, n, q)
        Ratings per category in each unit of each data set; every unit holds the same
        number ``m >= 2`` of ratings (no missing ratings), ``n >= 2`` units.
    confidence : float, default 0.95

    Returns
    -------
    (kappa, low, high) : ndarrays of shape (S,)
        As :func:`sheetflow.stats.fleiss_kappa` gives them: Fleiss (1971) kappa,
        Gwet's (2014) non-null variance, ``kappa +/- t_{n-1} se`` with the upper end
        capped at 1; NaN where chance agreement is 1 (one category on every unit compared).
    """
    confidence = _util.check_confidence(confidence)
    counts = np.asarray(counts, dtype=float)
    _, n, _ = counts.shape
    m = counts[0, 0].sum()
    if m < 2 or n < 2 or not np.allclose(counts.sum(axis=2), m):
        raise ValueError("every unit must hold the same number (>= 2) of ratings, and "
                         "a data set needs two or more units.")
    p_o_unit = (counts * (counts - 1.0)).sum(axis=2) / (m * (m - 1.0))  # (S, n)
    pi = counts.mean(axis=1) / m  # (S, q)
    p_e = (pi**2).sum(axis=1)
    p_e_unit = np.einsum("suk,sk->su", counts, pi) / m
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = _util.tied_difference(p_o_unit.mean(axis=1), p_e) / (1.0 - p_e)
        unit = (p_o_unit - p_e[:, None]) / (1.0 - p_e[:, None])
        star = unit - 2.0 * (1.0 - kappa[:, None]) * (p_e_unit - p_e[:, None]) / (
            1.0 - p_e[:, None])
        se = np.sqrt(((star - kappa[:, None]) ** 2).sum(axis=1) / (n * (n - 1.0)))
    kappa = np.where(p_e >= 1.0 - 1e-12, np.nan, kappa)
    t = _dist.t_ppf(0.5 + confidence / 2.0, n - 1)
    return kappa, kappa - t * se, np.minimum(1.0, kappa + t * se)


def cohen_kappa_batch(codes: np.ndarray, categories: int, confidence: float = 0.95,
                      weights: np.ndarray | None = None,
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cohen's kappa, unweighted or weighted, and its interval for ``S`` two-rater data sets.

    Parameters
    ----------
    codes : ndarray of int, shape (S, 2, n)
        Category codes ``0 .. categories - 1`` of both raters on every unit.
    categories : int
        The number of categories of the domain.
    confidence : float, default 0.95
    weights : ndarray, shape (categories, categories), optional
        Agreement weights ``w[k, l]`` over the codes (as
        :func:`sheetflow.stats._weights.agreement_weights` gives them); default the
        identity, Cohen's unweighted kappa.

    Returns
    -------
    (kappa, low, high) : ndarrays of shape (S,)
        As :func:`sheetflow.stats.cohen_kappa` gives them with the same weights: the
        Fleiss-Cohen-Everitt (1969) non-null standard error and ``kappa +/- z se`` (not
        clipped); NaN where chance agreement is 1.
    """
    confidence = _util.check_confidence(confidence)
    codes = np.asarray(codes)
    sets, raters, _ = codes.shape
    if raters != 2:
        raise ValueError("Cohen's kappa is for exactly two raters.")
    w = np.eye(categories) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (categories, categories):
        raise ValueError("weights must be a categories x categories array.")
    cells = (codes[:, 0] * categories + codes[:, 1]) + (np.arange(sets) * categories**2)[:, None]
    tables = np.bincount(cells.ravel(), minlength=sets * categories**2).astype(float)
    res = _kappa_batch(tables.reshape(sets, categories, categories), w, confidence)
    return res["kappa"], res["ci_low"], res["ci_high"]
