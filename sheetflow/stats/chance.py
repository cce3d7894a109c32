"""Further chance-corrected coefficients: Conger, Brennan-Prediger, Randolph, Scott, Light."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sheetflow.stats import _dist, _util
from sheetflow.stats._multi import multirater, no_test_reason, t_interval, t_test
from sheetflow.stats._weights import WeightOn, Weights, coded_ratings, weight_name
from sheetflow.stats.kappa import cohen_kappa

__all__ = ["brennan_prediger", "conger_kappa", "light_kappa", "randolph_kappa", "scott_pi"]

SCOTT_COLUMNS = (
    "rater1", "rater2", "n_units", "pi", "se", "z", "p", "ci_low", "ci_high", "weights",
    "p_o", "p_e", "reason",
)  # fmt: skip
LIGHT_COLUMNS = ("kappa", "z", "p", "n_units", "n_raters", "n_pairs", "n_dropped", "reason")


@_util.shared_doc
def conger_kappa(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                 value: str = "value", weights: Weights | str | None = "identity",
                 categories: Sequence[Any] | None = None, weight_on: WeightOn = "values",
                 confidence: float = 0.95, population_size: float | None = None) -> pd.DataFrame:
    """Conger's (1980) generalised kappa for many raters, with Gwet's variance.

    Unlike Fleiss' kappa, the raters are the same people across units.

    Parameters
    ----------
    {data}
    {columns}
    weights : {"identity", "linear", "quadratic", "ordinal", "bipolar"}
        Agreement weights as in :func:`gwet_ac`; text labels need ``categories``
        for any weights but identity.
    categories : sequence, optional
        The full category domain (default: observed values).
    weight_on : {"values", "ranks"}, default "values"
        Whether linear/quadratic/bipolar weights use the category values or ranks.
    confidence : float, default 0.95
        Coverage of the interval.
    population_size : float, optional
        Units in the population for the finite-population correction.

    Returns
    -------
    pandas.DataFrame
        One row: ``kappa, se, z, p, ci_low, ci_high, p_o, p_e, n_units,
        n_pairable_units, n_raters, weights, reason``.

    Notes
    -----
    Observed agreement :math:`p_o` as in :func:`fleiss_kappa`. Chance agreement
    (Conger 1980 [1]_, in Gwet's 2014 form for missing ratings [2]_): with rater
    :math:`g`'s share :math:`p_{gk}` of category :math:`k` among the units it rated,
    :math:`\\bar p_k` the mean over the :math:`r` raters and
    :math:`s^2_{kl} = (\\sum_g p_{gk} p_{gl} - r \\bar p_k \\bar p_l) / (r - 1)`,

    .. math:: p_e = \\sum_{kl} w_{kl} (\\bar p_k \\bar p_l - s^2_{kl} / r),

    the mean of the :math:`r(r-1)/2` pairwise Cohen chance agreements. Variance:
    Gwet's linearisation (irrCAC ``conger.kappa.raw``); interval
    :math:`\\kappa \\pm t_{n-1} se` capped at 1; ``z = kappa / se``, ``p``
    two-sided on :math:`t_{n-1}`. Raters without any rating take no part. NaN with
    the reason for no ratings, fewer than two categories or raters, no unit with two
    ratings, or :math:`p_e = 1`.

    References
    ----------
    .. [1] Conger, A. J. (1980). Integration and generalization of kappas for
           multiple raters. Psychological Bulletin, 88(2), 322-328.
    .. [2] {gwet2014}

    Examples
    --------
    irrCAC's ``cac.raw4raters`` (documented: 0.76282, se 0.14917):

    {raw4raters}
    >>> res = conger_kappa(data)
    >>> round(float(res.loc[0, "kappa"]), 5), round(float(res.loc[0, "se"]), 5)
    (0.76282, 0.14917)
    """
    return multirater(data, unit, rater, value, categories, weights, weight_on,
                      confidence, population_size, chance="conger")  # fmt: skip


@_util.shared_doc
def brennan_prediger(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                     value: str = "value", weights: Weights | str | None = "identity",
                     categories: Sequence[Any] | None = None, weight_on: WeightOn = "values",
                     confidence: float = 0.95, population_size: float | None = None,
                     ) -> pd.DataFrame:
    """Brennan & Prediger's (1981) coefficient: chance agreement from a uniform guess.

    Parameters
    ----------
    data, unit, rater, value, weights, categories, weight_on, confidence, population_size
        As in :func:`conger_kappa`. ``categories`` matters most here: ``q``, the
        number of categories in the domain, fixes the chance agreement.

    Returns
    -------
    pandas.DataFrame
        One row with the columns of :func:`conger_kappa`, ``bp`` in place of ``kappa``.

    Notes
    -----
    :math:`p_o` as in :func:`fleiss_kappa`; :math:`p_e = \\sum_{kl} w_{kl} / q^2`
    [1]_ (:math:`1/q` unweighted), the same for every unit, so Gwet's (2014) [2]_
    variance has no chance-agreement term. Interval, ``z`` and ``p`` as in
    :func:`conger_kappa`.

    References
    ----------
    .. [1] Brennan, R. L., & Prediger, D. J. (1981). Coefficient kappa: some uses,
           misuses, and alternatives. Educational and Psychological Measurement,
           41(3), 687-699.
    .. [2] {gwet2014}

    Examples
    --------
    Gwet's 4 x 12 example, where irrCAC's ``cac.raw4raters`` documents 0.77273 with
    se 0.14472:

    {raw4raters}
    >>> res = brennan_prediger(data)
    >>> round(float(res.loc[0, "bp"]), 5), round(float(res.loc[0, "se"]), 5)
    (0.77273, 0.14472)
    """
    return multirater(data, unit, rater, value, categories, weights, weight_on, confidence,
                      population_size, chance="bp").rename(columns={"kappa": "bp"})


def randolph_kappa(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                   value: str = "value", categories: Sequence[Any] | None = None,
                   confidence: float = 0.95) -> pd.DataFrame:
    """Randolph's (2005) free-marginal multirater kappa.

    Parameters
    ----------
    data, unit, rater, value, confidence
        As in :func:`conger_kappa`.
    categories : sequence, optional
        The categories raters could choose from. Give it: an unused category
        changes ``q`` and so the result. Default: the observed values.

    Returns
    -------
    pandas.DataFrame
        One row with the columns of :func:`conger_kappa`.

    Notes
    -----
    :math:`\\kappa_{free} = (p_o - 1/q) / (1 - 1/q)` [1]_ with Fleiss' observed
    agreement: for raters free to assign any number of cases to each category,
    chance agreement is :math:`1/q`. It is the unweighted Brennan-Prediger
    coefficient [2]_; standard error, interval, ``z`` and ``p`` as in
    :func:`brennan_prediger`.

    References
    ----------
    .. [1] Randolph, J. J. (2005). Free-marginal multirater kappa (multirater
           kappa_free): an alternative to Fleiss' fixed-marginal multirater kappa.
           Joensuu Learning and Instruction Symposium 2005.
    .. [2] Brennan, R. L., & Prediger, D. J. (1981). Coefficient kappa: some uses,
           misuses, and alternatives. Educational and Psychological Measurement,
           41(3), 687-699.

    Examples
    --------
    >>> res = randolph_kappa([[1, 1, 2, 2], [1, 1, 2, 1]], categories=[1, 2, 3])
    >>> round(float(res.loc[0, "kappa"]), 4)  # p_o = 3/4, p_e = 1/3
    0.625
    """
    return multirater(data, unit, rater, value, categories, "identity", "values",
                      confidence, None, chance="bp")  # fmt: skip


@_util.shared_doc
def scott_pi(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
             value: str = "value", weights: Weights | str | None = "identity",
             categories: Sequence[Any] | None = None, weight_on: WeightOn = "values",
             confidence: float = 0.95) -> pd.DataFrame:
    """Scott's (1955) pi for every pair of raters, unweighted or weighted.

    Cohen's kappa with the chance agreement taken from the two raters' pooled
    category shares.

    Parameters
    ----------
    data, unit, rater, value, weights, categories, weight_on, confidence
        As in :func:`cohen_kappa`.

    Returns
    -------
    pandas.DataFrame
        One row per rater pair with the columns of :func:`cohen_kappa`, ``pi`` in
        place of ``kappa``.

    Notes
    -----
    Units rated by both raters of the pair count. Chance agreement uses the two
    raters' pooled category shares :math:`\\pi_k = (p_{k.} + p_{.k}) / 2`:
    :math:`p_e = \\sum_{kl} w_{kl} \\pi_k \\pi_l` [1]_. Standard error: Gwet's
    (2014) two-rater variance [2]_ (irrCAC ``scott2.table``),

    .. math:: var = \\frac{\\sum_{kl} p_{kl} [w_{kl} - (1 - \\pi)(\\bar p_k +
              \\bar p_l)]^2 - (p_o - 2 (1 - \\pi) p_e)^2}{n (1 - p_e)^2}

    with :math:`\\bar p_k = (\\sum_l w_{kl} p_{.l} + \\sum_l w_{lk} p_{l.}) / 2`.
    Interval :math:`\\pi \\pm t_{n-1} se` capped at 1; ``z = pi / se`` and ``p``
    two-sided on :math:`t_{n-1}`. For more than two raters see
    :func:`fleiss_kappa`, Scott's pi generalised.

    References
    ----------
    .. [1] Scott, W. A. (1955). Reliability of content analysis: the case of
           nominal scale coding. Public Opinion Quarterly, 19(3), 321-325.
    .. [2] {gwet2014}

    Examples
    --------
    >>> res = scott_pi([[1, 1, 2, 2, 1], [1, 2, 2, 2, 1]])
    >>> round(float(res.loc[0, "pi"]), 4)  # p_o = 0.8, p_e = 0.5
    0.6
    """
    confidence = _util.check_confidence(confidence)
    codes, raters, w = coded_ratings(data, unit, rater, value, categories, weights, weight_on,
                                     "Scott's pi")
    rows = []
    for a, b in itertools.combinations(range(len(raters)), 2):
        both = (codes[a] != _util.MISSING) & (codes[b] != _util.MISSING)
        q = w.shape[0]
        flat = codes[a][both] * q + codes[b][both]
        table = np.bincount(flat, minlength=q * q).reshape(q, q).astype(float)
        rows.append({"rater1": raters[a], "rater2": raters[b], "weights": weight_name(weights),
                     **_scott_from_table(table, w, confidence)})  # fmt: skip
    return _util.frame(rows, SCOTT_COLUMNS)


def _scott_from_table(counts: np.ndarray, w: np.ndarray, confidence: float) -> dict[str, Any]:
    n = counts.sum()
    row = {"n_units": int(n), "pi": np.nan, "se": np.nan, "z": np.nan, "p": np.nan,
           "ci_low": np.nan, "ci_high": np.nan, "p_o": np.nan, "p_e": np.nan}  # fmt: skip
    if n == 0:
        return {**row, "reason": "no unit rated by both raters"}
    p = counts / n
    rows_m, cols_m = p.sum(axis=1), p.sum(axis=0)
    pooled = (rows_m + cols_m) / 2.0
    p_o, p_e = float((w * p).sum()), float(pooled @ w @ pooled)
    if np.isclose(p_e, 1.0, rtol=0.0, atol=1e-12):
        return {**row, "p_o": p_o, "p_e": p_e,
                "reason": _util.CHANCE_IS_ONE}  # fmt: skip
    pi = _util.tied_difference(p_o, p_e) / (1.0 - p_e)
    pbar = (w @ cols_m + w.T @ rows_m) / 2.0
    term = (p * (w - (1.0 - pi) * (pbar[:, None] + pbar[None, :])) ** 2).sum()
    var = (term - (p_o - 2.0 * (1.0 - pi) * p_e) ** 2) / (n * (1.0 - p_e) ** 2)
    se = float(np.sqrt(max(var, 0.0))) if n >= 2 else np.nan
    return {**row, "pi": pi, "se": se, **t_test(pi, se, int(n)),
            **t_interval(pi, se, int(n), confidence), "p_o": p_o, "p_e": p_e,
            "reason": no_test_reason(int(n), se)}  # fmt: skip


def light_kappa(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                value: str = "value") -> pd.DataFrame:
    """Light's (1971) kappa: the mean of Cohen's kappa over all pairs of raters.

    Parameters
    ----------
    data, unit, rater, value
        As in :func:`conger_kappa`.

    Returns
    -------
    pandas.DataFrame
        One row: ``kappa, z, p, n_units, n_raters, n_pairs, n_dropped, reason``.

    Notes
    -----
    As R ``irr::kappam.light``: units with any missing rating are dropped
    (listwise deletion; ``n_dropped`` and ``reason`` say how many), raters with no
    rating at all are left out first (named in ``reason``), and
    :math:`\\kappa_L` is the mean of the unweighted Cohen's kappas of the
    :math:`m(m-1)/2` rater pairs [1]_ [2]_. ``z`` and ``p`` reproduce irr's test:
    with :math:`D_{ab} = \\sum_{i \\ne j} n_{a,i} n_{b,j}` (rater a's count of
    category i times rater b's of j) over the P pairs,
    :math:`P_c = 1 - P \\prod D_{ab} / n^{2P}`,
    :math:`z = \\kappa_L / \\sqrt{P_c / (n (1 - P_c))}` and ``p`` two-sided normal.
    That test is an approximation of irr's, kept for comparability; prefer
    :func:`conger_kappa`'s interval for inference. Pairs whose kappa is undefined
    make ``kappa`` NaN with the reason.

    References
    ----------
    .. [1] Light, R. J. (1971). Measures of response agreement for qualitative
           data: some generalizations and alternatives. Psychological Bulletin,
           76(5), 365-377.
    .. [2] Conger, A. J. (1980). Integration and generalization of kappas for
           multiple raters. Psychological Bulletin, 88(2), 322-328.

    Examples
    --------
    >>> res = light_kappa([[1, 1, 2, 2], [1, 1, 2, 1], [1, 2, 2, 2]])
    >>> round(float(res.loc[0, "kappa"]), 4)  # pairs: 0.5, 0.5, 0.2
    0.4
    """
    complete, notes, n_dropped = _util.complete_ratings(data, unit, rater, value)
    row = {"kappa": np.nan, "z": np.nan, "p": np.nan, "n_units": complete.shape[1],
           "n_raters": complete.shape[0], "n_dropped": n_dropped,
           "n_pairs": complete.shape[0] * (complete.shape[0] - 1) // 2}  # fmt: skip
    if complete.shape[0] < 2 or complete.shape[1] < 2:
        why = "fewer than two raters" if complete.shape[0] < 2 else "fewer than two complete units"
        return _util.frame({**row, "reason": "; ".join([why, *notes])}, LIGHT_COLUMNS)
    pairs = cohen_kappa(complete)
    if pairs["kappa"].isna().any():
        why = "a pair's kappa is undefined: " + pairs.loc[pairs["kappa"].isna(), "reason"].iloc[0]
        return _util.frame({**row, "reason": "; ".join([why, *notes])}, LIGHT_COLUMNS)
    kappa = float(pairs["kappa"].mean())
    test = _light_test(complete, kappa)
    return _util.frame({**row, "kappa": kappa, **test,
                        "reason": "; ".join([r for r in (test.pop("reason", ""),) if r]
                                            + notes)}, LIGHT_COLUMNS)  # fmt: skip


def _light_test(complete: np.ndarray, kappa: float) -> dict[str, float]:
    """irr's z for Light's kappa (computed in logs: the product overflows quickly)."""
    domain = _util.resolve_domain(complete, None)
    codes = _util.encode(complete, domain)
    n = complete.shape[1]
    counts = np.stack([np.bincount(c, minlength=len(domain)) for c in codes]).astype(float)
    log_d = []
    for a, b in itertools.combinations(range(codes.shape[0]), 2):
        outer = np.outer(counts[a], counts[b])
        log_d.append(np.log(outer.sum() - np.trace(outer)))
    n_pairs = len(log_d)
    with np.errstate(divide="ignore"):
        log_b = np.log(n_pairs) + float(np.sum(log_d)) - 2 * n_pairs * np.log(n)
    chance = 1.0 - float(np.exp(log_b))
    if not 0.0 < chance < 1.0:
        return {"z": np.nan, "p": np.nan,
                "reason": (f"no z or p: the chance term P_c of Light's test is {chance:.4g}, "
                           "outside (0, 1), so its variance is undefined")}
    z = kappa / np.sqrt(chance / (n * (1.0 - chance)))
    return {"z": float(z), "p": float(2.0 * _dist.norm_sf(abs(z)))}
