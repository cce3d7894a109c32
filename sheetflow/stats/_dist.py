"""Quantiles and tail probabilities of the continuous distributions the statistics use.

Each function gives the same floats as the :mod:`scipy.stats` method it names: both
call the same :mod:`scipy.special` function, and the special cases (a quantile at
``q = 0`` or ``1``, an ``x`` at or beyond the support's ends, NaN, a non-positive
degrees-of-freedom argument) are settled here as ``scipy.stats`` settles them.
Importing :mod:`scipy.stats` loads :mod:`scipy.optimize` and much else: about 45 MB of
memory that the analysis does not otherwise need.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

__all__ = ["chi2_sf", "f_ppf", "f_sf", "logistic_cdf", "norm_cdf", "norm_ppf", "norm_sf",
           "t_ppf", "t_sf"]


def norm_ppf(q: ArrayLike) -> np.ndarray | np.float64:
    """Standard normal quantile: ``scipy.stats.norm.ppf(q)``, i.e. ``special.ndtri(q)``
    (``-inf`` at 0, ``inf`` at 1, NaN outside [0, 1])."""
    return special.ndtri(q)


def norm_sf(x: ArrayLike) -> np.ndarray | np.float64:
    """Standard normal upper tail: ``scipy.stats.norm.sf(x)``, i.e. ``special.ndtr(-x)``."""
    return special.ndtr(-np.asarray(x, dtype=float))


def norm_cdf(x: ArrayLike) -> np.ndarray | np.float64:
    """Standard normal distribution function: ``scipy.stats.norm.cdf(x)``, i.e.
    ``special.ndtr(x)``."""
    return special.ndtr(x)


def logistic_cdf(x: ArrayLike) -> np.ndarray | np.float64:
    """Standard logistic distribution function: ``scipy.stats.logistic.cdf(x)``, i.e.
    ``special.expit(x)`` (0 at ``-inf``, 1 at ``inf``)."""
    return special.expit(x)


def t_ppf(q: ArrayLike, df: ArrayLike) -> np.ndarray | np.float64:
    """Student t quantile: ``scipy.stats.t.ppf(q, df)``, i.e. ``special.stdtrit(df, q)``.

    ``-inf`` at ``q = 0`` and ``inf`` at 1; NaN for ``q`` outside [0, 1] or ``df <= 0``.
    """
    return _ppf(lambda p, d: special.stdtrit(d, p), q, (df,), lower=-np.inf)


def t_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray | np.float64:
    """Student t upper tail: ``scipy.stats.t.sf(x, df)``, i.e. ``special.stdtr(df, -x)``.

    1 at ``x = -inf``, 0 at ``inf``; NaN for NaN ``x`` or ``df <= 0``.
    """
    return _sf(lambda v, d: special.stdtr(d, -v), x, (df,), lower=-np.inf)


def f_ppf(q: ArrayLike, dfn: ArrayLike, dfd: ArrayLike) -> np.ndarray | np.float64:
    """F quantile: ``scipy.stats.f.ppf(q, dfn, dfd)``, i.e. ``special.fdtri(dfn, dfd, q)``.

    0 at ``q = 0`` and ``inf`` at 1; NaN for ``q`` outside [0, 1] or a df ``<= 0``.
    """
    return _ppf(lambda p, a, b: special.fdtri(a, b, p), q, (dfn, dfd), lower=0.0)


def f_sf(x: ArrayLike, dfn: ArrayLike, dfd: ArrayLike) -> np.ndarray | np.float64:
    """F upper tail: ``scipy.stats.f.sf(x, dfn, dfd)``, i.e. ``special.fdtrc(dfn, dfd, x)``.

    1 for ``x <= 0``, 0 at ``inf``; NaN for NaN ``x`` or a df ``<= 0``.
    """
    return _sf(lambda v, a, b: special.fdtrc(a, b, v), x, (dfn, dfd), lower=0.0)


def chi2_sf(x: ArrayLike, df: ArrayLike) -> np.ndarray | np.float64:
    """Chi-square upper tail: ``scipy.stats.chi2.sf(x, df)``, i.e.
    ``special.chdtrc(df, x)``.

    1 for ``x <= 0``, 0 at ``inf``; NaN for NaN ``x`` or ``df <= 0``.
    """
    return _sf(lambda v, d: special.chdtrc(d, v), x, (df,), lower=0.0)


def _valid(shapes: tuple[np.ndarray, ...]) -> np.ndarray:
    """Where every shape parameter is positive (scipy's default argument check)."""
    ok = np.asarray(True)
    with np.errstate(invalid="ignore"):
        for shape in shapes:
            ok = ok & (shape > 0)
    return ok


def _ppf(func: Callable[..., np.ndarray], q: ArrayLike, shapes: tuple[ArrayLike, ...],
         lower: float) -> np.ndarray | np.float64:
    """``rv_continuous.ppf`` without loc and scale: ``func`` inside (0, 1), the support's
    ends at 0 and 1, NaN elsewhere and for invalid shapes."""
    q = np.asarray(q, dtype=float)
    args = tuple(np.asarray(s, dtype=float) for s in shapes)
    ok = _valid(args)
    with np.errstate(all="ignore"):
        values = func(q, *args)
        out = np.where(ok & (q > 0) & (q < 1), values, np.nan)
        out = np.where(ok & (q == 0), lower, out)
        out = np.where(ok & (q == 1), np.inf, out)
    return out[()]


def _sf(func: Callable[..., np.ndarray], x: ArrayLike, shapes: tuple[ArrayLike, ...],
        lower: float) -> np.ndarray | np.float64:
    """``rv_continuous.sf`` without loc and scale: ``func`` inside the open support
    ``(lower, inf)``, 1 at or below ``lower``, 0 at ``inf``, NaN for NaN ``x`` or
    invalid shapes."""
    x = np.asarray(x, dtype=float)
    args = tuple(np.asarray(s, dtype=float) for s in shapes)
    ok = _valid(args)
    with np.errstate(all="ignore"):
        values = func(x, *args)
        out = np.where(ok & (x > lower) & (x < np.inf), values, 0.0)
        out = np.where(ok & (x <= lower), 1.0, out)
        out = np.where(~ok | np.isnan(x), np.nan, out)
    return out[()]
