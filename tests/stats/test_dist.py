"""The distribution functions of sheetflow.stats._dist give scipy.stats' floats exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from sheetflow.stats import _dist

QUANTILES = np.array([0.0, 1e-300, 1e-20, 1e-8, 0.001, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999,
                      1 - 1e-12, 1.0, -0.1, 1.1, np.nan, -np.inf, np.inf])
POINTS = np.array([-np.inf, -1e10, -40.0, -5.0, -1.96, -1e-300, 0.0, 1e-300, 0.5, 1.96, 5.0,
                   40.0, 1e10, np.inf, np.nan])
DFS = np.array([-1.0, 0.0, 1e-3, 0.5, 1.0, 2.0, 3.0, 7.5, 30.0, 1e6, np.inf, np.nan])


def _random_grid(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(size=200), rng.normal(scale=4, size=200), rng.uniform(0.2, 80, 200)


def assert_same(got, expected) -> None:
    """Equal floats, NaN where NaN, and the same kind of result (scalar or array)."""
    np.testing.assert_array_equal(got, expected, strict=True)


@pytest.mark.parametrize(("ours", "theirs", "grid"), [
    (_dist.norm_ppf, sps.norm.ppf, QUANTILES),
    (_dist.norm_sf, sps.norm.sf, POINTS),
    (_dist.norm_cdf, sps.norm.cdf, POINTS),
    (_dist.logistic_cdf, sps.logistic.cdf, POINTS),
])
def test_standard_distributions_on_edges(ours, theirs, grid) -> None:
    assert_same(ours(grid), theirs(grid))
    for value in grid:
        assert_same(ours(value), theirs(value))


@pytest.mark.parametrize(("ours", "theirs", "grid"), [
    (_dist.t_ppf, sps.t.ppf, QUANTILES),
    (_dist.t_sf, sps.t.sf, POINTS),
    (_dist.chi2_sf, sps.chi2.sf, POINTS),
])
def test_one_shape_distributions_on_edges(ours, theirs, grid) -> None:
    values, dfs = np.meshgrid(grid, DFS)
    assert_same(ours(values, dfs), theirs(values, dfs))
    assert_same(ours(grid[3], 7), theirs(grid[3], 7))


@pytest.mark.parametrize(("ours", "theirs", "grid"), [
    (_dist.f_ppf, sps.f.ppf, QUANTILES),
    (_dist.f_sf, sps.f.sf, POINTS),
])
def test_f_distribution_on_edges(ours, theirs, grid) -> None:
    values, dfn = np.meshgrid(grid, DFS)
    for dfd in DFS:
        assert_same(ours(values, dfn, dfd), theirs(values, dfn, dfd))
    assert_same(ours(grid[4], 3, 40.5), theirs(grid[4], 3, 40.5))


def test_random_arguments() -> None:
    q, x, df = _random_grid(0)
    assert_same(_dist.norm_ppf(q), sps.norm.ppf(q))
    assert_same(_dist.norm_sf(x), sps.norm.sf(x))
    assert_same(_dist.t_ppf(q, df), sps.t.ppf(q, df))
    assert_same(_dist.t_sf(x, df), sps.t.sf(x, df))
    assert_same(_dist.chi2_sf(x**2, df), sps.chi2.sf(x**2, df))
    assert_same(_dist.f_ppf(q, df, df[::-1]), sps.f.ppf(q, df, df[::-1]))
    assert_same(_dist.f_sf(x**2, df, df[::-1]), sps.f.sf(x**2, df, df[::-1]))
    assert_same(_dist.logistic_cdf(x), sps.logistic.cdf(x))
