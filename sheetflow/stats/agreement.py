"""Percent agreement, agreement on preference direction, and Spearman's rho."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from sheetflow.stats import _dist, _ranks, _util

__all__ = ["direction_agreement", "percent_agreement", "spearman"]

DIRECTION_COLUMNS = ("rater", "other", "n_units", "n_agree", "agreement", "n_ties", "reason")


@_util.shared_doc
def percent_agreement(data: pd.DataFrame | Any, *, unit: str = "unit", rater: str = "rater",
                      value: str = "value") -> pd.DataFrame:
    """Observed (uncorrected) agreement among raters.

    Parameters
    ----------
    {data}
    {columns}

    Returns
    -------
    pandas.DataFrame
        One row: ``pairwise_agreement`` (see Notes), ``all_agree_share``,
        ``n_units`` (units with two or more ratings), ``n_raters``, ``reason``.

    Notes
    -----
    ``pairwise_agreement``: for each unit with :math:`m_u \\ge 2` ratings, the share
    of its :math:`m_u(m_u-1)/2` rater pairs that gave the same value, averaged over
    those units with equal weight (the :math:`p_o` of Fleiss 1971 [1]_).
    ``all_agree_share``: the share of those units on which every rating is the same.
    Units with fewer than two ratings are ignored; no unit with two ratings gives
    NaN with the reason.

    References
    ----------
    .. [1] {fleiss1971}

    Examples
    --------
    >>> res = percent_agreement([[1, 1, 2], [1, 2, 2], [1, 1, 2]])
    >>> [round(float(res.loc[0, c]), 4) for c in ("pairwise_agreement", "all_agree_share")]
    [0.7778, 0.6667]
    """
    matrix, _, _ = _util.to_matrix(data, unit, rater, value)
    codes, domain = _util.coded(matrix, None)
    counts = _util.unit_counts(codes, len(domain)).astype(float)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    row = {"n_units": len(m), "n_raters": int((codes != _util.MISSING).any(axis=1).sum())}
    if not len(m):
        return _util.frame({**row, "pairwise_agreement": np.nan, "all_agree_share": np.nan,
                            "reason": "no unit has two or more ratings"}, _PA_COLUMNS)
    share = (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
    return _util.frame({**row, "pairwise_agreement": float(share.mean()),
                        "all_agree_share": float((counts.max(axis=1) == m).mean()),
                        "reason": ""}, _PA_COLUMNS)  # fmt: skip


_PA_COLUMNS = ("pairwise_agreement", "all_agree_share", "n_units", "n_raters", "reason")


def direction_agreement(
    data: pd.DataFrame,
    *,
    unit: str = "unit",
    rater: str = "rater",
    value: str = "value",
    against: Literal["pairs", "majority", "reference"] = "pairs",
    reference: Any = None,
) -> pd.DataFrame:
    """Agreement on a categorical judgement such as a preference direction (A>B, B>A, Tied).

    Parameters
    ----------
    data : pandas.DataFrame
        Tidy table with one row per (unit, rater) judgement.
    unit, rater, value : str
        Column names.
    against : {"pairs", "majority", "reference"}, default "pairs"
        "pairs": every pair of raters. "majority": each rater against the majority
        of the *other* raters on the same unit. "reference": each rater outside the
        reference against the reference rater, or the majority of the reference
        group (e.g. the internal team).
    reference : rater id or list of rater ids
        Required when ``against="reference"``.

    Returns
    -------
    pandas.DataFrame
        One row per comparison: ``rater, other, n_units`` (units both sides judged
        with a defined direction), ``n_agree, agreement`` (``n_agree / n_units``),
        ``n_ties`` (units left out because the majority was tied), ``reason``.

    Notes
    -----
    Pairwise: share of co-rated units with the same judgement. Majority: the
    modal judgement of the other raters (or of the reference group); when two or
    more judgements share the top count the majority is undefined and the unit is
    left out and counted in ``n_ties`` (a "Tied" *judgement* is an ordinary value
    and can be a majority). A comparison with no usable unit gives NaN with the
    reason. This is uncorrected agreement; see :func:`cohen_kappa` for the
    chance-corrected version.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"unit": [1] * 4 + [2] * 4, "rater": list("abcdabcd"),
    ...                    "value": ["A>B", "A>B", "A>B", "B>A",
    ...                              "B>A", "B>A", "Tied", "B>A"]})
    >>> direction_agreement(df, against="majority")["agreement"].tolist()
    [1.0, 1.0, 0.5, 0.5]
    """
    _util.check_choice("against", against, ("pairs", "majority", "reference"))
    wide = _wide(data, unit, rater, value)
    if against == "pairs":
        pairs = _pairwise_columns(wide)
        if not len(pairs["rater"]):
            return _util.frame([], DIRECTION_COLUMNS)
        return pd.DataFrame(pairs, columns=list(DIRECTION_COLUMNS))
    if against == "majority":
        codes, labels = _coded(wide)
        total = _category_counts(codes)
        rows = [_vs_majority(codes, total, j, labels, "majority of others", exclude_self=True)
                for j in range(codes.shape[1])]  # fmt: skip
        return _util.frame(rows, DIRECTION_COLUMNS)
    return _util.frame(_reference_rows(wide, reference), DIRECTION_COLUMNS)


def _wide(data: pd.DataFrame, unit: str, rater: str, value: str) -> pd.DataFrame:
    matrix, raters, units = _util.to_matrix(data, unit, rater, value)
    return pd.DataFrame(matrix.T, index=units, columns=raters, dtype=object)


def _pairwise_columns(wide: pd.DataFrame) -> dict[str, np.ndarray]:
    """Every pair of raters, counted over integer codes one first rater at a time.

    The table's columns as arrays, with the dtypes lists of them would give (what
    :func:`_count_row` gives row by row, without a dict or a Python object per pair: a
    panel of 500 raters has 124,750 pairs, and lists of them were some 25 MB).
    """
    matrix = wide.to_numpy(dtype=object).T
    codes = _util.coded(matrix, None)[0].T  # units x raters
    rated = codes != _util.MISSING
    m = codes.shape[1]
    counts, agreeing = [], []
    for a in range(m - 1):
        both = rated[:, a:a + 1] & rated[:, a + 1:]
        counts.append(both.sum(axis=0))
        agreeing.append(((codes[:, a:a + 1] == codes[:, a + 1:]) & both).sum(axis=0))
    first, second = np.triu_indices(m, k=1)  # row-major: the order of the loop
    n = np.concatenate(counts) if counts else np.zeros(0, dtype=int)
    agree = np.where(n > 0, np.concatenate(agreeing), 0) if counts else n
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, agree / np.maximum(n, 1), np.nan)
    names = pd.Series(list(wide.columns))  # the dtype a table of these names would get
    reasons = np.array(["", NO_SHARED_UNIT], dtype=object)  # two objects, shared
    return {"rater": names.take(first).to_numpy(), "other": names.take(second).to_numpy(),
            "n_units": n.astype(np.int64), "n_agree": agree.astype(np.int64),
            "agreement": share.astype(np.float64), "n_ties": np.zeros(len(n), dtype=np.int64),
            "reason": reasons[(n == 0).astype(np.intp)]}


def _reference_rows(wide: pd.DataFrame, reference: Any) -> list[dict[str, Any]]:
    if reference is None:
        raise ValueError("against='reference' needs reference= (a rater id or a list).")
    group = list(reference) if isinstance(reference, (list, tuple, set)) else [reference]
    unknown = [g for g in group if g not in wide.columns]
    if unknown:
        raise ValueError(f"Reference rater(s) {unknown} not found in the data.")
    label = "reference" if len(group) > 1 else str(group[0])
    codes, labels = _coded(wide)
    in_group = np.array([c in group for c in wide.columns])
    total = _category_counts(codes[:, in_group])
    return [_vs_majority(codes, total, j, labels, label, exclude_self=False)
            for j in range(codes.shape[1]) if not in_group[j]]  # fmt: skip


def _coded(wide: pd.DataFrame) -> tuple[np.ndarray, list[Any]]:
    """Units x raters integer codes (-1 missing) and the raters as column labels."""
    flat = pd.Series(wide.to_numpy(dtype=object).ravel())
    codes, _ = pd.factorize(flat, use_na_sentinel=True)
    return codes.reshape(wide.shape), list(wide.columns)


def _category_counts(codes: np.ndarray) -> np.ndarray:
    """Counts (units x categories) of each judgement among the given raters' columns."""
    n_cat = max(int(codes.max()) + 1 if codes.size else 1, 1)
    units = np.broadcast_to(np.arange(codes.shape[0])[:, None], codes.shape)
    ok = codes >= 0
    flat = units[ok] * n_cat + codes[ok]
    return np.bincount(flat, minlength=codes.shape[0] * n_cat).reshape(-1, n_cat)


