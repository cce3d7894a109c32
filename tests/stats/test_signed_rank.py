"""The Wilcoxon signed-rank test without scipy.stats, cross-checked against it.

scipy is called with the same explicit method ("exact" or "approx"), so the comparison
does not depend on the rule scipy's "auto" follows in the installed version; sheetflow's
own "auto" rule is tested on its own. Since scipy 1.14, "exact" with ties or zeros
rounds the statistic (gh-19872); before, it fell back to the approximation, so those
are compared with scipy 1.17.1's recorded outputs, and with the installed scipy from
1.14. Exact p-values may differ from scipy 1.17 by a few 1e-16: scipy 1.17 takes an
upper tail above the mean as one minus the rest (fixed in scipy PR 26027), sheetflow
sums the tail itself.
"""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy
from scipy import stats as sps

from sheetflow import stats as st
from sheetflow.stats import _signed_rank

ALTERNATIVES = ("two-sided", "greater", "less")
ZERO_METHODS = ("wilcox", "pratt", "zsplit")
FIXTURE = Path(__file__).parent / "fixtures" / "wilcoxon_exact_ties_scipy.json"
SCIPY_ROUNDS_TIES = tuple(int(v) for v in scipy.__version__.split(".")[:2]) >= (1, 14)


def _samples(seed: int, kind: str, count: int = 60):
    """Differences: continuous (no ties, no zeros), coarse integers (ties and zeros),
    one decimal (some of each)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 70))
        if kind == "continuous":
            d = rng.normal(0.3, 1, n)
        elif kind == "integers":
            d = rng.integers(-3, 4, n).astype(float)
        else:
            d = np.round(rng.normal(0.2, 1, n), 1)
        if (d != 0).any():
            yield d


def _scipy(d: np.ndarray, alternative: str, zero_method: str, method: str,
           correction: bool = False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sps.wilcoxon(d, alternative=alternative, zero_method=zero_method,
                            method=method, correction=correction)


def _compare(d: np.ndarray, method: str, correction: bool = False) -> None:
    for alternative, zero_method in itertools.product(ALTERNATIVES, ZERO_METHODS):
        ref = _scipy(d, alternative, zero_method, method, correction)
        statistic, p, _ = _signed_rank.signed_rank_test(
            d, alternative=alternative, zero_method=zero_method, method=method,
            correction=correction)
        where = (d.tolist(), alternative, zero_method, method)
        assert statistic == ref.statistic, where
        assert p == pytest.approx(float(ref.pvalue), rel=1e-12, abs=1e-15), where


@pytest.mark.parametrize("kind", ["continuous", "integers", "decimals"])
def test_normal_approximation_equals_scipy(kind: str) -> None:
    for d in _samples(1, kind):
        _compare(d, "approx")


@pytest.mark.parametrize("kind", ["continuous", "integers", "decimals"])
def test_continuity_corrected_approximation_equals_scipy(kind: str) -> None:
    for d in _samples(2, kind):
        _compare(d, "approx", correction=True)


def test_exact_without_ties_or_zeros_equals_scipy() -> None:
    for d in _samples(2, "continuous"):
        _compare(d, "exact")


def test_exact_with_ties_and_zeros_equals_scipy_1_14() -> None:
    """Against scipy 1.17.1's recorded outputs on every scipy (fixtures/
    make_wilcoxon_fixture.py), and against the installed scipy when it is 1.14 or later
    (older ones approximate instead of following the rule)."""
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert "scipy 1.17.1" in recorded["source"] and len(recorded["cases"]) == 50
    for case in recorded["cases"]:
        d = np.asarray(case["d"])
        for key, (statistic, p) in case["exact"].items():
            alternative, zero_method = key.split("/")
            got = _signed_rank.signed_rank_test(d, alternative=alternative,
                                                zero_method=zero_method, method="exact")
            assert got[0] == statistic, (case["d"], key)
            assert got[1] == pytest.approx(p, rel=1e-12, abs=1e-15), (case["d"], key)
        if SCIPY_ROUNDS_TIES:
            _compare(d, "exact")


def test_exact_tail_is_summed_not_complemented() -> None:
    d = np.arange(1.0, 51.0)  # every difference positive: P(W+ >= 1275) = 2**-50
    assert _signed_rank.signed_rank_test(d, alternative="greater", zero_method="wilcox",
                                         method="exact")[1] == 2.0**-50
    assert _signed_rank.signed_rank_test(-d, alternative="two-sided", zero_method="wilcox",
                                         method="exact")[1] == 2.0**-49


def test_auto_rule() -> None:
    choose = _signed_rank.choose_method
    assert choose(50, has_ties=False, has_zeros=False) == "exact"
    assert choose(51, has_ties=False, has_zeros=False) == "approx"
    for ties, zeros in ((True, False), (False, True), (True, True)):
        assert choose(1, ties, zeros) == "enumeration"
        assert choose(13, ties, zeros) == "enumeration"
        assert choose(14, ties, zeros) == "approx"
        assert choose(51, ties, zeros) == "approx"


def _auto(d, alternative="two-sided", zero_method="wilcox"):
    return st.wilcoxon_signed_rank(d, alternative=alternative,
                                   zero_method=zero_method).loc[0, "p"]


def _explicit(d, method, alternative="two-sided", zero_method="wilcox"):
    return st.wilcoxon_signed_rank(d, alternative=alternative, zero_method=zero_method,
                                   method=method).loc[0, "p"]


def test_auto_applies_the_rule() -> None:
    rng = np.random.default_rng(4)
    untied = rng.normal(0.4, 1, 51)
    assert _auto(untied[:50]) == _explicit(untied[:50], "exact")
    assert _auto(untied) == _explicit(untied, "approx")
    tied = np.round(rng.normal(0.4, 1, 14), 0)
    assert (tied == 0).any()
    assert _auto(tied) == _explicit(tied, "approx")
    assert _auto(tied[:13]) == _enumerated(tied[:13], "two-sided", "wilcox")


def _enumerated(d: np.ndarray, alternative: str, zero_method: str) -> float:
    """The share of all 2**n sign changes whose statistic is at most / at least the
    observed one, by brute force with scipy's ranks."""
    def w_plus(x: np.ndarray) -> float:
        if zero_method == "wilcox":
            x = x[x != 0]
        ranks = sps.rankdata(np.abs(x))
        return ranks[x > 0].sum() + (ranks[x == 0].sum() / 2 if zero_method == "zsplit" else 0)

    observed = w_plus(d)
    null = np.array([w_plus(d * np.array(signs))
                     for signs in itertools.product((1, -1), repeat=d.size)])
    less, greater = np.mean(null <= observed + 1e-9), np.mean(null >= observed - 1e-9)
    p = {"less": less, "greater": greater}.get(alternative, 2 * min(less, greater))
    return min(p, 1.0)


