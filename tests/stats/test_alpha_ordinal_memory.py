"""Ordinal alpha without a V x V coincidence matrix gives the dense formula's values.

The reference below builds Krippendorff's (2011) coincidence matrix and mid-rank
metric densely, exactly as the definition reads; the library computes the same sums
from per-unit rank moments (memory linear in the number of distinct values).
"""

from __future__ import annotations

import numpy as np
import pytest

from sheetflow import stats as st


def _dense_alpha(data: np.ndarray, domain: np.ndarray, unit_weights=None) -> float:
    codes = np.searchsorted(domain, np.where(np.isnan(data), domain[0], data))
    ok = ~np.isnan(data)
    counts = np.zeros((data.shape[1], len(domain)))
    for r in range(data.shape[0]):
        np.add.at(counts, (np.flatnonzero(ok[r]), codes[r][ok[r]]), 1.0)
    counts = counts[counts.sum(axis=1) >= 2]
    w = np.ones(len(counts)) if unit_weights is None else unit_weights
    m = counts.sum(axis=1)
    o = np.einsum("u,uc,uk->ck", w / (m - 1), counts, counts) - np.diag(w / (m - 1) @ counts)
    n_c = o.sum(axis=1)
    mid = np.cumsum(n_c) - n_c / 2
    delta = (mid[:, None] - mid[None, :]) ** 2
    n = n_c.sum()
    return 1 - (n - 1) * (o * delta).sum() / (np.outer(n_c, n_c) * delta).sum()


def _data(rng: np.random.Generator, continuous: bool) -> np.ndarray:
    raters, units = rng.integers(2, 6), rng.integers(5, 40)
    latent = rng.normal(size=units)
    data = latent + rng.normal(scale=0.7, size=(raters, units))
    data = np.round(data, 3) if continuous else np.clip(np.round(data * 1.5) + 3, 1, 5)
    data[rng.random(data.shape) < 0.15] = np.nan
    return data


@pytest.mark.parametrize("continuous", [True, False], ids=["continuous", "5-point"])
def test_ordinal_alpha_equals_dense_definition(continuous: bool) -> None:
    rng = np.random.default_rng(21)
    for _ in range(150):
        data = _data(rng, continuous)
        res = st.krippendorff_alpha(data, level="ordinal", n_boot=0).loc[0]
        domain = np.unique(data[~np.isnan(data)])
        if np.isnan(res["alpha"]):
            assert res["reason"]
            continue
        assert res["alpha"] == pytest.approx(_dense_alpha(data, domain), abs=1e-12)


def test_ordinal_bootstrap_replicates_equal_dense_definition() -> None:
    # Same draws as the library (default_rng(seed).integers over the pairable units).
    rng = np.random.default_rng(22)
    for seed in range(10):
        data = _data(rng, continuous=True)
        domain = np.unique(data[~np.isnan(data)])
        res = st.krippendorff_alpha(data, level="ordinal", n_boot=50, seed=seed).loc[0]
        n_pairable = int(((~np.isnan(data)).sum(axis=0) >= 2).sum())
        draws = np.random.default_rng(seed).integers(0, n_pairable, size=(50, n_pairable))
        reps = np.array([_dense_alpha(data, domain, np.bincount(d, minlength=n_pairable))
                         for d in draws])  # fmt: skip
        low, high = np.quantile(reps[~np.isnan(reps)], [0.025, 0.975])
        assert res["ci_low"] == pytest.approx(low, abs=1e-12)
        assert res["ci_high"] == pytest.approx(high, abs=1e-12)
