"""Agreement on numeric scores: mean Spearman rho and agreement within a tolerance."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd

from sheetflow.stats import _dist, _ranks, _util

__all__ = ["mean_spearman", "tolerance_agreement"]

RHO_COLUMNS = (
    "rho", "z", "p", "n_units", "n_raters", "n_pairs", "n_perfect", "n_dropped", "fisher",
    "reason",
)  # fmt: skip
TOLERANCE_COLUMNS = ("agreement", "n_agree", "n_units", "n_raters", "tolerance", "n_dropped",
                     "reason")  # fmt: skip


@_util.shared_doc
def mean_spearman(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                  value: str = "value", fisher: bool = True) -> pd.DataFrame:
    """Mean of Spearman's rank correlations over all pairs of raters.

    The ratings must be numeric (ordinal scores).

    Parameters
    ----------
    {data}
    {columns}
    fisher : bool, default True
        Average the correlations on Fisher's z scale and transform back (with a
        test of rho = 0); False gives the plain arithmetic mean and no test.

    Returns
    -------
    pandas.DataFrame
        One row: ``rho, z, p, n_units, n_raters, n_pairs, n_perfect`` (pairs with
        rho = +-1, left out of the Fisher average), ``n_dropped, fisher, reason``.

    Notes
    -----
    As R ``irr::meanrho``: raters with no rating are left out (named in
    ``reason``), then units with any missing rating (listwise deletion, counted in
    ``n_dropped`` and ``reason``). For each of the :math:`m(m-1)/2` pairs,
    Spearman's :math:`r_s` with mid-ranks for ties. With ``fisher``: the pairs
    with :math:`|r_s| = 1` are left out (their z is infinite, counted in
    ``n_perfect`` and ``reason``), :math:`\\bar z = \\operatorname{mean}
    \\operatorname{artanh}(r_s)`, :math:`\\rho = \\tanh \\bar z`, and
    :math:`z = \\rho \\sqrt{n - 3}` with a two-sided normal p-value (irr's test).
    Ties within a rater make the coefficient a poor index [1]_; ``reason`` says so
    when there are ties. NaN with the reason for fewer than two raters, fewer than
    four complete units (three with ``fisher=False``) or a constant rater.

    References
    ----------
    .. [1] {irr}

    Examples
    --------
    >>> res = mean_spearman([[1, 2, 3, 4, 5], [2, 1, 4, 3, 5], [1, 3, 2, 5, 4]])
    >>> round(float(res.loc[0, "rho"]), 4)
    0.6835
    """
    complete, notes, n_dropped = _util.complete_ratings(data, unit, rater, value,
                                                         numeric="mean_spearman")
    m, n = complete.shape
    row = {"rho": np.nan, "z": np.nan, "p": np.nan, "n_units": n, "n_raters": m,
           "n_pairs": m * (m - 1) // 2, "n_perfect": 0, "n_dropped": n_dropped,
           "fisher": bool(fisher)}  # fmt: skip
    why = _rho_undefined(complete, fisher)
    if why:
        return _util.frame({**row, "reason": "; ".join([why, *notes])}, RHO_COLUMNS)
    x = complete.astype(float)
    r = np.array([_ranks.spearman_rho_p(x[a], x[b])[0]
                  for a, b in itertools.combinations(range(m), 2)])  # fmt: skip
    if any(len(np.unique(x[g])) < n for g in range(m)):
        notes.append("ties within raters: mean rho may understate agreement")
    if not fisher:
        return _util.frame({**row, "rho": float(r.mean()), "reason": "; ".join(notes)},
                           RHO_COLUMNS)
    perfect = np.isclose(np.abs(r), 1.0, rtol=0.0, atol=1e-12)
    row["n_perfect"] = int(perfect.sum())
    if perfect.any():  # (n stays the number of units: z below is rho * sqrt(n - 3))
        k = int(perfect.sum())
        notes.insert(0, f"{k} perfect correlation{'' if k == 1 else 's'} left out of the "
                        "average")
    if perfect.all():
        why = "; ".join(["every pair correlates perfectly", *notes])
        return _util.frame({**row, "reason": why}, RHO_COLUMNS)
    rho = float(np.tanh(np.arctanh(r[~perfect]).mean()))
    z = rho * np.sqrt(n - 3.0)
    return _util.frame({**row, "rho": rho, "z": float(z), "p": float(2 * _dist.norm_sf(abs(z))),
                        "reason": "; ".join(notes)}, RHO_COLUMNS)  # fmt: skip


def _rho_undefined(complete: np.ndarray, fisher: bool) -> str:
    m, n = complete.shape
    if m < 2:
        return "fewer than two raters"
    if n < (4 if fisher else 3):
        return f"fewer than {4 if fisher else 3} complete units"
    if (np.ptp(complete.astype(float), axis=1) == 0).any():
        return "a rater gave the same score to every unit"
    return ""


@_util.shared_doc
def tolerance_agreement(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                        value: str = "value", tolerance: float = 0.0) -> pd.DataFrame:
    """Share of units on which every rater's score lies within a tolerance.

    Parameters
    ----------
    {data}
    {columns}
    tolerance : float, default 0
        Largest spread (highest minus lowest score on a unit) that still counts as
        agreement; 1 on an integer scale accepts neighbouring scale points. Must be
        0 for text labels.

    Returns
    -------
    pandas.DataFrame
        One row: ``agreement`` (a proportion, 0..1), ``n_agree, n_units,
        n_raters, tolerance, n_dropped, reason``.

    Notes
    -----
    Simple and extended percentage agreement as R ``irr::agree`` [1]_ (which
    reports it times 100): a unit agrees when :math:`\\max - \\min \\le`
    ``tolerance`` over its ratings (for text, when all labels are equal). Raters
    with no rating are left out, then units with any missing rating (listwise
    deletion; ``n_dropped`` and ``reason`` say how many). No complete unit gives
    NaN with the reason. Not corrected for chance.

    References
    ----------
    .. [1] {irr}

    Examples
    --------
    >>> res = tolerance_agreement([[1, 2, 4], [1, 3, 5]], tolerance=1)
    >>> float(res.loc[0, "agreement"])
    1.0
    """
    if not np.isfinite(tolerance) or tolerance < 0:
        raise ValueError("tolerance must be a finite number >= 0.")
    complete, notes, n_dropped = _util.complete_ratings(data, unit, rater, value)
    if complete.dtype == object and tolerance != 0:
        raise ValueError("A tolerance above 0 needs numeric scores; text labels have no distance.")
    m, n = complete.shape
    row = {"agreement": np.nan, "n_agree": 0, "n_units": n, "n_raters": m,
           "tolerance": tolerance, "n_dropped": n_dropped}  # fmt: skip
    if n == 0 or m < 2:
        why = "fewer than two raters" if m < 2 and n else "no unit rated by every rater"
        return _util.frame({**row, "reason": "; ".join([why, *notes])}, TOLERANCE_COLUMNS)
    if complete.dtype == object:
        agree = (complete == complete[0]).all(axis=0)
    else:
        x = complete.astype(float)
        agree = x.max(axis=0) - x.min(axis=0) <= tolerance + 1e-12 * max(1.0, tolerance)
    return _util.frame({**row, "agreement": float(agree.mean()), "n_agree": int(agree.sum()),
                        "reason": "; ".join(notes)}, TOLERANCE_COLUMNS)  # fmt: skip