def _vs_majority(
    codes: np.ndarray, total: np.ndarray, j: int, raters: list[Any], label: str,
    exclude_self: bool,
) -> dict[str, Any]:  # fmt: skip
    """Rater ``j`` against the modal judgement of ``total`` (minus its own when excluded).

    The majority is undefined (a tie) when two or more judgements share the top count.
    """
    mine = codes[:, j]
    counts = total.copy()
    rated = mine >= 0
    if exclude_self:
        counts[np.flatnonzero(rated), mine[rated]] -= 1
    votes = counts.sum(axis=1)
    top = counts.max(axis=1)
    tied = (counts == top[:, None]).sum(axis=1) > 1
    usable = rated & (votes > 0)
    ties = int((usable & tied).sum())
    decided = usable & ~tied
    major = counts.argmax(axis=1)
    n = int(decided.sum())
    agree = int((mine[decided] == major[decided]).sum())
    return _count_row(raters[j], label, n, agree, ties)


NO_SHARED_UNIT = "no unit judged by both sides"


def _count_row(a: Any, b: Any, n: int, agree: int, ties: int) -> dict[str, Any]:
    if n == 0:
        return {"rater": a, "other": b, "n_units": 0, "n_agree": 0, "agreement": np.nan,
                "n_ties": ties, "reason": NO_SHARED_UNIT}  # fmt: skip
    return {"rater": a, "other": b, "n_units": n, "n_agree": agree, "agreement": agree / n,
            "n_ties": ties, "reason": ""}  # fmt: skip