def test_enumeration_counts_every_sign_change() -> None:
    rng = np.random.default_rng(5)
    for _ in range(12):
        d = rng.integers(-3, 4, int(rng.integers(2, 11))).astype(float)
        if not (d != 0).any():
            continue
        for alternative, zero_method in itertools.product(ALTERNATIVES, ZERO_METHODS):
            got = _auto(d, alternative, zero_method)
            assert got == pytest.approx(_enumerated(d, alternative, zero_method),
                                        rel=1e-12), (d.tolist(), alternative, zero_method)


def test_w_plus_is_the_non_zero_differences_rank_sum_under_every_zero_method() -> None:
    """``w_plus`` (R's V) ranks the non-zero differences alone, also when "pratt" and
    "zsplit" rank the zeros with them: the very float of scipy's ranks summed."""
    for kind in ("integers", "decimals"):
        for d in _samples(6, kind):
            nonzero = d[d != 0]
            expected = float(sps.rankdata(np.abs(nonzero))[nonzero > 0].sum())
            for zero_method in ZERO_METHODS:
                got = st.wilcoxon_signed_rank(d, zero_method=zero_method).loc[0, "w_plus"]
                assert got == expected, (d.tolist(), zero_method)


def test_the_differences_are_sorted_once(monkeypatch) -> None:
    """The ranks, the tie groups and ``w_plus`` all come from one sort of ``|d|``."""
    from sheetflow.stats import _ranks

    sorts = []
    groups = _ranks._groups
    monkeypatch.setattr(_ranks, "_groups", lambda x: sorts.append(x.size) or groups(x))
    d = np.array([1.5, -2.0, 0.0, 2.0, 3.0, -0.5, 0.0, 1.5])
    for zero_method in ZERO_METHODS:
        sorts.clear()
        st.wilcoxon_signed_rank(d, zero_method=zero_method, method="approx")
        assert len(sorts) == 1, (zero_method, sorts)


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="method"):
        st.wilcoxon_signed_rank([1.0, 2.0, -0.5], method="asymptotic")


def test_r_wilcox_test_example() -> None:
    # R ?wilcox.test, Hollander & Wolfe (1973), p. 29, depression scale factor:
    # wilcox.test(x, y, paired = TRUE, alternative = "greater") gives V = 40,
    # p-value = 0.01953 (exact: 10 / 2**9).
    x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    res = st.wilcoxon_signed_rank(x, y, alternative="greater").loc[0]
    assert (res["w_plus"], res["statistic"]) == (40.0, 40.0)
    assert round(res["p"], 5) == 0.01953
    assert res["p"] == 10 / 2**9
