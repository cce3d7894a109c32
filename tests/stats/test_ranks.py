"""Average ranks and Spearman's rho without scipy.stats, cross-checked against it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from sheetflow import stats as st
from sheetflow.stats import _ranks


def _samples(seed: int):
    """Pairs of samples: continuous, and coarse scores with many ties."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        n = int(rng.integers(3, 60))
        x = rng.normal(size=n)
        yield x, x + rng.normal(size=n)
        a = rng.integers(1, 6, n).astype(float)
        yield a, np.clip(a + rng.integers(-1, 2, n), 1, 5)


def test_rankdata_equals_scipy_with_and_without_ties() -> None:
    for x, y in _samples(0):
        np.testing.assert_array_equal(_ranks.rankdata(x), sps.rankdata(x), strict=True)
        np.testing.assert_array_equal(_ranks.rankdata(y), sps.rankdata(y), strict=True)


def test_rankdata_small_cases() -> None:
    assert _ranks.rankdata([3, 1, 2, 2, 2, 1]).tolist() == [6.0, 1.5, 4.0, 4.0, 4.0, 1.5]
    assert _ranks.rankdata([]).size == 0
    ranks, ties = _ranks.ranks_and_ties([3, 1, 2, 2, 2, 1])
    assert ranks.tolist() == [6.0, 1.5, 4.0, 4.0, 4.0, 1.5] and ties.tolist() == [2, 3, 1]


def test_spearman_equals_scipy_spearmanr() -> None:
    for x, y in _samples(1):
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        ref = sps.spearmanr(x, y)
        rho, p = _ranks.spearman_rho_p(x, y)
        assert rho == pytest.approx(ref.statistic, rel=1e-12, abs=1e-15)
        assert p == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-300)


def test_spearman_perfect_and_clipped_cases() -> None:
    for x, y in ([1, 2, 3, 4], [10, 20, 30, 40]), ([1, 2, 3, 4], [4, 3, 2, 1]):
        ref = sps.spearmanr(x, y)
        assert _ranks.spearman_rho_p(x, y) == (ref.statistic, ref.pvalue)
    x, y = [1, 2, 2, 3, 4], [1, 2, 2, 3, 4]  # ties: rho = 1 up to rounding
    ref = sps.spearmanr(x, y)
    assert _ranks.spearman_rho_p(x, y) == (pytest.approx(ref.statistic, rel=1e-15), ref.pvalue)


def test_mean_spearman_pairs_equal_scipy() -> None:
    rng = np.random.default_rng(2)
    data = rng.integers(1, 6, size=(4, 30)).astype(float)
    pairs = [sps.spearmanr(data[a], data[b]).statistic
             for a in range(4) for b in range(a + 1, 4)]
    res = st.mean_spearman(data, fisher=False).loc[0]
    assert res["rho"] == pytest.approx(np.mean(pairs), rel=1e-12)


def test_spearman_r_cor_test_example() -> None:
    # R ?cor.test, Hollander & Wolfe (1973), p. 185f.:
    # cor.test(x, y, method = "spearman", alternative = "greater") gives S = 48,
    # rho = 0.6; S = (n^3 - n) / 6 * (1 - rho).
    x = [44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1]
    y = [2.6, 3.1, 2.5, 5.0, 3.6, 4.0, 5.2, 2.8, 3.8]
    rho = st.spearman(x, y).loc[0, "rho"]
    assert rho == pytest.approx(0.6, abs=1e-12)
    assert (9**3 - 9) / 6 * (1 - rho) == pytest.approx(48, abs=1e-9)


def test_spearman_at_rho_one_has_the_exact_p_and_says_why_there_is_no_interval() -> None:
    # exact null distribution of Spearman's rho, n = 5: one of the 5! = 120 orderings
    # gives rho = 1, so P(rho = 1) = 1/120 and the two-sided p is 2/120. The t
    # approximation gave p = 1.4e-24 and a zero-width interval [0.999999999999998, 1].
    for y, rho in (([2, 3, 4, 5, 9], 1.0), ([9, 5, 4, 3, 2], -1.0)):
        res = st.spearman([1, 2, 3, 4, 5], y).loc[0]
        assert res["rho"] == rho
        assert res["p"] == pytest.approx(2 / 120, rel=1e-15)
        assert np.isnan(res["ci_low"]) and np.isnan(res["ci_high"])
        assert "Fisher-z interval is undefined at |rho| = 1" in res["reason"]
    tied = st.spearman([1, 2, 2, 3, 4], [1, 2, 2, 3, 4]).loc[0]
    assert tied["rho"] == 1.0 and np.isnan(tied["p"]) and "no p" in tied["reason"]


def test_spearman_exact_p_counts_every_ordering() -> None:
    """Small untied samples: p is the share of the n! orderings of y whose |rho| is at
    least as far out as observed, in each tail (two-sided: twice the smaller tail)."""
    import itertools
    rng = np.random.default_rng(7)
    for n in (4, 5, 6, 7):
        x, y = rng.permutation(n) + 1.0, rng.permutation(n) + 1.0
        s = ((x - y) ** 2).sum()
        sums = np.array([((x - np.array(p)) ** 2).sum()
                         for p in itertools.permutations(range(1, n + 1))])
        want = min(1.0, 2 * min((sums <= s).mean(), (sums >= s).mean()))
        assert st.spearman(x, y).loc[0, "p"] == pytest.approx(want, rel=1e-12)
    # beyond 10 pairs without ties, and with ties, the t approximation as scipy
    x = rng.normal(size=12)
    y = x + rng.normal(size=12)
    assert st.spearman(x, y).loc[0, "p"] == pytest.approx(sps.spearmanr(x, y).pvalue,
                                                          rel=1e-12)
