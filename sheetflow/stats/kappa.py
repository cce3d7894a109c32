"""Cohen's kappa (pairwise, weighted), intra-rater kappa and Fleiss' kappa."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from sheetflow.stats import _util
from sheetflow.stats._multi import multirater
from sheetflow.stats._weights import (
    WeightOn,
    Weights,
    agreement_weights,
    coded_ratings,
    require_order,
    weight_name,
)

__all__ = [
    "cohen_kappa",
    "cohen_kappa_table",
    "fleiss_category_kappa",
    "fleiss_kappa",
    "intra_rater_kappa",
]

COHEN_COLUMNS = (
    "rater1", "rater2", "n_units", "kappa", "se", "z", "p", "ci_low", "ci_high", "weights",
    "p_o", "p_e", "reason",
)  # fmt: skip


@_util.shared_doc
def cohen_kappa_table(table: Any, *, weights: Weights | str | None = "identity",
                      categories: Sequence[Any] | None = None, weight_on: WeightOn = "values",
                      confidence: float = 0.95) -> pd.DataFrame:
    """Cohen's (weighted) kappa from a q x q contingency table of two raters.

    Parameters
    ----------
    table : array_like, shape (q, q)
        Counts: rows are rater 1's categories, columns rater 2's, both in the order
        of ``categories``.
    weights : {"identity", "linear", "quadratic"}, default "identity"
        Agreement weights; "identity" (alias "unweighted") is Cohen's unweighted
        kappa.
    categories : sequence, optional
        The category values in table order (default ``0..q-1``).
    weight_on : {"values", "ranks"}, default "values"
        Whether linear/quadratic weights use the category values or their ranks.
    confidence : float, default 0.95
        Coverage of the normal-theory interval ``kappa +/- z * se``.

    Returns
    -------
    pandas.DataFrame
        One row: ``n_units, kappa, se, z, p, ci_low, ci_high, weights, p_o, p_e,
        reason``.

    Notes
    -----
    See :func:`cohen_kappa` for the definitions and the standard error.

    References
    ----------
    .. [1] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
           errors of kappa and weighted kappa. Psychological Bulletin, 72(5), 323-327.

    Examples
    --------
    >>> res = cohen_kappa_table([[20, 5], [10, 15]])
    >>> round(float(res.loc[0, "kappa"]), 3)
    0.4
    """
    confidence = _util.check_confidence(confidence)
    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError("table must be a square q x q array of counts.")
    domain = _util.resolve_domain(np.asarray([]), categories) if categories is not None else (
        np.arange(counts.shape[0], dtype=float)
    )
    if len(domain) != counts.shape[0]:
        raise ValueError("categories must have one entry per row of the table.")
    w = agreement_weights(domain, weights, weight_on)
    row = _kappa_from_counts(counts, w, confidence)
    cols = [c for c in COHEN_COLUMNS if c not in ("rater1", "rater2")]
    return _util.frame({**row, "weights": weight_name(weights)}, cols)


@_util.shared_doc
def cohen_kappa(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                value: str = "value", weights: Weights | str | None = "identity",
                categories: Sequence[Any] | None = None, weight_on: WeightOn = "values",
                confidence: float = 0.95) -> pd.DataFrame:
    """Cohen's kappa for every pair of raters, unweighted or weighted.

    Parameters
    ----------
    {data}
    {columns}
    weights : {"identity", "linear", "quadratic"}, default "identity"
        "identity" (alias "unweighted") gives Cohen's (1960) kappa.
    categories : sequence, optional
        The full, ordered category domain (e.g. the rubric's scale). Default: the
        sorted distinct values observed anywhere in ``data``.
    weight_on : {"values", "ranks"}, default "values"
        Weighting convention. "values": weights sit on the scale values of the
        category domain, e.g. linear ``1 - |x_i - x_j| / (x_max - x_min)`` over
        ``categories`` (SAS PROC FREQ, statsmodels with the values as scores).
        "ranks": weights sit on the positions 0..q-1 of the categories in the
        domain; with ``categories`` equal to the categories actually used this is R
        ``irr::kappa2``. The two differ when the values are unequally spaced or a
        category of the domain is unused.
    confidence : float, default 0.95
        Coverage of the interval ``kappa +/- z * se``.

    Returns
    -------
    pandas.DataFrame
        One row per rater pair: ``rater1, rater2, n_units`` (units rated by both),
        ``kappa, se, z, p, ci_low, ci_high, weights, p_o, p_e, reason``.

    Notes
    -----
    Only units rated by both raters of a pair count (pairwise deletion). With the
    joint proportions :math:`p_{ij}`, marginals :math:`p_{i.}, p_{.j}` and agreement
    weights :math:`w_{ij}` (identity, linear or quadratic),
    :math:`p_o = \\sum w_{ij} p_{ij}`, :math:`p_e = \\sum w_{ij} p_{i.} p_{.j}` and
    :math:`\\kappa = (p_o - p_e) / (1 - p_e)` [1]_ [2]_. Observed and chance agreement
    within rounding of each other (:func:`~sheetflow.stats._util.tied_difference`: 64
    units in the last place) are one number, so a kappa exactly at chance is exactly 0.

    The standard error is the large-sample *non-null* one of Fleiss, Cohen & Everitt
    (1969) [3]_: with :math:`\\bar w_{i.} = \\sum_j p_{.j} w_{ij}` and
    :math:`\\bar w_{.j} = \\sum_i p_{i.} w_{ij}`,

    .. math:: \\widehat{var}(\\kappa) = \\frac{\\sum_{ij} p_{ij}[w_{ij} - (\\bar w_{i.}
              + \\bar w_{.j})(1 - \\kappa)]^2 - [\\kappa - p_e(1 - \\kappa)]^2}
              {n (1 - p_e)^2}

    and the interval is :math:`\\kappa \\pm z_{1-a/2}\\, se` (not clipped).

    The test of :math:`\\kappa = 0` uses the *null* variance of the same paper,
    :math:`\\widehat{var}_0 = [\\sum_{ij} p_{i.} p_{.j} (w_{ij} - (\\bar w_{i.} +
    \\bar w_{.j}))^2 - p_e^2] / (n (1 - p_e)^2)`, with the weighted :math:`p_e` for
    a weighted kappa: ``z`` = kappa / se_0 and ``p`` is two-sided from the normal
    distribution, as statsmodels ``cohens_kappa`` and R ``irr::kappa2`` (0.84.1; its
    weights sit on the ranks of the categories used, ``weight_on="ranks"``). Kappa is
    NaN, with the reason, when a pair shares no unit or when :math:`p_e = 1` (both
    raters used one and the same category throughout). When one rater of a pair gave
    one category on every unit compared and the other varied, :math:`p_o = p_e` for any
    weights, so kappa is 0 by construction: reported as 0, the convention of Cohen's
    formula and of R ``irr::kappa2`` [1]_, but ``se``, ``z``, ``p`` and the interval
    are NaN and ``reason`` says why (the delta-method variance is 0 there, and an
    interval [0, 0] would claim a certainty the data do not give). Where the null
    variance is 0 for other margins (weighted margins that leave no null spread) ``z``
    and ``p`` are NaN and ``reason`` says so.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
           Educational and Psychological Measurement, 20(1), 37-46.
    .. [2] Cohen, J. (1968). Weighted kappa. Psychological Bulletin, 70(4), 213-220.
    .. [3] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard
           errors of kappa and weighted kappa. Psychological Bulletin, 72(5), 323-327.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"unit": [1, 2, 3, 4, 1, 2, 3, 4],
    ...                    "rater": ["a"] * 4 + ["b"] * 4,
    ...                    "value": [1, 2, 2, 3, 1, 2, 3, 3]})
    >>> row = cohen_kappa(df).loc[0]
    >>> row["rater1"], row["rater2"], int(row["n_units"])
    ('a', 'b', 4)
    """
    confidence = _util.check_confidence(confidence)
    codes, raters, w = coded_ratings(data, unit, rater, value, categories, weights, weight_on,
                                     "Cohen's kappa")
    return _all_pairs(codes, list(raters), w, confidence, weight_name(weights))


def intra_rater_kappa(data: pd.DataFrame, *, unit: str = "unit", sitting: str = "sitting",
                      value: str = "value", rater: str | None = None,
                      weights: Weights | str | None = "identity",
                      categories: Sequence[Any] | None = None, weight_on: WeightOn = "values",
                      confidence: float = 0.95) -> pd.DataFrame:
    """Intra-rater (test-retest) Cohen's kappa between two sittings of the same rater.

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table with one row per (unit, sitting[, rater]) rating.
    unit, sitting, value : str
        Column names; ``sitting`` must hold exactly two distinct labels (e.g. 1 and 2).
    rater : str, optional
        Column of rater ids; when given, one row per rater.
    weights, categories, weight_on, confidence
        As in :func:`cohen_kappa`.

    Returns
    -------
    pandas.DataFrame
        ``rater`` (when given), ``sitting1, sitting2, n_units, kappa, se, ci_low,
        ci_high, weights, p_o, p_e, reason``; only units rated in both sittings count.

    Notes
    -----
    This is Cohen's kappa (:func:`cohen_kappa`) with the first and second sitting as
    the two "raters" [1]_; items repeated in only one sitting are ignored.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales.
           Educational and Psychological Measurement, 20(1), 37-46.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"unit": [1, 2, 3, 4] * 2, "sitting": [1] * 4 + [2] * 4,
    ...                    "value": ["y", "n", "y", "n", "y", "n", "y", "y"]})
    >>> round(float(intra_rater_kappa(df).loc[0, "kappa"]), 3)
    0.5
    """
    if value in data.columns:
        text = not pd.api.types.is_numeric_dtype(data[value])
        require_order(text, categories, weights, "Intra-rater kappa")
    if categories is None and value in data.columns:
        categories = _util.resolve_domain(data[value].to_numpy(), None).tolist()
    sittings = _util._sorted_labels(data[sitting])
    if len(sittings) != 2:
        raise ValueError(f"Column {sitting!r} must hold exactly two sittings, got {sittings}.")
    groups = [(None, data)] if rater is None else list(data.groupby(rater, sort=True))
    rows = []
    for label, part in groups:
        res = cohen_kappa(part, unit=unit, rater=sitting, value=value, weights=weights,
                          categories=categories, weight_on=weight_on, confidence=confidence)
        row = _intra_row(res, sittings)
        rows.append(row if rater is None else {"rater": label, **row})
    cols = (["rater"] if rater is not None else []) + ["sitting1", "sitting2"]
    return _util.frame(rows, cols + list(COHEN_COLUMNS[2:]))


def _intra_row(res: pd.DataFrame, sittings: list[Any]) -> dict[str, Any]:
    if res.empty:  # one sitting present for this rater
        return {"sitting1": sittings[0], "sitting2": sittings[1], "n_units": 0,
                "kappa": np.nan, "se": np.nan, "z": np.nan, "p": np.nan, "ci_low": np.nan,
                "ci_high": np.nan,
                "p_o": np.nan, "p_e": np.nan, "reason": "only one sitting present"}  # fmt: skip
    row = res.iloc[0].to_dict()
    row["sitting1"], row["sitting2"] = row.pop("rater1"), row.pop("rater2")
    return row


# irr::kappa2 gives the same NaN z here without a word; the row says why
NO_NULL_TEST = ("no z or p: kappa's variance under the null of chance agreement (Fleiss, "
                "Cohen & Everitt 1969) is 0 for these margins (as when a rater gives one "
                "category throughout), so kappa = 0 has no z test")
FIXED_AT_ZERO = ("kappa is 0 by construction: one rater gave one category on every unit "
                 "compared, so observed agreement equals chance agreement whatever the other "
                 "rater did (Cohen 1960; R irr::kappa2 also gives 0, with no z); no standard "
                 "error, z, p or interval: a figure the margins fix at 0 has no sampling "
                 "spread to estimate, and an interval [0, 0] would claim a certainty the "
                 "data do not give")
_BATCH_CELLS = 1 << 16  # cells of pair tables per vectorised batch (its temporaries stay in cache)


def _all_pairs(codes: np.ndarray, raters: list[Any], w: np.ndarray, confidence: float,
               weights_label: str) -> pd.DataFrame:
    """Kappa rows for every pair of raters, in batches of about 65,000 cells.

    A panel of hundreds of raters costs a few array operations per rater, not a Python
    call per pair; the rows are assembled column by column. Each batch is computed
    from the pairs' q x q tables (:func:`_pair_tables`, :func:`_kappa_batch`) or,
    when a table has more cells than there are units (a total's 21 values on 36
    units), from the units themselves (:func:`_kappa_units`): the same formulas, with
    sums over units in place of sums over empty cells.
    """
    q, m = w.shape[0], len(raters)
    by_units = q * q > codes.shape[1]
    batches, pending, size = [], [], 0
    cells = codes.shape[1] if by_units else q * q
    per_batch = max(1, _BATCH_CELLS // max(cells, 1))  # pairs whose cells fit one batch
    for a in range(m - 1):
        pending.append(codes[a + 1:] if by_units else _pair_tables(codes[a], codes[a + 1:], q))
        size += m - 1 - a
        if size >= per_batch or a == m - 2:
            if by_units:
                firsts = np.repeat(np.arange(a + 1 - len(pending), a + 1),
                                   [len(part) for part in pending])
                batches.append(_kappa_units(codes[firsts], np.concatenate(pending), w,
                                            confidence))
            else:
                batches.append(_kappa_batch(np.concatenate(pending), w, confidence))
            pending, size = [], 0
    if not batches:
        return _util.frame([], COHEN_COLUMNS)
    first, second = np.triu_indices(m, k=1)  # row-major: the order of the batches
    names = pd.Series(raters)  # the dtype a table of these names would get
    # each column's pieces let go as it is joined, and the columns left apart (copy=False:
    # one block of all the floats would be a second copy of them)
    columns = {k: np.concatenate([b.pop(k) for b in batches]) for k in list(batches[0])}
    del batches
    columns["n_units"] = columns["n_units"].astype(np.int64)
    return pd.DataFrame({"rater1": names.take(first).to_numpy(),
                         "rater2": names.take(second).to_numpy(),
                         "weights": weights_label, **columns}, columns=list(COHEN_COLUMNS),
                        copy=False)


def _pair_tables(first: np.ndarray, others: np.ndarray, q: int) -> np.ndarray:
    """The q x q tables of ``first`` against each row of ``others`` (codes, -1 missing).

    Each unit rated by both adds one to cell (i, j) of its pair's table: one
    ``bincount`` over the codes ``pair * q * q + i * q + j``.
    """
    both = (first >= 0)[None, :] & (others >= 0)
    pair = np.broadcast_to(np.arange(len(others))[:, None], others.shape)
    joint = (pair * q + first[None, :]) * q + others
    counts = np.bincount(joint[both], minlength=len(others) * q * q)
    return counts.reshape(len(others), q, q).astype(float)


def _kappa_from_counts(counts: np.ndarray, w: np.ndarray, confidence: float) -> dict:
    """Kappa, FCE-1969 non-null SE and interval from a q x q table of counts."""
    return {k: v.tolist()[0] for k, v in _kappa_batch(counts[None], w, confidence).items()}


def _kappa_batch(counts: np.ndarray, w: np.ndarray, confidence: float,
                 ) -> dict[str, np.ndarray]:
    """Kappa, its FCE-1969 non-null SE, null z and p, and interval for m q x q tables.

    With the joint proportions p, marginals r (rows) and c (columns) and
    :math:`\\bar w_{i.} = \\sum_j c_j w_{ij}`, :math:`\\bar w_{.j} = \\sum_i r_i w_{ij}`:
    the non-null variance (Fleiss, Cohen & Everitt 1969) is
    :math:`[\\sum p_{ij}(w_{ij} - (\\bar w_{i.} + \\bar w_{.j})(1-\\kappa))^2 -
    (\\kappa - p_e(1-\\kappa))^2] / (n(1-p_e)^2)` and the null one, used for z and p,
    :math:`[\\sum r_i c_j (w_{ij} - (\\bar w_{i.} + \\bar w_{.j}))^2 - p_e^2] /
    (n(1-p_e)^2)`. Undefined cases are NaN with their reason.
    """
    n = counts.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = counts / n[:, None, None]
        rows, cols = p.sum(axis=2), p.sum(axis=1)
        chance = rows[:, :, None] * cols[:, None, :]
        p_o, p_e = (w * p).sum(axis=(1, 2)), (w * chance).sum(axis=(1, 2))
        kappa = _util.tied_difference(p_o, p_e) / (1.0 - p_e)  # a tie is exactly 0
        sums = (cols @ w.T)[:, :, None] + (rows @ w)[:, None, :]  # w_i. + w_.j
        term = (p * (w[None] - sums * (1.0 - kappa)[:, None, None]) ** 2).sum(axis=(1, 2))
        var = _util.rounded_difference(term, (kappa - p_e * (1.0 - kappa)) ** 2) / (
            n * (1.0 - p_e) ** 2)
        var0 = _util.rounded_difference((chance * (w[None] - sums) ** 2).sum(axis=(1, 2)),
                                   p_e**2) / (n * (1.0 - p_e) ** 2)
    return _kappa_results(n, p_o, p_e, kappa, var, var0, confidence, _one_sided(rows, cols))


def _one_sided(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Pairs where one rater gave one category on every unit compared (a margin all in
    one category): there kappa is 0 whatever the other rater did."""
    return (rows.max(axis=1) >= 1.0 - 1e-12) | (cols.max(axis=1) >= 1.0 - 1e-12)