def spearman(x: Any, y: Any, *, confidence: float = 0.95) -> pd.DataFrame:
    """Spearman's rank correlation with a Fisher-z confidence interval.

    Parameters
    ----------
    x, y : array_like
        Paired scores (e.g. an external rater's totals and the internal team's);
        pairs with a missing value on either side are dropped (counted in ``reason``).
    confidence : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    pandas.DataFrame
        One row: ``rho, ci_low, ci_high, p, n, reason``.

    Notes
    -----
    ``rho`` is Pearson's correlation of the ranks (average ranks for ties), exactly
    1 or -1 where the ranks agree or are reversed. The two-sided ``p``: without ties
    and with at most 10 pairs (or at :math:`|\\rho| = 1`), exact from the permutation
    distribution of :math:`S = \\sum d^2`, ``min(1, 2 min(P(S <= s), P(S >= s)))``
    (n = 5 at :math:`\\rho = 1`: 2/120); otherwise from
    :math:`t = \\rho \\sqrt{(n - 2) / (1 - \\rho^2)}` on the t distribution with n - 2
    df, as :func:`scipy.stats.spearmanr`, except at :math:`|\\rho| = 1` with tied
    ranks, where t is infinite: ``p`` is NaN and ``reason`` says so. The interval is
    :math:`\\tanh(\\operatorname{artanh}(\\rho) \\pm z_{1-a/2}\\, se)` with the
    Fieller, Hartley & Pearson (1957) [1]_ standard error
    :math:`se = \\sqrt{1.06 / (n - 3)}` and the normal quantile (R
    ``CECPfuns::getCISpearman(rho, n, Gaussian = TRUE, FHP = TRUE)``), not Fisher's
    :math:`1 / \\sqrt{n - 3}` for Pearson's r nor Bonett & Wright's (2000) [2]_
    :math:`\\sqrt{(1 + \\rho^2 / 2) / (n - 3)}` (wider for :math:`|\\rho| > 0.35`);
    it is NaN, with the reason, at
    :math:`|\\rho| = 1` (artanh is infinite) and with three pairs. Fewer than three
    pairs or a constant variable give NaN with the reason.

    References
    ----------
    .. [1] Fieller, E. C., Hartley, H. O., & Pearson, E. S. (1957). Tests for rank
           correlation coefficients. I. Biometrika, 44(3/4), 470-481.
    .. [2] Bonett, D. G., & Wright, T. A. (2000). Sample size requirements for
           estimating Pearson, Kendall and Spearman correlations. Psychometrika, 65(1),
           23-28.

    Examples
    --------
    From the :func:`scipy.stats.spearmanr` documentation:

    >>> res = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    >>> round(float(res.loc[0, "rho"]), 4), round(float(res.loc[0, "p"]), 4)
    (0.8208, 0.0886)
    """
    confidence = _util.check_confidence(confidence)
    a, b = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError("x and y must have the same length.")
    keep = ~(np.isnan(a) | np.isnan(b))
    note = _util.dropped_pairs_note(int((~keep).sum()), keep.size)
    a, b = a[keep], b[keep]
    row = {"rho": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "n": int(a.size)}
    why = ("fewer than three complete pairs" if a.size < 3 else
           "a variable is constant" if np.ptp(a) == 0 or np.ptp(b) == 0 else "")
    if why:
        return _util.frame({**row, "reason": _util.join_notes(why, note)}, _SP_COLUMNS)
    rho, p = _ranks.spearman_rho_p(a, b)
    ranks_a, ranks_b = _ranks.rankdata(a), _ranks.rankdata(b)
    exact = _ranks.spearman_exact_p(ranks_a, ranks_b)
    perfect = _perfect_ranks(ranks_a, ranks_b)
    if perfect:  # the correlation of the ranks is 1 up to rounding: say it is 1
        rho = perfect
    why = _spearman_limits(perfect, a.size, exact is not None)
    interval = _fisher_interval(rho, a.size, confidence) if not perfect else {}
    return _util.frame({**row, "rho": rho,
                        "p": exact if exact is not None else np.nan if perfect else p,
                        **interval, "reason": _util.join_notes(why, note)},
                       _SP_COLUMNS)  # fmt: skip


