"""Many-rater agreement machinery: Fleiss, Gwet AC1/AC2, Conger, Brennan-Prediger.

All four share Gwet's (2014) observed agreement for unequal numbers of raters per
unit and his linearised non-null variance; they differ only in the chance
agreement ``p_e`` and its per-unit pieces ``p_e,i``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sheetflow.stats import _dist, _util
from sheetflow.stats._weights import coded_ratings, weight_name

FLEISS_COLUMNS = (
    "kappa", "se", "z", "p", "ci_low", "ci_high", "p_o", "p_e", "n_units",
    "n_pairable_units", "n_raters", "weights", "reason",
)  # fmt: skip
CHANCE_NAMES = {"fleiss": "Fleiss' kappa", "gwet": "Gwet's AC2", "conger": "Conger's kappa",
                "bp": "Brennan-Prediger"}  # fmt: skip


def multirater(
    data: Any, unit: str, rater: str, value: str, categories: Sequence[Any] | None,
    weights: str | None, weight_on: str, confidence: float,
    population_size: float | None, chance: str,
) -> pd.DataFrame:  # fmt: skip
    """One-row table for ``chance`` in "fleiss", "gwet", "conger" or "bp"."""
    confidence = _util.check_confidence(confidence)
    codes, _, w = coded_ratings(data, unit, rater, value, categories, weights, weight_on,
                                CHANCE_NAMES[chance])
    counts = _util.unit_counts(codes, len(w)).astype(float)
    rated = counts.sum(axis=1) > 0
    counts = counts[rated]
    codes = codes[:, rated]
    codes = codes[(codes != _util.MISSING).any(axis=1)]  # raters who rated something
    row = {
        "n_units": int(counts.shape[0]),
        "n_pairable_units": int((counts.sum(axis=1) >= 2).sum()),
        "n_raters": int((codes != _util.MISSING).any(axis=1).sum()),
        "weights": weight_name(weights),
    }
    stats_row = _coefficient(counts, codes, w, chance, confidence, population_size)
    return _util.frame({**row, **stats_row}, FLEISS_COLUMNS)


def _coefficient(
    counts: np.ndarray, codes: np.ndarray, w: np.ndarray, chance: str, confidence: float,
    population_size: float | None,
) -> dict[str, Any]:  # fmt: skip
    nan_row = {"kappa": np.nan, "se": np.nan, "z": np.nan, "p": np.nan, "ci_low": np.nan,
               "ci_high": np.nan, "p_o": np.nan, "p_e": np.nan}  # fmt: skip
    reason = _undefined(counts)
    if not reason and chance == "conger" and codes.shape[0] < 2:
        reason = "fewer than two raters"
    if reason:
        return {**nan_row, "reason": reason}
    parts = _agreement_parts(counts, w, chance, codes)
    if parts["p_e"] >= 1.0 - 1e-12:
        return {**nan_row, "p_o": parts["p_o"], "p_e": parts["p_e"],
                "reason": _util.CHANCE_IS_ONE}  # fmt: skip
    coef = _util.tied_difference(parts["p_o"], parts["p_e"]) / (1.0 - parts["p_e"])
    se = _gwet_se(counts, parts, coef, population_size)
    n = counts.shape[0]
    return {"kappa": coef, "se": se, **t_test(coef, se, n), **t_interval(coef, se, n, confidence),
            "p_o": parts["p_o"], "p_e": parts["p_e"], "reason": no_test_reason(n, se)}  # fmt: skip


def no_test_reason(n: int, se: float) -> str:
    """Why a defined coefficient has no standard error, test or interval ("" when it
    has them): one unit (the variance divides by n - 1), or a standard error of 0."""
    if n < 2:
        return "one unit: no standard error, test or interval (they need two or more units)"
    if se == 0:
        return "standard error 0 (no spread between units): no z or p"
    return ""


def t_test(coef: float, se: float, n: int) -> dict[str, float]:
    """``z = coef / se`` and its two-sided p-value on t with n - 1 df (Gwet's irrCAC)."""
    if not (np.isfinite(se) and se > 0 and n >= 2):
        return {"z": np.nan, "p": np.nan}
    z = coef / se
    return {"z": float(z), "p": float(2.0 * _dist.t_sf(abs(z), n - 1))}


def _undefined(counts: np.ndarray) -> str:
    if counts.shape[0] == 0:
        return "no ratings"
    if counts.shape[1] < 2:
        return "fewer than two categories in the domain"
    if not (counts.sum(axis=1) >= 2).any():
        return "no unit has two or more ratings"
    return ""


def _agreement_parts(
    counts: np.ndarray, w: np.ndarray, chance: str, codes: np.ndarray
) -> dict[str, Any]:
    """Observed and chance agreement plus the per-unit pieces the variance needs."""
    r = counts.sum(axis=1)
    pairable = r >= 2
    weighted = counts @ w.T  # r*_ik
    denom = np.where(pairable, r * (r - 1.0), 1.0)
    p_o_unit = np.where(pairable, (counts * (weighted - 1.0)).sum(axis=1) / denom, 0.0)
    pi = (counts / r[:, None]).mean(axis=0)
    q = counts.shape[1]
    if chance == "gwet":
        scale = w.sum() / (q * (q - 1.0))
        p_e = scale * float((pi * (1.0 - pi)).sum())
        p_e_unit = scale * (counts @ (1.0 - pi)) / r
    elif chance == "bp":
        p_e = float(w.sum()) / q**2
        p_e_unit = np.full(counts.shape[0], p_e)
    elif chance == "conger":
        p_e, p_e_unit = _conger_chance(codes, w)
    else:
        p_e = float(pi @ w @ pi)
        p_e_unit = counts @ ((w @ pi + w.T @ pi) / 2.0) / r
    p_o = float(p_o_unit[pairable].mean())
    return {"p_o": p_o, "p_e": p_e, "p_o_unit": p_o_unit, "p_e_unit": p_e_unit,
            "pairable": pairable}  # fmt: skip


def _gwet_se(
    counts: np.ndarray, parts: dict[str, Any], coef: float, population_size: float | None
) -> float:
    """Gwet's (2008, 2014) non-null standard error, finite-population factor optional."""
    n = counts.shape[0]
    if n < 2:
        return np.nan
    n2 = parts["pairable"].sum()
    p_e = parts["p_e"]
    unit = (n / n2) * (parts["p_o_unit"] - p_e * parts["pairable"]) / (1.0 - p_e)
    unit_star = unit - 2.0 * (1.0 - coef) * (parts["p_e_unit"] - p_e) / (1.0 - p_e)
    f = 0.0 if population_size is None else n / float(population_size)
    var = (1.0 - f) * ((unit_star - coef) ** 2).sum() / (n * (n - 1.0))
    return float(np.sqrt(var))


def t_interval(coef: float, se: float, n: int, confidence: float) -> dict[str, float]:
    """``coef +/- t_{n-1} se`` with the upper end capped at 1 (Gwet's convention)."""
    if not np.isfinite(se):
        return {"ci_low": np.nan, "ci_high": np.nan}
    t = _dist.t_ppf(0.5 + confidence / 2.0, n - 1)
    return {"ci_low": coef - t * se, "ci_high": min(1.0, coef + t * se)}


def _conger_chance(codes: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Conger's (1980) chance agreement and Gwet's (2014) per-unit terms ``p_e,i``.

    ``codes`` is raters x units (every rater and unit has a rating). With rater g's
    category shares ``p_gk`` over the ``n_g`` units it rated, their mean ``pbar_k``
    and covariances ``s2_kl``: ``p_e = sum_kl w_kl (pbar_k pbar_l - s2_kl / r)``.
    """
    r, n = codes.shape
    q = w.shape[0]
    rated = codes != _util.MISSING  # (r, n)
    onehot = np.zeros((r, n, q))
    g_idx, u_idx = np.nonzero(rated)
    onehot[g_idx, u_idx, codes[rated]] = 1.0
    n_g = rated.sum(axis=1).astype(float)
    p = onehot.sum(axis=1) / n_g[:, None]  # (r, q)
    pbar = p.mean(axis=0)
    s2 = (p.T @ p - r * np.outer(pbar, pbar)) / (r - 1.0)
    p_e = float((w * (np.outer(pbar, pbar) - s2 / r)).sum())
    # lambda_ig = (n / n_g) sum_k (r pbar_k - p_gk) sum_l w_kl (delta_igl - (eps_ig - n_g/n) p_gl)
    inner = onehot @ w.T - (rated - (n_g / n)[:, None])[:, :, None] * (p @ w.T)[:, None, :]
    lam = (n / n_g)[:, None] * (inner * (r * pbar - p)[:, None, :]).sum(axis=2)
    return p_e, lam.sum(axis=0) / (r * (r - 1.0))