def _kappa_units(first: np.ndarray, second: np.ndarray, w: np.ndarray, confidence: float,
                 ) -> dict[str, np.ndarray]:
    """:func:`_kappa_batch` for m pairs given by their codes on the units (m x units,
    -1 missing) rather than their q x q tables: for many categories on few units.

    Sums over the table's cells become sums over the units rated by both (a cell
    holding k units is k equal terms), and the null variance's sum over all q x q
    cells is expanded into marginal sums, with :math:`a = \\bar w_{i.}`,
    :math:`b = \\bar w_{.j}` and :math:`\\sum_i r_i a_i = \\sum_j c_j b_j = p_e`:
    :math:`\\sum_{ij} r_i c_j (w_{ij} - a_i - b_j)^2 - p_e^2 = r^T (w \\circ w) c -
    \\sum_i r_i a_i^2 - \\sum_j c_j b_j^2 + p_e^2`. The results agree with
    :func:`_kappa_batch` to rounding (``tests/stats/test_kappa_units.py``).
    """
    q, pairs = w.shape[0], first.shape[0]
    both = (first >= 0) & (second >= 0)
    i, j = np.where(both, first, 0), np.where(both, second, 0)
    n = both.sum(axis=1).astype(float)
    pair = np.arange(pairs)[:, None] * q
    with np.errstate(invalid="ignore", divide="ignore"):
        rows = np.bincount((pair + i)[both], minlength=pairs * q).reshape(pairs, q) / n[:, None]
        cols = np.bincount((pair + j)[both], minlength=pairs * q).reshape(pairs, q) / n[:, None]
        agree = w[i, j] * both  # each unit's agreement weight (0 where not rated by both)
        p_o = agree.sum(axis=1) / n
        a, b = cols @ w.T, rows @ w  # w_i., w_.j
        p_e = (rows * a).sum(axis=1)
        kappa = _util.tied_difference(p_o, p_e) / (1.0 - p_e)  # a tie is exactly 0
        sums = np.take_along_axis(a, i, axis=1) + np.take_along_axis(b, j, axis=1)
        term = (both * (agree - sums * (1.0 - kappa)[:, None]) ** 2).sum(axis=1) / n
        var = _util.rounded_difference(term, (kappa - p_e * (1.0 - kappa)) ** 2) / (
            n * (1.0 - p_e) ** 2)
        var0 = _util.rounded_difference(((rows @ (w * w)) * cols).sum(axis=1) + p_e**2,
                                   (rows * a**2).sum(axis=1) + (cols * b**2).sum(axis=1)
                                   ) / (n * (1.0 - p_e) ** 2)
    return _kappa_results(n, p_o, p_e, kappa, var, var0, confidence, _one_sided(rows, cols))


