"""Tests the rating protocols ask for: Fisher exact, permutation, trend, Wilcoxon."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from sheetflow.stats import _dist, _signed_rank, _util

__all__ = [
    "cochran_armitage",
    "fisher_exact_test",
    "monte_carlo_se",
    "permutation_test_proportions",
    "wilcoxon_signed_rank",
]

Alternative = Literal["greater", "less", "two-sided"]
_ALTERNATIVES = ("greater", "less", "two-sided")


def fisher_exact_test(table: Any, *, alternative: Alternative) -> pd.DataFrame:
    """Fisher's exact test on a 2 x 2 table (one- or two-sided).

    Parameters
    ----------
    table : array_like, shape (2, 2)
        Counts ``[[a, b], [c, d]]``: rows are groups (e.g. arm X, arm Y), columns
        are outcomes (success, failure).
    alternative : {"greater", "less", "two-sided"}
        Required. "greater" tests whether the odds ratio ``a d / (b c)`` exceeds 1
        (the first row's success rate is higher).

    Returns
    -------
    pandas.DataFrame
        One row: ``odds_ratio`` (sample odds ratio), ``p, alternative, n, reason``.

    Notes
    -----
    Wraps :func:`scipy.stats.fisher_exact` [1]_ (conditional hypergeometric test),
    imported on the first call only. An empty table gives NaN with the reason; so does
    the odds ratio of a table with a row or column all zero (0/0).

    References
    ----------
    .. [1] Fisher, R. A. (1935). The logic of inductive inference. Journal of the
           Royal Statistical Society, 98(1), 39-82.

    Examples
    --------
    Fisher's tea-tasting experiment (R ``fisher.test`` example, p = 0.2429):

    >>> res = fisher_exact_test([[3, 1], [1, 3]], alternative="greater")
    >>> round(float(res.loc[0, "p"]), 4)
    0.2429
    """
    _util.check_choice("alternative", alternative, _ALTERNATIVES)
    counts = np.asarray(table)
    if counts.shape != (2, 2):
        raise ValueError("table must be 2 x 2.")
    if (counts < 0).any() or not np.allclose(counts, np.round(counts)):
        raise ValueError("table must hold non-negative integer counts.")
    counts = counts.astype(np.int64)
    row = {"alternative": alternative, "n": int(counts.sum())}
    if counts.sum() == 0:
        return _util.frame({**row, "odds_ratio": np.nan, "p": np.nan, "reason": "empty table"},
                           _FISHER_COLUMNS)  # fmt: skip
    # imported here, not with the module: scipy.stats costs about 45 MB of memory, and
    # only the analyses that compare KEEP rates (protocol 001) run this test
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        res = stats.fisher_exact(counts, alternative=alternative)
    odds = float(res[0])
    why = ("odds ratio undefined: ad/bc is 0/0 (a row or column of the table is all zero)"
           if np.isnan(odds) else "")
    return _util.frame({**row, "odds_ratio": odds, "p": float(res[1]), "reason": why},
                       _FISHER_COLUMNS)  # fmt: skip


_FISHER_COLUMNS = ("odds_ratio", "p", "alternative", "n", "reason")


def permutation_test_proportions(
    group_a: Any,
    group_b: Any,
    *,
    alternative: Alternative,
    n_permutations: int = 10_000,
    seed: int | None = None,
    others: Any | None = None,
) -> pd.DataFrame:
    """Permutation test of a difference in proportions (shuffling group labels).

    Parameters
    ----------
    group_a, group_b : array_like of {0, 1} or bool
        Outcomes of the items in each group (e.g. KEEP marks per arm); NaN dropped.
    alternative : {"greater", "less", "two-sided"}
        Required. "greater": the proportion in ``group_a`` exceeds ``group_b``'s.
    n_permutations : int, default 10000
        Number of random shuffles.
    seed : int, optional
        Seed of :func:`numpy.random.default_rng`; drawn and returned when None.
    others : array_like of {0, 1} or bool, optional
        Outcomes of items in neither group that still take part in the shuffle, for a
        null that shuffles arm labels across *all* scored items (protocol 001) rather
        than across the two groups compared.

    Returns
    -------
    pandas.DataFrame
        One row: ``diff`` (observed ``p_a - p_b``), ``p_a, p_b, n_a, n_b, n_others, p,
        n_permutations, seed, alternative, reason``.

    Notes
    -----
    The pooled outcomes (both groups and ``others``) are shuffled ``n_permutations``
    times and the first ``n_a`` and next ``n_b`` form the groups; ``b`` counts
    shuffles at least as extreme as observed ("greater": diff >= observed; "less":
    <=; "two-sided": ``|diff| >= |observed|``).
    The p-value is :math:`(b + 1)/(m + 1)` (Phipson & Smyth 2010 [1]_), which counts
    the observed labelling as one permutation and is never 0. An empty group
    gives NaN with the reason.

    References
    ----------
    .. [1] Phipson, B., & Smyth, G. K. (2010). Permutation p-values should never be
           zero. Statistical Applications in Genetics and Molecular Biology, 9(1).

    Examples
    --------
    >>> res = permutation_test_proportions([1] * 8 + [0] * 2, [1] * 2 + [0] * 8,
    ...                                    alternative="greater", seed=1)
    >>> round(float(res.loc[0, "diff"]), 2), bool(res.loc[0, "p"] < 0.05)
    (0.6, True)
    """
    _util.check_choice("alternative", alternative, _ALTERNATIVES)
    if n_permutations < 1:
        raise ValueError("n_permutations must be a positive integer.")
    a, b = _binary(group_a), _binary(group_b)
    rest = _binary([] if others is None else others)
    seed = _util.make_seed(seed)
    row = {"n_a": a.size, "n_b": b.size, "n_others": rest.size,
           "n_permutations": int(n_permutations), "seed": seed, "alternative": alternative}
    if a.size == 0 or b.size == 0:
        return _util.frame({**row, "diff": np.nan, "p_a": np.nan, "p_b": np.nan, "p": np.nan,
                            "reason": "a group is empty"}, _PERM_COLUMNS)  # fmt: skip
    observed = a.mean() - b.mean()
    null = _shuffled_diffs(np.concatenate([a, b, rest]), a.size, b.size, n_permutations, seed)
    hits = _extreme(null, observed, alternative)
    return _util.frame({**row, "diff": float(observed), "p_a": float(a.mean()),
                        "p_b": float(b.mean()), "p": (hits + 1) / (n_permutations + 1),
                        "reason": ""}, _PERM_COLUMNS)  # fmt: skip


_PERM_COLUMNS = (
    "diff", "p_a", "p_b", "n_a", "n_b", "n_others", "p", "n_permutations", "seed",
    "alternative", "reason",
)  # fmt: skip


def monte_carlo_se(p: float, n_permutations: int) -> float:
    r"""Monte Carlo standard error of a p-value estimated from random permutations.

    A permutation p from ``m`` random shuffles estimates the exact permutation p (over
    every relabelling); its standard error is :math:`\sqrt{p(1 - p)/m}`, so its last
    shown digit may differ with another seed.

    Parameters
    ----------
    p : float
        The p-value as estimated.
    n_permutations : int
        The shuffles it rests on (``m``).

    Returns
    -------
    float
        The standard error; NaN when ``p`` is not finite or ``m`` is not positive.

    Examples
    --------
    >>> round(monte_carlo_se(0.89, 10_000), 4)
    0.0031
    """
    if not np.isfinite(p) or n_permutations < 1:
        return float("nan")
    return float(np.sqrt(p * (1.0 - p) / n_permutations))


def _binary(x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=float).ravel()
    arr = arr[~np.isnan(arr)]
    if not np.isin(arr, (0.0, 1.0)).all():
        raise ValueError("Outcomes must be 0/1 or boolean.")
    return arr


def _shuffled_diffs(pooled: np.ndarray, n_a: int, n_b: int, m: int, seed: int) -> np.ndarray:
    """``p_a - p_b`` for ``m`` random relabellings, in chunks to bound memory.

    The groups are the first ``n_a`` and the next ``n_b`` of each shuffle; any rest
    of the pool belongs to neither.
    """
    rng = np.random.default_rng(seed)
    out = np.empty(m)
    chunk = max(1, 2_000_000 // pooled.size)
    for start in range(0, m, chunk):
        size = min(chunk, m - start)
        shuffled = rng.permuted(np.tile(pooled, (size, 1)), axis=1)
        s_a = shuffled[:, :n_a].sum(axis=1)
        s_b = shuffled[:, n_a : n_a + n_b].sum(axis=1)
        out[start : start + size] = s_a / n_a - s_b / n_b
    return out


def permutation_test_best_of(
    candidates: Mapping[str, Any],
    control: Any,
    *,
    others: Any | None = None,
    n_permutations: int = 10_000,
    seed: int | None = None,
) -> pd.DataFrame:
    r"""One-sided permutation test that the best of several groups beats a control,
    the best being chosen from the data (a max-statistic test).

    Parameters
    ----------
    candidates : mapping of str to array_like of {0, 1} or bool
        Each candidate group's outcomes (e.g. KEEP marks per arm); NaN dropped.
    control : array_like of {0, 1} or bool
        The control group's outcomes.
    others : array_like of {0, 1} or bool, optional
        Outcomes of items in no compared group that still take part in the shuffle.
    n_permutations : int, default 10000
    seed : int, optional
        Seed of :func:`numpy.random.default_rng`; drawn and returned when None.

    Returns
    -------
    pandas.DataFrame
        One row: ``winner`` (the candidate with the largest observed gap; the first
        listed on a tie), ``diff`` (its proportion minus the control's), ``p`` (the
        max-statistic p), ``p_fixed_winner`` (the p that holds the winner fixed,
        reported beside it), ``n_candidates``, ``n_others``, ``n_permutations``,
        ``seed``, ``reason``.

    Notes
    -----
    The statistic is :math:`T = \max_c (\hat p_c - \hat p_0)`. Each shuffle relabels
    every item (candidates, control and ``others``) and recomputes :math:`T^*` with the
    maximum taken afresh, so the choice of the winner is part of the null
    (Westfall & Young 1993 [1]_); ``p = (b + 1)/(m + 1)`` with ``b`` the shuffles with
    :math:`T^* \ge T` (Phipson & Smyth 2010). Holding the observed winner fixed across
    shuffles instead ignores that it was chosen as the best, and gives a p that is
    too small; it is returned as ``p_fixed_winner`` for comparison only. The same
    shuffles give both.

    References
    ----------
    .. [1] Westfall, P. H., & Young, S. S. (1993). Resampling-Based Multiple Testing.
           Wiley. (The single-step max-T adjustment.)

    Examples
    --------
    >>> res = permutation_test_best_of({"b": [1] * 9 + [0], "c": [1] * 5 + [0] * 5},
    ...                                [1] * 2 + [0] * 8, seed=1)
    >>> str(res.loc[0, "winner"]), bool(res.loc[0, "p"] < 0.05)
    ('b', True)
    """
    if n_permutations < 1:
        raise ValueError("n_permutations must be a positive integer.")
    names = list(candidates)
    groups = [_binary(candidates[n]) for n in names]
    base = _binary(control)
    rest = _binary([] if others is None else others)
    seed = _util.make_seed(seed)
    row: dict[str, Any] = {"n_candidates": len(names), "n_others": rest.size,
                           "n_permutations": int(n_permutations), "seed": seed}
    if not names or base.size == 0 or any(g.size == 0 for g in groups):
        return _util.frame({**row, "winner": "", "diff": np.nan, "p": np.nan,
                            "p_fixed_winner": np.nan, "reason": "a group is empty"},
                           _BEST_COLUMNS)
    gaps = [g.mean() - base.mean() for g in groups]
    best = int(np.argmax(gaps))  # the first listed on a tie
    sizes = [g.size for g in groups] + [base.size]
    null = _shuffled_gaps(np.concatenate([*groups, base, rest]), sizes, n_permutations, seed)
    tol = 1e-12
    hits_max = int((null.max(axis=1) >= gaps[best] - tol).sum())
    hits_fixed = int((null[:, best] >= gaps[best] - tol).sum())
    return _util.frame({**row, "winner": names[best], "diff": float(gaps[best]),
                        "p": (hits_max + 1) / (n_permutations + 1),
                        "p_fixed_winner": (hits_fixed + 1) / (n_permutations + 1),
                        "reason": ""}, _BEST_COLUMNS)


_BEST_COLUMNS = ("winner", "diff", "p", "p_fixed_winner", "n_candidates", "n_others",
                 "n_permutations", "seed", "reason")


def _shuffled_gaps(pooled: np.ndarray, sizes: list[int], m: int, seed: int) -> np.ndarray:
    """Per shuffle, each candidate's proportion minus the control's (the last size);
    in chunks to bound memory. Shape ``(m, len(sizes) - 1)``."""
    rng = np.random.default_rng(seed)
    edges = np.cumsum([0, *sizes])
    out = np.empty((m, len(sizes) - 1))
    chunk = max(1, 2_000_000 // pooled.size)
    for start in range(0, m, chunk):
        size = min(chunk, m - start)
        shuffled = rng.permuted(np.tile(pooled, (size, 1)), axis=1)
        sums = np.add.reduceat(shuffled[:, : edges[-1]], edges[:-1], axis=1)
        shares = sums / np.asarray(sizes, dtype=float)
        out[start : start + size] = shares[:, :-1] - shares[:, -1:]
    return out


def _extreme(null: np.ndarray, observed: float, alternative: str) -> int:
    tol = 1e-12
    if alternative == "greater":
        return int((null >= observed - tol).sum())
    if alternative == "less":
        return int((null <= observed + tol).sum())
    return int((np.abs(null) >= abs(observed) - tol).sum())


def cochran_armitage(
    successes: Any, totals: Any, *, scores: Any | None = None
) -> pd.DataFrame:
    """Cochran-Armitage chi-square test for a linear trend in proportions.

    Parameters
    ----------
    successes : array_like of int
        Successes per ordered group (e.g. KEEP count per distance band).
    totals : array_like of int
        Items per group.
    scores : array_like, optional
        Group scores; default ``1, 2, ..., G`` (as R ``prop.trend.test``).

    Returns
    -------
    pandas.DataFrame
        One row: ``statistic`` (chi-square, 1 df), ``z`` (signed: positive when the
        proportion rises with the score), ``df, p`` (two-sided), ``n_groups, n,
        reason``.

    Notes
    -----
    With :math:`\\bar p = \\sum x_i / N` and :math:`\\bar s = \\sum n_i s_i / N`,
    :math:`T = \\sum x_i (s_i - \\bar s)` and
    :math:`\\chi^2 = T^2 / [\\bar p (1 - \\bar p) \\sum n_i (s_i - \\bar s)^2]`
    [1]_ [2]_, without continuity correction; this is exactly R's
    ``prop.trend.test``. NaN with the reason when all or no items succeed, the
    scores do not vary, or there are fewer than two groups.

    References
    ----------
    .. [1] Cochran, W. G. (1954). Some methods for strengthening the common chi-squared
           tests. Biometrics, 10(4), 417-451.
    .. [2] Armitage, P. (1955). Tests for linear trends in proportions and
           frequencies. Biometrics, 11(3), 375-386.

    Examples
    --------
    R ``prop.trend.test`` example (X-squared = 8.2249, p-value = 0.004132):

    >>> res = cochran_armitage([83, 90, 129, 70], [86, 93, 136, 82])
    >>> round(float(res.loc[0, "statistic"]), 4), round(float(res.loc[0, "p"]), 6)
    (8.2249, 0.004132)
    """
    x = np.asarray(successes, dtype=float).ravel()
    n = np.asarray(totals, dtype=float).ravel()
    s = np.arange(1.0, x.size + 1) if scores is None else np.asarray(scores, float).ravel()
    if not x.size == n.size == s.size:
        raise ValueError("successes, totals and scores must have the same length.")
    if (x < 0).any() or (x > n).any():
        raise ValueError("Each success count must lie between 0 and its total.")
    row = {"df": 1, "n_groups": int(x.size), "n": int(n.sum())}
    reason = _trend_reason(x, n, s)
    if reason:
        return _util.frame({**row, "statistic": np.nan, "z": np.nan, "p": np.nan,
                            "reason": reason}, _CA_COLUMNS)  # fmt: skip
    p_bar = x.sum() / n.sum()
    s_bar = (n * s).sum() / n.sum()
    t = (x * (s - s_bar)).sum()
    var = p_bar * (1 - p_bar) * (n * (s - s_bar) ** 2).sum()
    chi2 = t**2 / var
    return _util.frame({**row, "statistic": chi2, "z": t / np.sqrt(var),
                        "p": float(_dist.chi2_sf(chi2, 1)), "reason": ""}, _CA_COLUMNS)


_CA_COLUMNS = ("statistic", "z", "df", "p", "n_groups", "n", "reason")


def _trend_reason(x: np.ndarray, n: np.ndarray, s: np.ndarray) -> str:
    used = n > 0
    if used.sum() < 2:
        return "fewer than two non-empty groups"
    if x.sum() in (0, n.sum()):
        return "all items in one outcome; no variation"
    if np.ptp(s[used]) == 0:
        return "the scores do not vary"
    return ""


def wilcoxon_signed_rank(
    x: Any,
    y: Any | None = None,
    *,
    alternative: Alternative = "two-sided",
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
    method: Literal["auto", "exact", "approx"] = "auto",
    correction: bool = False,
) -> pd.DataFrame:
    """Wilcoxon signed-rank test for paired totals.

    Parameters
    ----------
    x : array_like
        First measurements, or the differences when ``y`` is None.
    y : array_like, optional
        Second measurements; pairs with a missing value are dropped (counted in
        ``reason``).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        "greater": the differences ``x - y`` are shifted above 0.
    zero_method : {"wilcox", "pratt", "zsplit"}, default "wilcox"
        Zero differences: "wilcox" drops them before ranking (R ``wilcox.test``);
        "pratt" ranks them and then drops them; "zsplit" splits their ranks.
    method : {"auto", "exact", "approx"}, default "auto"
        How the p-value is computed: "exact" (the null distribution of the rank sum),
        "approx" (normal approximation) or "auto" (the rule in the Notes).
    correction : bool, default False
        Continuity correction of the normal approximation, R ``wilcox.test``'s
        default (``correct = TRUE``); scipy's default and sheetflow's is without.
        The exact and enumerated p-values do not use it.

    Returns
    -------
    pandas.DataFrame
        One row: ``statistic`` (``min(W+, W-)`` for two-sided, ``W+`` for one-sided,
        as :func:`scipy.stats.wilcoxon` reports it), ``w_plus`` (sum of ranks of
        positive differences, R's ``V``), ``p, n, n_zero, alternative, zero_method,
        reason``.

    Notes
    -----
    Wilcoxon (1945) [1]_, computed as :func:`scipy.stats.wilcoxon` of scipy 1.17
    computes it (without continuity correction unless ``correction``: scipy's default),
    whatever scipy is installed. Zero differences are dropped before ranking by
    default ("wilcox", Wilcoxon's own rule and R's), not ranked as in Pratt (1959)
    [2]_. ``W+`` and ``W-`` are the sums of the ranks of ``|d|`` (average ranks for
    ties) over the positive and negative differences; "pratt" ranks the zeros too but
    counts none of their ranks, "zsplit" adds half their ranks to each sum.

    The p-value's method under "auto":

    - more than 50 differences (zeros included): the normal approximation;
    - at most 50, without ties or zeros: the exact null distribution;
    - ties or zeros, at most 13 differences: every one of the ``2^n`` sign changes of
      the differences is counted (exact given the ties and zeros);
    - ties or zeros, more than 13: the normal approximation.

    The normal approximation uses :math:`z = (W_+ - m(m+1)/4) / se` with
    :math:`se^2 = [m(m+1)(2m+1) - \\sum (t^3 - t)/2] / 24` over the ``m`` ranked
    differences and the tie groups ``t`` ("pratt" takes the zeros out of the mean,
    the variance and the tie term, Cureton 1967); with ``correction``, ``W+`` is first
    moved half a unit against the alternative (down for "greater", up for "less",
    towards the mean for two-sided), as in R ``wilcox.test(exact = FALSE,
    correct = TRUE)`` and scipy's ``correction=True``. "exact" sums each tail of the null
    distribution of ``m`` untied ranks directly (scipy 1.17 takes an upper tail beyond
    the mean as one minus the rest, inaccurate for p-values below about 1e-13); with ties
    or zeros that distribution is no longer exact, and ``W+`` is rounded up for the
    lower tail and down for the upper (scipy 1.17's conservative choice). Two-sided p
    is twice the smaller tail, capped at 1.

    ``w_plus`` is computed after dropping zero differences and with average ranks for
    ties. No usable pairs, or only zero differences, give NaN with the reason.

    References
    ----------
    .. [1] Wilcoxon, F. (1945). Individual comparisons by ranking methods.
           Biometrics Bulletin, 1(6), 80-83.
    .. [2] Pratt, J. W. (1959). Remarks on zeros and ties in the Wilcoxon signed rank
           procedures. Journal of the American Statistical Association, 54(287),
           655-667.

    Examples
    --------
    R ``wilcox.test`` example (Hollander & Wolfe 1973, p. 29; V = 40,
    p-value = 0.01953):

    >>> x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    >>> y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    >>> res = wilcoxon_signed_rank(x, y, alternative="greater")
    >>> float(res.loc[0, "w_plus"]), round(float(res.loc[0, "p"]), 5)
    (40.0, 0.01953)
    """
    _util.check_choice("alternative", alternative, _ALTERNATIVES)
    _util.check_choice("zero_method", zero_method, ("wilcox", "pratt", "zsplit"))
    _util.check_choice("method", method, ("auto", "exact", "approx"))
    d, note = _differences(x, y)
    nonzero = d[d != 0]
    row = {"n": int(d.size), "n_zero": int(d.size - nonzero.size),
           "alternative": alternative, "zero_method": zero_method}  # fmt: skip
    if nonzero.size == 0:
        reason = "no pairs" if d.size == 0 else "all differences are zero"
        return _util.frame({**row, "statistic": np.nan, "w_plus": np.nan, "p": np.nan,
                            "reason": _util.join_notes(reason, note)}, _WX_COLUMNS)  # fmt: skip
    test = _signed_rank.signed_rank_test(d, alternative=alternative,
                                         zero_method=zero_method, method=method,
                                         correction=correction)
    return _util.frame({**row, "statistic": test.statistic, "w_plus": test.v, "p": test.p,
                        "reason": note}, _WX_COLUMNS)  # fmt: skip


_WX_COLUMNS = (
    "statistic", "w_plus", "p", "n", "n_zero", "alternative", "zero_method", "reason",
)  # fmt: skip


def _differences(x: Any, y: Any | None) -> tuple[np.ndarray, str]:
    """Paired differences without missing ones, and the note saying how many went."""
    a = np.asarray(x, dtype=float).ravel()
    if y is not None:
        b = np.asarray(y, dtype=float).ravel()
        if a.shape != b.shape:
            raise ValueError("x and y must have the same length.")
        a = a - b
    missing = np.isnan(a)
    what = "values" if y is None else "pairs"
    return a[~missing], _util.dropped_pairs_note(int(missing.sum()), a.size, what)
