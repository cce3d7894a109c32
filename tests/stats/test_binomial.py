"""The exact binomial test and Clopper-Pearson interval without scipy.stats.

The p-value is cross-checked against :func:`scipy.stats.binomtest`. The interval is the
exact root of the Clopper-Pearson equations (``special.betaincinv``, as R's ``qbeta``);
scipy finds the same roots with ``brentq``, whose default absolute tolerance is 2e-12,
so the comparison with scipy allows that, and the equations themselves are checked to
machine precision.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from sheetflow.stats import _binomial
from sheetflow.stats.proportions import binomial_share

BRENTQ_XTOL = 2e-12

NS = [1, 2, 3, 4, 5, 7, 10, 17, 40, 100, 487, 925, 2000]
SHARES = [0.5, 0.0, 1.0, 1e-9, 1 - 1e-9, 1e-3, 0.999, 0.1, 0.3, 1 / 3, 0.75]


def _grid(seed: int):
    rng = np.random.default_rng(seed)
    for n in NS:
        ks = {0, 1, n // 3, n // 2, n - 1, n, *rng.integers(0, n + 1, 4).tolist()}
        for k in sorted(k for k in ks if 0 <= k <= n):
            yield k, n


@pytest.mark.parametrize("p0", SHARES)
def test_p_value_equals_scipy_binomtest(p0: float) -> None:
    for k, n in _grid(0):
        expected = sps.binomtest(k, n, p0).pvalue
        assert _binomial.binomial_test_p(k, n, p0) == pytest.approx(expected, rel=1e-10,
                                                                     abs=1e-300), (k, n)


def test_distribution_functions_equal_scipy_binom() -> None:
    for k, n in _grid(1):
        for p in SHARES:
            for j in (k - 1, k, k + 1):
                assert _binomial.binomial_pmf(j, n, p) == pytest.approx(
                    sps.binom.pmf(j, n, p), rel=1e-10, abs=1e-300)
                assert _binomial.binomial_cdf(j, n, p) == pytest.approx(
                    sps.binom.cdf(j, n, p), rel=1e-10, abs=1e-300)
                assert _binomial.binomial_sf(j, n, p) == pytest.approx(
                    sps.binom.sf(j, n, p), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99, 0.5])
def test_interval_equals_scipy_within_its_root_finding_tolerance(confidence: float) -> None:
    for k, n in _grid(2):
        ci = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
        low, high = _binomial.clopper_pearson(k, n, confidence)
        assert low == pytest.approx(ci.low, rel=1e-10, abs=BRENTQ_XTOL), (k, n)
        assert high == pytest.approx(ci.high, rel=1e-10, abs=BRENTQ_XTOL), (k, n)


@pytest.mark.parametrize("confidence", [0.95, 0.99])
def test_interval_solves_the_clopper_pearson_equations(confidence: float) -> None:
    alpha = (1 - confidence) / 2
    for k, n in _grid(3):
        low, high = _binomial.clopper_pearson(k, n, confidence)
        if k == 0:
            assert low == 0.0
        else:  # P(X >= k | low) = alpha
            assert sps.binom.sf(k - 1, n, low) == pytest.approx(alpha, rel=1e-12)
        if k == n:
            assert high == 1.0
        else:  # P(X <= k | high) = alpha
            assert sps.binom.cdf(k, n, high) == pytest.approx(alpha, rel=1e-12)


def test_r_binom_test_example() -> None:
    # R ?binom.test (Mendel's peas): binom.test(c(682, 243), p = 3/4) gives
    # p-value = 0.3825 and 95 percent confidence interval 0.7076683 0.7654066.
    row = binomial_share(682, 925, p0=0.75).iloc[0]
    assert round(row["p"], 4) == 0.3825
    assert round(row["ci_low"], 7) == 0.7076683
    assert round(row["ci_high"], 7) == 0.7654066


def test_binomial_share_refuses_a_share_outside_zero_one() -> None:
    with pytest.raises(ValueError, match="p0"):
        binomial_share(3, 10, p0=1.5)