def _kappa_results(n: np.ndarray, p_o: np.ndarray, p_e: np.ndarray, kappa: np.ndarray,
                   var: np.ndarray, var0: np.ndarray, confidence: float,
                   one_sided: np.ndarray) -> dict[str, np.ndarray]:
    """The kappa columns from the pairs' sums: SE, z, p and interval; NaN, with the
    reason, where kappa is undefined, and SE, z, p and interval NaN where it is 0 by
    construction (``one_sided``: a rater gave one category throughout)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(np.maximum(var, 0.0))
        z = np.where(var0 > 0, kappa / np.sqrt(var0), np.nan)
    # the normal quantile and tail as stats.norm computes them (ndtri, ndtr(-x)),
    # without its argument checks: this runs once per batch of a few thousand pairs
    z_crit = special.ndtri(0.5 + confidence / 2.0)
    no_units, one_category = n == 0, np.abs(p_e - 1.0) <= 1e-12
    undefined = no_units | one_category
    fixed = one_sided & ~undefined  # kappa 0 by construction: no spread to estimate
    kappa = np.where(undefined, np.nan, kappa)
    se, z = (np.where(undefined | fixed, np.nan, x) for x in (se, z))
    reason = np.where(no_units, "no unit rated by both raters", np.where(
        one_category, _util.CHANCE_IS_ONE, np.where(
            fixed, FIXED_AT_ZERO, np.where(var0 > 0, "", NO_NULL_TEST))))
    return {"n_units": np.rint(n).astype(np.int64), "kappa": kappa, "se": se, "z": z,
            "p": 2.0 * special.ndtr(-np.abs(z)), "ci_low": kappa - z_crit * se,
            "ci_high": kappa + z_crit * se, "p_o": np.where(no_units, np.nan, p_o),
            "p_e": np.where(no_units, np.nan, p_e), "reason": reason.astype(object)}


@_util.shared_doc
def fleiss_kappa(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                 value: str = "value", categories: Sequence[Any] | None = None,
                 confidence: float = 0.95, population_size: float | None = None,
                 ) -> pd.DataFrame:
    """Fleiss' kappa for many raters, allowing unequal numbers of raters per unit.

    Raters need not be the same people across units.

    Parameters
    ----------
    {data}
    {columns}
    categories : sequence, optional
        The full category domain (default: observed values).
    confidence : float, default 0.95
        Coverage of the interval.
    population_size : float, optional
        Number of units in the population, for the finite-population correction
        ``1 - n / N`` of the variance. Default None: no correction.

    Returns
    -------
    pandas.DataFrame
        One row: ``kappa, se, z, p, ci_low, ci_high, p_o, p_e, n_units`` (units
        with at least one rating), ``n_pairable_units`` (two or more), ``n_raters,
        weights, reason``. ``z = kappa / se`` and ``p`` is its two-sided p-value on
        :math:`t_{n-1}` (as irrCAC).

    Notes
    -----
    Generalisation to unequal numbers of raters :math:`r_i` per unit, as in Gwet
    (2014, ch. 2) and R ``irrCAC::fleiss.kappa.raw`` [2]_: with :math:`r_{ik}` ratings
    of category :math:`k` in unit :math:`i`,

    .. math:: p_o = \\frac{1}{n'} \\sum_{i: r_i \\ge 2} \\sum_k
              \\frac{r_{ik}(r_{ik} - 1)}{r_i (r_i - 1)}, \\quad
              \\pi_k = \\frac{1}{n} \\sum_i \\frac{r_{ik}}{r_i}, \\quad
              p_e = \\sum_k \\pi_k^2,

    where :math:`n'` counts units with two or more ratings and :math:`n` units with at
    least one. With equal :math:`r_i` this is exactly Fleiss (1971) [1]_. Observed and
    chance agreement within rounding of each other (64 units in the last place) are one
    number, so a kappa exactly at chance is exactly 0.

    Standard error: the *non-null* variance of Gwet (2014) [2]_, valid for unequal
    :math:`r_i` (the Fleiss, Nee & Landis (1979) formula is the variance under
    :math:`\\kappa = 0` and is not used for intervals):
    :math:`\\kappa_i = (n / n') (p_{o,i} - p_e [r_i \\ge 2]) / (1 - p_e)`,
    :math:`p_{e,i} = \\sum_k r_{ik} \\pi_k / r_i`,
    :math:`\\kappa^*_i = \\kappa_i - 2 (1 - \\kappa)(p_{e,i} - p_e)/(1 - p_e)` and
    :math:`var = (1 - f) \\sum_i (\\kappa^*_i - \\kappa)^2 / (n (n - 1))`. The interval
    is :math:`\\kappa \\pm t_{n-1}\\, se` with the upper end capped at 1, as in Gwet.
    Kappa is NaN, with the reason, for empty input, no unit with two ratings, or
    :math:`p_e = 1` (a single category used).

    References
    ----------
    .. [1] {fleiss1971}
    .. [2] {gwet2014}

    Examples
    --------
    Krippendorff's 4 x 12 example (``irrCAC`` ``raw_4raters``; Gwet reports 0.76117):

    {raw4raters}
    >>> round(float(fleiss_kappa(data).loc[0, "kappa"]), 5)
    0.76117
    """
    return multirater(data, unit, rater, value, categories, "identity", "values",
                       confidence, population_size, chance="fleiss")


@_util.shared_doc
def fleiss_category_kappa(data: pd.DataFrame | Any, *, unit: str = "unit",
                          rater: str = "rater", value: str = "value",
                          categories: Sequence[Any] | None = None) -> pd.DataFrame:
    """Fleiss' (1971) kappa for each category (agreement on "k vs not k").

    Parameters
    ----------
    {data}
    {columns}
    categories : sequence, optional
        The category domain (default: observed values).

    Returns
    -------
    pandas.DataFrame
        One row per category: ``category, kappa, p, n_units, reason`` where ``p`` is
        the category's share of the ratings in pairable units.

    Notes
    -----
    Fleiss (1971, eq. 13) [1]_, written for :math:`r_i` raters of unit :math:`i`
    (units with :math:`r_i \\ge 2`):

    .. math:: \\kappa_k = 1 - \\frac{\\sum_i r_{ik}(r_i - r_{ik}) / (r_i - 1)}
              {p_k q_k \\sum_i r_i}, \\quad p_k = \\frac{\\sum_i r_{ik}}{\\sum_i r_i},
              \\ q_k = 1 - p_k,

    which reduces to Fleiss' formula when every :math:`r_i = m`. NaN, with the
    reason, when the category is never used or is the only one used.

    References
    ----------
    .. [1] {fleiss1971}

    Examples
    --------
    >>> import numpy as np
    >>> data = np.array([[1, 1, 2, 2], [1, 1, 2, 1], [1, 2, 2, 2]])
    >>> fleiss_category_kappa(data)["category"].tolist()
    [1.0, 2.0]
    """
    matrix, _, _ = _util.to_matrix(data, unit, rater, value)
    domain = _util.resolve_domain(matrix, categories)
    codes = _util.encode(matrix, domain)
    counts = _util.unit_counts(codes, len(domain)).astype(float)
    counts = counts[counts.sum(axis=1) >= 2]
    rows = [_category_row(domain[k], counts, k) for k in range(len(domain))]
    return _util.frame(rows, ("category", "kappa", "p", "n_units", "reason"))


def _category_row(category: Any, counts: np.ndarray, k: int) -> dict[str, Any]:
    r = counts.sum(axis=1)
    total = r.sum()
    p = counts[:, k].sum() / total if total else np.nan
    row = {"category": category, "kappa": np.nan, "p": p, "n_units": len(r)}
    if not total:
        return {**row, "reason": "no unit has two or more ratings"}
    if p in (0.0, 1.0):
        return {**row, "reason": "category never used" if p == 0 else "only category used"}
    disagree = (counts[:, k] * (r - counts[:, k]) / (r - 1.0)).sum()
    return {**row, "kappa": 1.0 - disagree / (p * (1.0 - p) * total), "reason": ""}
