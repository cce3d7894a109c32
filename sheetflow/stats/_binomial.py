"""The exact binomial test (two-sided, "minlike") and the Clopper-Pearson interval.

Written with :mod:`scipy.special` so that the analysis does not import
:mod:`scipy.stats` (about 45 MB of memory it does not otherwise need). The p-value
follows :func:`scipy.stats.binomtest`'s algorithm step by step; the interval is the
exact Clopper-Pearson one through the inverse regularized incomplete beta function, as
R's ``binom.test`` computes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import special

__all__ = ["binomial_cdf", "binomial_pmf", "binomial_sf", "binomial_test_p",
           "clopper_pearson"]

_RELATIVE_ERROR = 1 + 1e-7
"""Outcomes whose probability is within this factor of the observed one's count as no
more probable (scipy's and R's tolerance against rounding)."""


def binomial_pmf(k: int, n: int, p: float) -> float:
    """``P(X = k)`` for ``X ~ Binomial(n, p)``, from the log of the binomial
    coefficient (:func:`scipy.special.gammaln`) and ``xlogy``/``xlog1py``."""
    if k < 0 or k > n:
        return 0.0
    log_choose = special.gammaln(n + 1) - (special.gammaln(k + 1) + special.gammaln(n - k + 1))
    return float(math.exp(log_choose + special.xlogy(k, p) + special.xlog1py(n - k, -p)))


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(X <= k)``: 0 below 0, 1 from ``n`` on, else ``I_{1-p}(n - k, k + 1)``."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return float(special.betainc(n - k, k + 1, 1.0 - p))


def binomial_sf(k: int, n: int, p: float) -> float:
    """``P(X > k)``: 1 below 0, 0 from ``n`` on, else ``I_p(k + 1, n - k)``."""
    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    return float(special.betainc(k + 1, n - k, p))


def binomial_test_p(k: int, n: int, p: float) -> float:
    """Two-sided exact p-value of ``k`` successes in ``n`` trials against share ``p``.

    Parameters
    ----------
    k, n : int
        Successes and trials, ``0 <= k <= n``, ``n >= 1``.
    p : float
        The share under the null hypothesis, in [0, 1].

    Returns
    -------
    float
        The probability of the outcomes no more probable than ``k`` (within a relative
        1e-7), capped at 1: :func:`scipy.stats.binomtest`'s two-sided p-value. The
        outcomes on the other side of the mode are found by a binary search.
    """
    d = binomial_pmf(k, n, p)
    if k == p * n:
        return 1.0
    if k < p * n:
        ix = _search(lambda x: -binomial_pmf(x, n, p), -d * _RELATIVE_ERROR,
                     math.ceil(p * n), n)
        y = n - ix + int(d * _RELATIVE_ERROR == binomial_pmf(ix, n, p))
        pval = binomial_cdf(k, n, p) + binomial_sf(n - y, n, p)
    else:
        ix = _search(lambda x: binomial_pmf(x, n, p), d * _RELATIVE_ERROR,
                     0, math.floor(p * n))
        pval = binomial_cdf(ix, n, p) + binomial_sf(k - 1, n, p)
    return min(1.0, pval)


def _search(a: Callable[[int], float], d: float, lo: int, hi: int) -> int:
    """The ``i`` in ``[lo - 1, hi]`` with ``a(i) <= d < a(i + 1)``, for ``a`` increasing
    on ``[lo, hi]`` (scipy's ``_binary_search_for_binom_tst``)."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        value = a(mid)
        if value < d:
            lo = mid + 1
        elif value > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """The exact two-sided Clopper-Pearson interval for the share ``k / n``.

    Parameters
    ----------
    k, n : int
        Successes and trials, ``0 <= k <= n``, ``n >= 1``.
    confidence : float
        Coverage, in (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        With ``a = (1 - confidence) / 2``: ``low`` is the share at which ``P(X >= k) =
        a`` (``special.betaincinv(k, n - k + 1, a)``; 0 when ``k = 0``) and ``high``
        the share at which ``P(X <= k) = a`` (``special.betaincinv(k + 1, n - k, 1 -
        a)``; 1 when ``k = n``): R's ``qbeta`` bounds.
    """
    alpha = (1 - confidence) / 2
    low = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha))
    high = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1 - alpha))
    return low, high
