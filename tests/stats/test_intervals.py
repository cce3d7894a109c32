"""Wilson and Newcombe intervals: published values and statsmodels on random counts."""

from __future__ import annotations

import numpy as np
import pytest

from sheetflow.stats import newcombe_difference, wilson_interval


@pytest.mark.parametrize("k,n,low,high", [
    (81, 263, 0.2553, 0.3662),   # Newcombe (1998) Stat Med 17:857, Table I
    (15, 148, 0.0624, 0.1605),   # ibid.
    (0, 20, 0.0, 0.1611),        # ibid.
    (1, 29, 0.0061, 0.1718),     # ibid.
])
def test_wilson_published(k, n, low, high):
    row = wilson_interval(k, n).loc[0]
    assert (round(float(row["ci_low"]), 4), round(float(row["ci_high"]), 4)) == (low, high)


@pytest.mark.parametrize("n", [1, 7, 15, 20, 263, 1000])
def test_wilson_bounds_at_none_and_all_are_exact(n):
    """Newcombe (1998), Table I: 0/20 has lower bound 0.0 (exactly: the interval's
    formula gives centre - half = 0 there). It came out as 2e-17 for 0/15 and was
    printed as 2.18E-17 on the keep-known trend sheet."""
    assert wilson_interval(0, n).loc[0, "ci_low"] == 0.0
    assert wilson_interval(n, n).loc[0, "ci_high"] == 1.0


@pytest.mark.parametrize("counts,low,high", [
    ((56, 70, 48, 80), 0.0524, 0.3339),   # Newcombe (1998) Stat Med 17:873, Table II (a)
    ((9, 10, 3, 10), 0.1705, 0.8090),     # ibid. (b)
])
def test_newcombe_published(counts, low, high):
    row = newcombe_difference(*counts).loc[0]
    assert (round(float(row["ci_low"]), 4), round(float(row["ci_high"]), 4)) == (low, high)


def test_against_statsmodels_on_random_counts():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    rng = np.random.default_rng(5)
    for _ in range(200):
        n1, n2 = rng.integers(1, 120, size=2)
        k1, k2 = rng.integers(0, n1 + 1), rng.integers(0, n2 + 1)
        conf = float(rng.choice([0.9, 0.95, 0.99]))
        w = wilson_interval(int(k1), int(n1), confidence=conf).loc[0]
        ref = proportion.proportion_confint(k1, n1, alpha=1 - conf, method="wilson")
        assert (w["ci_low"], w["ci_high"]) == pytest.approx(ref, abs=1e-12)
        d = newcombe_difference(int(k1), int(n1), int(k2), int(n2), confidence=conf).loc[0]
        ref = proportion.confint_proportions_2indep(k1, n1, k2, n2, method="newcomb",
                                                    compare="diff", alpha=1 - conf)
        assert (d["ci_low"], d["ci_high"]) == pytest.approx(ref, abs=1e-12)


def test_empty_groups_are_nan_with_reason():
    assert wilson_interval(0, 0).loc[0, "reason"] == "no trials"
    assert newcombe_difference(1, 2, 0, 0).loc[0, "reason"] == "a group has no trials"
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
