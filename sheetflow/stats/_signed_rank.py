"""The Wilcoxon signed-rank statistic and its p-value: exact, by enumeration, or normal.

Reproduces :func:`scipy.stats.wilcoxon` of scipy 1.17 for the options sheetflow offers
(without continuity correction, scipy's default), in numpy, so that the analysis does
not import :mod:`scipy.stats` (about 45 MB of memory it does not otherwise need). The
rule that picks the p-value's method is sheetflow's own, whatever scipy is installed:
see :func:`signed_rank_test`.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from sheetflow.stats import _dist, _ranks

__all__ = ["ENUMERATION_LIMIT", "EXACT_LIMIT", "SignedRank", "choose_method",
           "signed_rank_test"]

EXACT_LIMIT = 50
"""Up to this many differences (zeros included), without ties or zeros, "auto" uses the
exact null distribution."""

ENUMERATION_LIMIT = 13
"""Up to this many differences with ties or zeros, "auto" enumerates all sign changes
(2**13 = 8192 of them)."""

Method = Literal["exact", "enumeration", "approx"]


def choose_method(n: int, has_ties: bool, has_zeros: bool) -> Method:
    """The p-value method "auto" picks for ``n`` differences (zeros included)."""
    if n > EXACT_LIMIT:
        return "approx"
    if not (has_ties or has_zeros):
        return "exact"
    return "enumeration" if n <= ENUMERATION_LIMIT else "approx"


class SignedRank(NamedTuple):
    """What :func:`signed_rank_test` gives."""

    statistic: float
    """``min(W+, W-)`` for "two-sided", ``W+`` otherwise (``W+`` of the zero method)."""
    p: float
    """The p-value, by the method asked for (or the one "auto" picks)."""
    v: float
    """``W+`` of the non-zero differences ranked without the zeros (R's ``V``), whatever
    the zero method."""


def signed_rank_test(d: np.ndarray, *, alternative: str, zero_method: str,
                     method: str, correction: bool = False) -> SignedRank:
    """Wilcoxon's signed-rank test of the differences ``d`` (no NaN, not all zero).

    Parameters
    ----------
    d : numpy.ndarray
        The differences.
    alternative : {"two-sided", "greater", "less"}
    zero_method : {"wilcox", "pratt", "zsplit"}
    method : {"auto", "exact", "approx"}
    correction : bool, default False
        Continuity correction of the normal approximation (no effect on the other
        methods).

    Returns
    -------
    SignedRank
        ``(statistic, p, v)``: ``statistic`` is ``min(W+, W-)`` for "two-sided" and
        ``W+`` otherwise, with ``W+`` the statistic of ``zero_method``; ``v`` is ``W+``
        of the non-zero differences ranked alone (the "wilcox" ``W+``), from the same
        ranks.

    Notes
    -----
    "wilcox" ranks the non-zero ``|d|``; "pratt" ranks all ``|d|`` and counts only the
    non-zero ranks; "zsplit" ranks all and adds half the zeros' ranks to both sums.
    Ties get average ranks.

    "exact": the null distribution of the rank sum of ``m`` untied ranks (``m`` the
    number ranked), by dynamic programming. With ties or zeros it is no longer exact
    and, as scipy 1.17 does, ``W+`` is rounded up for the lower tail and down for the
    upper, so the p-value errs on the large side. Two-sided: twice the smaller tail,
    capped at 1.

    "approx": ``z = (W+ - m(m+1)/4) / se`` on the standard normal, ``se^2 = (m(m+1)
    (2m+1) - sum(t^3 - t) / 2) / 24`` over the tie groups ``t``; "pratt" takes the
    zeros' share out of the mean and variance (Cureton 1967) and leaves them out of the
    tie term. ``correction`` first moves ``W+`` half a unit against the alternative
    (down for "greater", up for "less", towards the mean for two-sided), as R
    ``wilcox.test(correct = TRUE)`` and scipy ``correction=True`` do.

    "auto": the normal approximation above 50 differences (zeros included); up to
    50 without ties or zeros, "exact"; with ties or zeros, up to 13 differences the
    p-value counts, over all ``2^n`` equally likely sign changes of ``d``, the
    statistics at least as extreme as the observed one (exact given the ties), and
    above 13 the normal approximation.
    """
    stat = _Statistic(d, zero_method)
    if method == "auto":
        method = choose_method(d.size, stat.has_ties, bool((d == 0).any()))
    if method == "exact":
        p = _exact_p(stat.w_plus, stat.count, alternative)
    elif method == "enumeration":
        p = _enumerated_p(stat, alternative)
    else:
        p = _normal_p(stat.corrected_z(alternative) if correction else stat.z, alternative)
    statistic = min(stat.w_plus, stat.w_minus) if alternative == "two-sided" else stat.w_plus
    return SignedRank(float(statistic), float(p), stat.v)


class _Statistic:
    """``W+``, ``W-`` and the normal approximation's ``z`` for ``d`` under a zero method,
    and ``v``, the "wilcox" ``W+``, from one ranking of ``|d|``.

    Sums are formed in scipy's order, so the floats are scipy's.
    """

    def __init__(self, d: np.ndarray, zero_method: str) -> None:
        zeros = d == 0
        if zero_method == "wilcox":
            d = d[~zeros]
            zeros = zeros[~zeros]
        self.count = d.size
        self.ranks, ties = _ranks.ranks_and_ties(np.abs(d))
        ties = ties.astype(float)
        self.has_ties = bool((ties > 1).any())
        self.positive, self.negative = d > 0, d < 0
        self.w_plus = float(np.sum(self.positive * self.ranks))
        self.w_minus = float(np.sum(self.negative * self.ranks))
        # the zeros take the lowest ranks, so each non-zero difference ranks higher by
        # their count than among the non-zero ones alone; ranks are multiples of 1/2,
        # so every sum here is exact: v is the very float that ranking without the
        # zeros gives
        self.v = self.w_plus - float(zeros.sum()) * float(self.positive.sum())
        self.shift = 0.0
        if zero_method == "zsplit":
            self.shift = float(np.sum(zeros * self.ranks) / 2)
            self.w_plus, self.w_minus = self.w_plus + self.shift, self.w_minus + self.shift
        n = float(self.count)
        mean, var = n * (n + 1.0) * 0.25, n * (n + 1.0) * (2.0 * n + 1.0)
        if zero_method == "pratt" and zeros.any():
            z0 = float(zeros.sum())
            mean -= z0 * (z0 + 1.0) * 0.25
            var -= z0 * (z0 + 1.0) * (2.0 * z0 + 1.0)
            ties[0] = 0.0  # the zeros, ranked lowest, are no tie group here
        self.mean = mean
        self.se = np.sqrt((var - np.sum(ties**3 - ties) / 2) / 24)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.z = (self.w_plus - mean) / self.se

    def corrected_z(self, alternative: str) -> float:
        """``z`` with the continuity correction: R's and scipy's half unit, against the
        alternative (towards the mean for two-sided)."""
        half = {"greater": 0.5, "less": -0.5}.get(alternative,
                                                  0.5 * np.sign(self.w_plus - self.mean))
        with np.errstate(divide="ignore", invalid="ignore"):
            return float((self.w_plus - self.mean - half) / self.se)


def _normal_p(z: float, alternative: str) -> float:
    if alternative == "less":
        return float(_dist.norm_cdf(z))
    if alternative == "greater":
        return float(_dist.norm_sf(z))
    return float(2 * _dist.norm_sf(np.abs(z)))


def _exact_p(w_plus: float, m: int, alternative: str) -> float:
    """The p-value of ``W+`` on the exact null distribution of the rank sum of ``m``."""
    pmf = _null_pmf(m)
    low, high = int(np.ceil(w_plus)), int(np.floor(w_plus))
    if alternative == "less":
        p = _lower_tail(pmf, low)
    elif alternative == "greater":
        p = _upper_tail(pmf, high)
    else:
        p = 2 * min(_upper_tail(pmf, high), _lower_tail(pmf, low))
    return float(np.clip(p, 0.0, 1.0))


def _null_pmf(m: int) -> np.ndarray:
    """``P(W+ = w)``, ``w = 0 .. m(m+1)/2``, for ``m`` untied ranks: each rank joins the
    sum with probability 1/2 (scipy's recursion)."""
    pmf = np.ones(1)
    for k in range(1, m + 1):
        previous = pmf
        pmf = np.zeros(k * (k + 1) // 2 + 1)
        pmf[:previous.size] = previous * 0.5
        pmf[-previous.size:] += previous * 0.5
    return pmf


def _lower_tail(pmf: np.ndarray, k: int) -> float:
    """``P(W+ <= k)``, summing the smaller side (the other as its complement)."""
    if k <= (pmf.size - 1) / 2:
        return float(pmf[:k + 1].sum())
    return float(1 - pmf[k + 1:].sum())


def _upper_tail(pmf: np.ndarray, k: int) -> float:
    """``P(W+ >= k)``, summing the smaller side (the other as its complement)."""
    if k >= (pmf.size - 1) / 2:
        return float(pmf[k:].sum())
    return float(1 - pmf[:k].sum())


def _enumerated_p(stat: _Statistic, alternative: str) -> float:
    """The share of the ``2^m`` sign changes of the non-zero differences whose ``W+`` is
    at most (at least) the observed one. Ranks are multiples of 1/2, so the sums are
    counted on a grid of halves, by dynamic programming."""
    halves = np.rint(2 * stat.ranks[stat.positive | stat.negative]).astype(np.int64)
    counts = np.zeros(int(halves.sum()) + 1)
    counts[0] = 1.0
    for h in halves:
        counts[h:] = counts[h:] + counts[:counts.size - h]
    observed = int(np.rint(2 * (stat.w_plus - stat.shift)))
    total = 2.0**halves.size
    less, greater = counts[:observed + 1].sum() / total, counts[observed:].sum() / total
    p = {"less": less, "greater": greater}.get(alternative, 2 * min(less, greater))
    return float(np.clip(p, 0.0, 1.0))
