"""Simulated designs: draw data sets of a given size and compute alpha's bootstrap interval.

Two sources of data sets:

* :class:`ModelSource` - an anticipated alpha and the shares of the values. Each unit
  has a true value drawn from the shares; each rater reports it with probability
  :math:`q = \\sqrt{\\alpha}`, otherwise an independent draw from the shares. Two
  ratings then disagree like a chance pair with probability :math:`1 - q^2`, so the
  population alpha is exactly the anticipated one at every level of measurement.
* :class:`PilotSource` - a pilot's ratings. A data set of ``n`` units and ``r`` raters
  takes ``n`` pilot units with replacement (among those with at least ``r`` values)
  and, in each, ``r`` of its values without replacement (alpha uses only values within
  a unit, so rater identity is not needed).
  Rater counts above what the pilot's units hold are drawn from the model fitted to
  the pilot (:mod:`.pilot_model`: its alpha, value shares and pattern of
  disagreement) and say so in the ``method`` column.

Each data set's interval is the one ``sheetflow analyze`` reports: for alpha,
:func:`sheetflow.stats.krippendorff_alpha`'s unit bootstrap (computed for all data sets
of a design at once by :func:`sheetflow.stats.alpha_complete_batch`; the resamples of
units are drawn once per unit count and shared by every data set and rater count of
that size, common random numbers that keep bootstrap noise out of the comparison of
designs); for Fleiss' kappa,
:func:`sheetflow.stats.fleiss_kappa`'s interval (Gwet's non-null variance); for Cohen's
kappa (two raters), :func:`sheetflow.stats.cohen_kappa`'s (with the weights analyze
puts on the measure: quadratic on an ordered one), both likewise computed for
all data sets of a design at once (:func:`sheetflow.stats.fleiss_kappa_complete_batch`,
:func:`sheetflow.stats.cohen_kappa_batch`). BLAS runs on one thread meanwhile. Under
the model, Fleiss' and Cohen's kappa (equal marginals; weighted too, since every pair
that is not two true reports is a chance pair) also equal :math:`q^2`, so
``alpha`` is read as the anticipated kappa for those. Every grid cell has its own seed
derived from (seed, raters, units), so a cell's result does not depend on the grid.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..spec.model import MIN_RESAMPLES
from ..stats import (
    alpha_complete_batch,
    cohen_kappa_batch,
    fleiss_kappa_complete_batch,
)
from .pilot_model import fit_pilot_model
from .sources import ModelSource, PilotSource, value_domain

__all__ = ["STATISTICS", "ModelSource", "PilotSource", "Progress", "bootstrap_weights",
           "median_se", "share_se", "simulate_cell", "simulate_grid"]

STATISTICS = ("alpha", "fleiss_kappa", "cohen_kappa")
Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval

Progress = Callable[[int, int], None]
"""Called with (cells done, cells in all) after each grid cell."""

CELL_COLUMNS = ("raters", "units", "expected_width", "width_se", "width_q10", "width_q90",
                "p_lower", "p_lower_se", "estimate_median", "undefined", "simulations",
                "studies_used", "resamples_used", "resamples_total", "method")


def _kappa_intervals(statistic: str, source: ModelSource | PilotSource,
                     rng: np.random.Generator, units: int, raters: int, simulations: int,
                     confidence: float, weights: np.ndarray | None = None,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kappa, low, high) of ``simulations`` data sets drawn one by one (each followed
    by one draw of a seed, as the studies have always been drawn), computed at once;
    Cohen's kappa with the agreement ``weights`` over the source's domain (default
    unweighted)."""
    codes = np.empty((simulations, raters, units), dtype=np.int64)
    for i in range(simulations):
        codes[i] = source.draw(rng, units, raters)
        rng.integers(2**31)  # the per-study seed alpha's bootstrap once took
    if statistic == "cohen_kappa":
        return cohen_kappa_batch(codes, len(source.domain), confidence, weights)
    counts = (codes[..., None] == np.arange(len(source.domain))).sum(axis=1)
    return fleiss_kappa_complete_batch(counts, confidence)


