"""Property tests (hypothesis) for alpha and kappa invariances."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as hs
from hypothesis.extra.numpy import arrays

from sheetflow import stats as st

LEVELS = ["nominal", "ordinal", "interval", "ratio"]
DOMAIN = [1.0, 2.0, 3.0, 4.0, 5.0]


@hs.composite
def rating_matrices(draw: hs.DrawFn) -> np.ndarray:
    """Raters x units matrices over 1..5 with some NaN and at least two distinct values."""
    raters = draw(hs.integers(2, 5))
    units = draw(hs.integers(2, 8))
    values = draw(arrays(np.float64, (raters, units), elements=hs.sampled_from(DOMAIN)))
    mask = draw(arrays(np.bool_, (raters, units), elements=hs.booleans()))
    data = np.where(mask & (np.arange(raters)[:, None] >= 2), np.nan, values)
    return data


def _alpha(data: np.ndarray, level: str, **kw: object) -> float:
    res = st.krippendorff_alpha(data, level=level, value_domain=DOMAIN, n_boot=0, **kw)
    return float(res.loc[0, "alpha"])


@settings(max_examples=60, deadline=None)
@given(
    units=arrays(np.float64, hs.integers(2, 10), elements=hs.sampled_from(DOMAIN)),
    raters=hs.integers(2, 5),
    level=hs.sampled_from(LEVELS),
)
def test_alpha_is_one_under_perfect_agreement(units: np.ndarray, raters: int, level: str) -> None:
    data = np.tile(units, (raters, 1))
    res = st.krippendorff_alpha(data, level=level, value_domain=DOMAIN, n_boot=0)
    if len(set(units.tolist())) >= 2:
        assert res.loc[0, "alpha"] == 1.0
    else:  # one value used: no variation, alpha undefined with a reason
        assert np.isnan(res.loc[0, "alpha"]) and res.loc[0, "reason"]


@settings(max_examples=60, deadline=None)
@given(data=rating_matrices(), level=hs.sampled_from(LEVELS), seed=hs.integers(0, 2**32 - 1))
def test_alpha_invariant_to_rater_and_unit_order(data: np.ndarray, level: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shuffled = data[rng.permutation(data.shape[0])][:, rng.permutation(data.shape[1])]
    np.testing.assert_allclose(_alpha(shuffled, level), _alpha(data, level), rtol=1e-12,
                               equal_nan=True)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(data=rating_matrices(), perm=hs.permutations(DOMAIN))
def test_nominal_alpha_invariant_to_relabelling(data: np.ndarray, perm: list[float]) -> None:
    mapping = dict(zip(DOMAIN, perm, strict=True))
    relabelled = np.vectorize(lambda v: mapping.get(v, np.nan))(data)
    np.testing.assert_allclose(_alpha(relabelled, "nominal"), _alpha(data, "nominal"),
                               rtol=1e-12, equal_nan=True)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(data=rating_matrices(), level=hs.sampled_from(LEVELS), value=hs.sampled_from(DOMAIN),
       row=hs.integers(0, 4))  # fmt: skip
def test_unit_rated_once_changes_nothing(
    data: np.ndarray, level: str, value: float, row: int
) -> None:
    extra = np.full((data.shape[0], 1), np.nan)
    extra[row % data.shape[0], 0] = value
    before = st.krippendorff_alpha(data, level=level, value_domain=DOMAIN, n_boot=0)
    after = st.krippendorff_alpha(np.hstack([data, extra]), level=level, value_domain=DOMAIN,
                                  n_boot=0)  # fmt: skip
    np.testing.assert_allclose(after.loc[0, "alpha"], before.loc[0, "alpha"], rtol=1e-12,
                               equal_nan=True)  # fmt: skip
    assert after.loc[0, "n_units"] == before.loc[0, "n_units"]


@settings(max_examples=60, deadline=None)
@given(
    pair=arrays(np.float64, (2, 12), elements=hs.sampled_from([1.0, 2.0, 3.0, np.nan])),
    weights=hs.sampled_from(["identity", "linear", "quadratic"]),
)
@example(  # true variance 0: rounding once gave se 4.0e-8 one way round, 3.3e-8 the other
    pair=np.array([[3, 3, 2, np.nan, 1, 2, 1, 2, 2, 2, 2, 2],
                   [2, 2, 1, 2, 2, 3, 2, 2, 2, 2, 2, 2]], dtype=float),
    weights="quadratic")
def test_cohen_kappa_symmetric(pair: np.ndarray, weights: str) -> None:
    cats = [1.0, 2.0, 3.0]
    ab = st.cohen_kappa(pair, weights=weights, categories=cats).loc[0]
    ba = st.cohen_kappa(pair[::-1], weights=weights, categories=cats).loc[0]
    for col in ("kappa", "se", "ci_low", "ci_high"):
        np.testing.assert_allclose(ab[col], ba[col], rtol=1e-9, atol=1e-12, equal_nan=True)
    assert ab["reason"] == ba["reason"]
