"""Effect sizes with intervals: the mean paired difference and its t interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sheetflow.stats import _dist, _util

__all__ = ["paired_mean_difference"]

_COLUMNS = ("mean_diff", "ci_low", "ci_high", "sd", "n", "df", "t", "p", "confidence",
            "reason")


def paired_mean_difference(x: Any, y: Any, *, confidence: float = 0.95) -> pd.DataFrame:
    """Mean of ``x - y`` over complete pairs with its Student t interval.

    Parameters
    ----------
    x, y : array_like
        Paired measurements of equal length; a pair with a missing value is dropped.
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    pandas.DataFrame
        One row: ``mean_diff, ci_low, ci_high, sd, n, df, t, p`` (two-sided paired t
        test), ``confidence, reason``. Fewer than two pairs give NaN with the reason;
        differences that are all equal give the mean with a zero-width interval.

    Notes
    -----
    The interval is ``mean +/- t_{(1+c)/2, n-1} * sd / sqrt(n)`` (Student 1908), the one
    R's ``t.test(x, y, paired = TRUE)`` reports.

    References
    ----------
    .. [1] Student (1908). The probable error of a mean. Biometrika 6(1), 1-25.

    Examples
    --------
    R ``t.test(extra ~ group, data = sleep, paired = TRUE)``: mean difference -1.58,
    95% CI -2.4598858 to -0.7001142, t = -4.0621, p = 0.002833.

    >>> g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    >>> g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    >>> res = paired_mean_difference(g1, g2)
    >>> [round(float(res.loc[0, c]), 7) for c in ("mean_diff", "ci_low", "ci_high")]
    [-1.58, -2.4598858, -0.7001142]
    """
    confidence = _util.check_confidence(confidence)
    a = np.asarray(x, dtype=float).ravel()
    b = np.asarray(y, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError("x and y must have the same length.")
    d = (a - b)[~np.isnan(a - b)]
    n = int(d.size)
    row: dict[str, Any] = {"n": n, "df": n - 1, "confidence": confidence}
    if n < 2:
        nan = float("nan")
        return _util.frame({**row, "mean_diff": float(d.mean()) if n else nan, "ci_low": nan,
                            "ci_high": nan, "sd": nan, "t": nan, "p": nan,
                            "reason": "fewer than two pairs"}, _COLUMNS)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    half = float(_dist.t_ppf((1 + confidence) / 2, n - 1)) * sd / np.sqrt(n)
    if sd == 0:
        t, p = float("nan"), float("nan")
        reason = "all differences are equal (no t test)"
    else:
        t = mean / (sd / np.sqrt(n))
        p = float(2 * _dist.t_sf(abs(t), n - 1))
        reason = ""
    return _util.frame({**row, "mean_diff": mean, "ci_low": mean - half, "ci_high": mean + half,
                        "sd": sd, "t": t, "p": p, "reason": reason}, _COLUMNS)