def simulate_cell(
    source: ModelSource | PilotSource, raters: int, units: int, *, simulations: int,
    n_boot: int, confidence: float = 0.95, edge: float | None = None, seed: int = 0,
    statistic: str = "alpha", weights: np.ndarray | None = None,
) -> dict[str, Any]:
    """Median interval width (and more) over ``simulations`` data sets of one size.

    Returns
    -------
    dict
        ``raters, units``; ``expected_width`` (median full width of the bootstrap
        interval) and its Monte Carlo standard error ``width_se`` (:func:`median_se`),
        ``width_q10``/``width_q90``; ``p_lower``, the share of data sets
        whose lower limit is at or above ``edge`` (NaN without an edge), and its
        binomial standard error ``p_lower_se``;
        ``estimate_median``; ``undefined``, the share of data sets without an interval
        (alpha or kappa undefined, no variation; an interval of zero width; or one
        resting on fewer than :data:`~sheetflow.spec.model.MIN_RESAMPLES` resamples):
        infinitely wide in the width's median and quantiles (which are then infinite
        where they reach them), counted as not clearing an edge; ``simulations``;
        ``studies_used``, the data sets with an interval; for alpha ``resamples_used``
        of ``resamples_total`` (``studies_used`` x
        ``n_boot``), the bootstrap resamples with an alpha that those intervals rest on
        (a resample without variation is left out, as analyze leaves it out; NaN for a
        kappa, whose interval is not bootstrapped); and ``method``. ``statistic`` is
        one of :data:`STATISTICS` (Cohen's kappa needs exactly two raters).
        ``weights``: Cohen's kappa's agreement weights over the source's domain
        (default unweighted; other statistics refuse them).
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}.")
    if statistic == "cohen_kappa" and raters != 2:
        raise ValueError("Cohen's kappa is for exactly two raters; use fleiss_kappa.")
    if weights is not None and statistic != "cohen_kappa":
        raise ValueError("agreement weights are for Cohen's kappa only.")
    if isinstance(source, PilotSource) and source.most_raters < raters:
        source = fit_pilot_model(source)
    method = source.method if isinstance(source, ModelSource) else "pilot resampling"
    # one BLAS thread: a design is thousands of small matrix products, for which the
    # threads' hand-off costs more than they share (5-20x slower on a busy machine)
    with threadpool_limits(1, user_api="blas"):
        return _simulate(source, raters, units, simulations, n_boot, confidence, edge, seed,
                         statistic, method, weights)


def _simulate(source: ModelSource | PilotSource, raters: int, units: int, simulations: int,
              n_boot: int, confidence: float, edge: float | None, seed: int, statistic: str,
              method: str, weights: np.ndarray | None = None) -> dict[str, Any]:
    """:func:`simulate_cell`'s figures, its arguments checked."""
    rng = np.random.default_rng([seed, raters, units])
    used = None  # bootstrap resamples with an alpha, per study (alpha only)
    if statistic == "alpha":
        codes = source.draw(rng, units, raters, sets=simulations)
        counts = (codes[..., None] == np.arange(len(source.domain))).sum(axis=1)
        alphas, lows, highs, used = alpha_complete_batch(
            counts, value_domain(source), source.level, bootstrap_weights(seed, units, n_boot),
            confidence, with_used=True)
        widths = highs - lows
    else:
        alphas, lows, highs = _kappa_intervals(statistic, source, rng, units, raters,
                                               simulations, confidence, weights)
        widths = highs - lows
    ok = _has_interval(widths, used)
    # a study without an interval counts as infinitely wide (never meeting a width
    # target, never clearing an edge): leaving it out would let a design too small to
    # vary "meet" any target on the few studies that do
    widths = np.where(ok, widths, np.inf)
    resting = {"studies_used": int(ok.sum()),
               "resamples_used": int(used[ok].sum()) if used is not None else np.nan,
               "resamples_total": int(ok.sum()) * n_boot if used is not None else np.nan}
    q = [_upper_quantile(widths, p) for p in (0.1, 0.5, 0.9)]
    p_lower = float(np.mean(np.where(ok, lows >= edge, False))) if edge is not None else np.nan
    return {"raters": raters, "units": units, "expected_width": q[1],
            "width_se": median_se(widths),
            "width_q10": q[0], "width_q90": q[2], "p_lower": p_lower,
            "p_lower_se": share_se(p_lower, simulations),
            "estimate_median": float(np.nanmedian(alphas)) if ok.any() else np.nan,
            "undefined": float(1 - ok.mean()), "simulations": simulations, **resting,
            "method": method}


