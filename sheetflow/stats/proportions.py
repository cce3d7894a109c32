"""Shares of binary choices: an exact binomial test, and a preference freed of position.

Both serve paired judgements shown under neutral labels A and B: is a judge's share of
"A" choices different from one half (position bias), and which arm is preferred once
the side it was shown on is taken out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from . import _util

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
    ``p`` is :func:`scipy.stats.binomtest`'s two-sided exact p-value (the outcomes no
    more probable than the observed one, Clopper & Pearson's "minlike" rule as in R's
    ``binom.test``) and the interval is its exact Clopper-Pearson one [1]_. With no
    trial the share is NaN with the reason.

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
    res = stats.binomtest(int(k), int(n), p0)
    ci = res.proportion_ci(confidence_level=confidence, method="exact")
    return _util.frame({"n": int(n), "k": int(k), "share": k / n, "p": float(res.pvalue),
                        "ci_low": float(ci.low), "ci_high": float(ci.high), "reason": ""},
                       _SHARE_COLUMNS)


def position_free_preference(k_first: int, n_first: int, k_second: int, n_second: int, *,
                             confidence: float = 0.95) -> pd.DataFrame:
    """An arm's preference with its display position taken out.

    Parameters
    ----------
    k_first, n_first : int
        Decisive judgements in which the arm was shown under the first label (A): how
        many chose it, out of how many.
    k_second, n_second : int
        The same when the arm was shown under the second label (B).
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    pandas.DataFrame
        One row: the two strata (``n_first, k_first, share_first, n_second, k_second,
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
    row = {"n_first": int(n_first), "k_first": int(k_first), "n_second": int(n_second),
           "k_second": int(k_second), "share_first": k_first / n_first if n_first else np.nan,
           "share_second": k_second / n_second if n_second else np.nan}
    if not n_first or not n_second:
        return _util.frame({**row, "preference": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                            "position_log_odds": np.nan,
                            "reason": "the arm was never shown under one of the labels"},
                           _FREE_COLUMNS)
    cells = np.array([k_first, n_first - k_first, k_second, n_second - k_second], float)
    reason = ""
    if (cells == 0).any():
        cells += 0.5
        reason = "a stratum share is 0 or 1: Haldane-Anscombe correction (+0.5 per cell)"
    logit_a, logit_b = np.log(cells[0] / cells[1]), np.log(cells[2] / cells[3])
    beta0, beta1 = (logit_a + logit_b) / 2.0, (logit_a - logit_b) / 2.0
    se = 0.5 * np.sqrt((1 / cells).sum())
    z = stats.norm.ppf(0.5 + confidence / 2.0)
    expit = stats.logistic.cdf
    return _util.frame({**row, "preference": float(expit(beta0)),
                        "ci_low": float(expit(beta0 - z * se)),
                        "ci_high": float(expit(beta0 + z * se)),
                        "position_log_odds": float(beta1), "reason": reason}, _FREE_COLUMNS)
