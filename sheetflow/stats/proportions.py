"""Shares of binary choices: an exact binomial test, and a preference freed of position.

Both serve paired judgements shown under neutral labels A and B: is a judge's share of
"A" choices different from one half (position bias), and which arm is preferred once
the side it was shown on is taken out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from . import _binomial, _dist, _util

_SHARE_COLUMNS = ("n", "k", "share", "p", "ci_low", "ci_high", "reason")
_FREE_COLUMNS = ("n_first", "k_first", "share_first", "n_second", "k_second", "share_second",
                 "preference", "ci_low", "ci_high", "position_log_odds", "reason")


def binomial_share(k: int, n: int, *, p0: float = 0.5,
                   confidence: float = 0.95) -> pd.DataFrame:
    """The share ``k / n`` with an exact two-sided binomial test and Clopper-Pearson interval.

    Parameters
    ----------
    k : int
        Number of successes (e.g. decisive judgements that chose label A).
    n : int
        Number of trials (decisive judgements; ties left out by the caller).
    p0 : float, default 0.5
        The share under the null hypothesis.
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    pandas.DataFrame
        One row: ``n, k, share, p, ci_low, ci_high, reason``.

    Notes
    -----
    ``p`` is the two-sided exact p-value: the probability of the outcomes no more
    probable than the observed one (within a relative 1e-7), the "minlike" rule of R's
    ``binom.test``, computed by :func:`scipy.stats.binomtest`'s algorithm. The interval
    is the exact Clopper-Pearson one [1]_ (``qbeta`` bounds as in R, through
    :func:`scipy.special.betaincinv`). With no trial the share is NaN with the
    reason.

    References
    ----------
    .. [1] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial
           limits illustrated in the case of the binomial. Biometrika 26, 404-413.

    Examples
    --------
    R: ``binom.test(682, 925, p = 0.75)`` gives p-value 0.3825 and 95% CI
    0.7076683-0.7654066.

    >>> row = binomial_share(682, 925, p0=0.75).loc[0]
    >>> round(float(row["p"]), 4), round(float(row["ci_low"]), 7), round(float(row["ci_high"]), 7)
    (0.3825, 0.7076683, 0.7654066)
    """
    confidence = _util.check_confidence(confidence)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"Need 0 <= k <= n, got k={k}, n={n}.")
    if n == 0:
        return _util.frame({"n": 0, "k": 0, "share": np.nan, "p": np.nan, "ci_low": np.nan,
                            "ci_high": np.nan, "reason": "no decisive judgement"},
                           _SHARE_COLUMNS)
    if not 0 <= p0 <= 1:
        raise ValueError(f"p0 must lie between 0 and 1, got {p0}.")
    low, high = _binomial.clopper_pearson(int(k), int(n), confidence)
    return _util.frame({"n": int(n), "k": int(k), "share": k / n,
                        "p": _binomial.binomial_test_p(int(k), int(n), float(p0)),
                        "ci_low": low, "ci_high": high, "reason": ""}, _SHARE_COLUMNS)


def position_free_preference(k_first: ArrayLike, n_first: ArrayLike, k_second: ArrayLike,
                             n_second: ArrayLike, *, confidence: float = 0.95,
                             ) -> pd.DataFrame:
    """An arm's preference with its display position taken out.

    Parameters
    ----------
    k_first, n_first : int or array of int
        Decisive judgements in which the arm was shown under the first label (A): how
        many chose it, out of how many.
    k_second, n_second : int or array of int
        The same when the arm was shown under the second label (B). Arrays (of one
        length) give one row per element: e.g. one per rater, from one call.
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    pandas.DataFrame
        One row (per element): the two strata (``n_first, k_first, share_first,
        n_second, k_second,
        share_second``), ``preference`` (the probability of choosing the arm with
        position removed) and its interval, ``position_log_odds`` (how much more
        likely, in log odds, a choice is for the label A side) and ``reason``.

    Notes
    -----
    The logistic model :math:`\\mathrm{logit}\\,P(\\text{arm chosen}) = \\beta_0 +
    \\beta_1 x` with :math:`x = +1` when the arm sat under A and :math:`-1` under B has
    the closed-form maximum-likelihood solution :math:`\\beta_0 = (\\mathrm{logit}\\,s_A
    + \\mathrm{logit}\\,s_B)/2`, :math:`\\beta_1 = (\\mathrm{logit}\\,s_A -
    \\mathrm{logit}\\,s_B)/2`, with :math:`s_A, s_B` the stratum shares, and
    :math:`se(\\beta_0) = \\tfrac12\\sqrt{1/(n_A s_A(1-s_A)) + 1/(n_B s_B(1-s_B))}`
    (Wald). ``preference`` is :math:`\\mathrm{expit}(\\beta_0)`, its interval
    :math:`\\mathrm{expit}(\\beta_0 \\pm z\\,se)`. Because sides are randomised, the
    arm effect and the position effect are separated: a judge who always picks A has
    :math:`\\beta_0 = 0` (no arm preference) whatever the arms. A stratum share of 0
    or 1 has an infinite logit: there the Haldane-Anscombe correction (0.5 added to
    each cell of both strata) is used and the reason says so. An empty stratum makes
    the preference undefined (NaN with the reason).

    Examples
    --------
    >>> row = position_free_preference(9, 10, 1, 10).loc[0]  # always "A", no arm effect
    >>> round(float(row["preference"]), 3), round(float(row["position_log_odds"]), 3)
    (0.5, 2.197)
    """
    confidence = _util.check_confidence(confidence)
    k1, n1, k2, n2 = (np.atleast_1d(np.asarray(x, dtype=np.int64))
                      for x in (k_first, n_first, k_second, n_second))
    cells = np.stack([k1, n1 - k1, k2, n2 - k2], axis=1).astype(float)
    empty = (n1 == 0) | (n2 == 0)
    corrected = (cells == 0).any(axis=1) & ~empty
    cells[corrected] += 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        logit_a, logit_b = np.log(cells[:, 0] / cells[:, 1]), np.log(cells[:, 2] / cells[:, 3])
        beta0, beta1 = (logit_a + logit_b) / 2.0, (logit_a - logit_b) / 2.0
        se = 0.5 * np.sqrt((1 / cells).sum(axis=1))
        share1, share2 = k1 / np.where(n1 > 0, n1, 1), k2 / np.where(n2 > 0, n2, 1)
    z = _dist.norm_ppf(0.5 + confidence / 2.0)
    expit = _dist.logistic_cdf

    def undefined_if_empty(values: np.ndarray) -> np.ndarray:
        return np.where(empty, np.nan, values)

    reason = np.where(empty, "the arm was never shown under one of the labels", np.where(
        corrected, "a stratum share is 0 or 1: Haldane-Anscombe correction (+0.5 per cell)",
        ""))
    return pd.DataFrame({
        "n_first": n1, "k_first": k1, "share_first": np.where(n1 > 0, share1, np.nan),
        "n_second": n2, "k_second": k2, "share_second": np.where(n2 > 0, share2, np.nan),
        "preference": undefined_if_empty(expit(beta0)),
        "ci_low": undefined_if_empty(expit(beta0 - z * se)),
        "ci_high": undefined_if_empty(expit(beta0 + z * se)),
        "position_log_odds": undefined_if_empty(beta1), "reason": reason.astype(object)},
        columns=list(_FREE_COLUMNS))