def _perfect_ranks(ranks_a: np.ndarray, ranks_b: np.ndarray) -> float:
    """1.0 where the ranks are the same, -1.0 where one reverses the other, else 0."""
    if (ranks_a == ranks_b).all():
        return 1.0
    return -1.0 if (ranks_a == ranks_a.size + 1 - ranks_b).all() else 0.0


def _spearman_limits(perfect: float, n: int, exact: bool) -> str:
    """What a defined rho lacks: an interval (|rho| = 1, or three pairs) and, at
    |rho| = 1 with tied ranks, a p (the t approximation gives p = 0 there)."""
    if not perfect:
        return ("no interval: its standard error sqrt(1.06 / (n - 3)) needs four or more "
                "pairs" if n <= 3 else "")
    said = ("perfect rank agreement" if perfect > 0 else "perfectly reversed ranks") + \
        ": the Fisher-z interval is undefined at |rho| = 1"
    if exact:
        return said
    return said + "; no p: the t approximation breaks down at |rho| = 1, and the exact " \
        "test is computed for untied ranks only"


_SP_COLUMNS = ("rho", "ci_low", "ci_high", "p", "n", "reason")


def _fisher_interval(rho: float, n: int, confidence: float) -> dict[str, float]:
    if n <= 3:
        return {"ci_low": np.nan, "ci_high": np.nan}
    z = _dist.norm_ppf(0.5 + confidence / 2.0)
    se = np.sqrt(1.06 / (n - 3))
    with np.errstate(divide="ignore"):
        centre = np.arctanh(np.clip(rho, -1.0, 1.0))
    return {"ci_low": float(np.tanh(centre - z * se)), "ci_high": float(np.tanh(centre + z * se))}