def _has_interval(widths: np.ndarray, used: np.ndarray | None) -> np.ndarray:
    """Which simulated studies have an interval: a finite one of more than zero width
    (all resamples equal, or a standard error of 0, give width 0, which would meet any
    target) resting, for a bootstrap interval, on at least :data:`MIN_RESAMPLES`
    resamples with an alpha (fewer make it narrow by construction, and analyze's
    spec refuses fewer)."""
    ok = np.isfinite(widths) & (widths > 0)
    return ok & (used >= MIN_RESAMPLES) if used is not None else ok


def _upper_quantile(values: np.ndarray, share: float) -> float:
    """The ``share`` quantile of ``values`` (linear between order statistics, as
    numpy's default), infinite where it touches an infinite value: numpy's own
    interpolation gives NaN there."""
    ranked = np.sort(values)
    at = share * (len(ranked) - 1)
    low, high = ranked[math.floor(at)], ranked[math.ceil(at)]
    if not np.isfinite(high):
        return float(low) if at == math.floor(at) else float("inf")
    return float(low + (high - low) * (at - math.floor(at)))


def median_se(values: np.ndarray) -> float:
    """The Monte Carlo standard error of the median of ``values``, distribution-free.

    The median's 95% interval from order statistics (ranks n/2 -/+ 1.96 sqrt(n)/2, the
    binomial count of values below the true median) divided by 2 x 1.96: the widths of
    simulated studies are skewed, so the normal-theory SD x sqrt(pi / 2) / sqrt(n) is not
    used.

    Parameters
    ----------
    values : numpy.ndarray
        The figures of a design's simulated studies (infinite for a study without an
        interval).

    Returns
    -------
    float
        The standard error; NaN with fewer than 2 values, infinite where the interval's
        upper end is an infinite value and the median is not (the simulation cannot
        bound it), NaN where both ends are.
    """
    n = len(values)
    if n < 2:
        return float("nan")
    ranked = np.sort(values)
    spread = Z95 * math.sqrt(n) / 2
    # the ranks (from 1) of the interval's ends, as 0-based positions within the values
    low = max(1, math.floor(n / 2 - spread)) - 1
    high = min(n, math.ceil(1 + n / 2 + spread)) - 1
    if not np.isfinite(ranked[low]):  # both ends infinite: no error to speak of
        return float("nan")
    return float((ranked[high] - ranked[low]) / (2 * Z95))


def share_se(share: float, simulations: int) -> float:
    """The binomial standard error of a share of ``simulations`` simulated studies,
    sqrt(p (1 - p) / n); NaN without a share."""
    if not math.isfinite(share) or simulations < 1:
        return float("nan")
    return math.sqrt(share * (1 - share) / simulations)


@functools.lru_cache(maxsize=64)
def bootstrap_weights(seed: int, units: int, n_boot: int) -> np.ndarray:
    """How often each of ``units`` units appears in each of ``n_boot`` resamples (with
    replacement), drawn once from ``default_rng([seed, units, n_boot])`` and shared by
    every design of that many units (read-only)."""
    rng = np.random.default_rng([seed, units, n_boot, 1])
    draws = rng.integers(0, units, size=(n_boot, units))
    offsets = (np.arange(n_boot) * units)[:, None]
    weights = np.bincount((draws + offsets).ravel(), minlength=n_boot * units)
    out = weights.reshape(n_boot, units).astype(float)
    out.flags.writeable = False
    return out


def simulate_grid(
    source: ModelSource | PilotSource, raters: Sequence[int], units: Sequence[int], *,
    simulations: int = 200, n_boot: int = 500, confidence: float = 0.95,
    edge: float | None = None, seed: int = 0, progress: Progress | None = None,
    statistic: str = "alpha", weights: np.ndarray | None = None,
) -> pd.DataFrame:
    """:func:`simulate_cell` for every (raters, units) pair; one row per cell."""
    if simulations < 1 or n_boot < 1:
        raise ValueError("simulations and n_boot must be at least 1.")
    cells = [(r, n) for r in raters for n in units]
    if any(r < 2 for r, _ in cells) or any(n < 2 for _, n in cells):
        raise ValueError("a design needs at least 2 raters and 2 units.")
    rows = []
    for done, (r, n) in enumerate(cells, start=1):
        rows.append(simulate_cell(source, r, n, simulations=simulations, n_boot=n_boot,
                                  confidence=confidence, edge=edge, seed=seed,
                                  statistic=statistic, weights=weights))
        if progress is not None:
            progress(done, len(cells))
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS))
