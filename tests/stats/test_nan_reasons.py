"""Every NaN a statistic returns carries its reason in the row (the promise of the
``sheetflow.stats`` docstring), checked on the cases that lacked one and on random
small inputs.

Reference behaviour: R ``irr::kappa2`` also gives z NaN for a rater with one category
(the null variance of Fleiss, Cohen & Everitt 1969 is 0); the Spearman interval's
standard error sqrt(1.06 / (n - 3)) is Fieller, Hartley & Pearson (1957); the odds
ratio ad/bc of a table with an empty row is 0/0 (scipy.stats.fisher_exact gives NaN).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st


def _nan_without_reason(res: pd.DataFrame) -> list[tuple[int, str]]:
    return [(i, col) for i, rec in enumerate(res.to_dict("records")) if not rec["reason"]
            for col, v in rec.items() if isinstance(v, float) and np.isnan(v)]


def test_kappa_with_a_constant_rater_says_why_z_is_undefined() -> None:
    res = st.cohen_kappa([[1, 1, 1, 2], [1, 1, 1, 1]])
    assert res.loc[0, "kappa"] == 0 and np.isnan(res.loc[0, "z"])
    assert "0 by construction" in res.loc[0, "reason"]


def test_spearman_at_three_pairs_says_why_there_is_no_interval() -> None:
    res = st.spearman([1, 2, 3], [1, 3, 2])
    assert res.loc[0, "rho"] == pytest.approx(0.5)  # scipy.stats.spearmanr
    assert np.isnan(res.loc[0, "ci_low"])
    assert "four or more pairs" in res.loc[0, "reason"]


def test_fisher_odds_ratio_zero_over_zero_has_a_reason() -> None:
    res = st.fisher_exact_test([[2, 2], [0, 0]], alternative="greater")
    assert np.isnan(res.loc[0, "odds_ratio"]) and "0/0" in res.loc[0, "reason"]


def test_light_kappa_without_a_test_says_why() -> None:
    res = st.light_kappa([[1, 1, 1], [2, 3, 2]])
    assert np.isnan(res.loc[0, "z"]) and "no z or p" in res.loc[0, "reason"]


def test_icc_zero_over_zero_has_a_reason() -> None:
    """Units all alike, raters apart: MSR = MSE = 0, so ICC(C,1) = 0/0 (Shrout &
    Fleiss 1979, ICC(3,1) = (BMS - EMS) / (BMS + (k-1) EMS))."""
    res = st.icc(np.array([[2.0, 2.0], [2.0, 2.0], [1.0, 1.0]])).set_index("type")
    for form in ("ICC3", "ICC3k"):
        assert np.isnan(res.loc[form, "icc"]) and "is 0/0" in res.loc[form, "reason"]


def _matrix(rng: np.random.Generator) -> np.ndarray:
    raters, units, cats = (int(v) for v in rng.integers((2, 2, 1), (4, 6, 4)))
    m = rng.integers(1, cats + 1, size=(raters, units)).astype(float)
    if rng.random() < 0.3:
        m[rng.integers(0, raters), rng.integers(0, units)] = np.nan
    if rng.random() < 0.2:
        m[0, :] = m[0, 0]  # one rater constant
    return m


MATRIX_STATS = ("cohen_kappa", "fleiss_kappa", "gwet_ac", "brennan_prediger", "conger_kappa",
                "scott_pi", "light_kappa", "randolph_kappa", "percent_agreement",
                "mean_spearman", "tolerance_agreement", "fleiss_category_kappa", "icc")


def test_no_nan_without_a_reason_on_random_small_inputs() -> None:
    rng = np.random.default_rng(3)  # a seed whose inputs hit every case above
    missing: dict[str, object] = {}
    for _ in range(300):
        m = _matrix(rng)
        for name in MATRIX_STATS:
            try:
                res = getattr(st, name)(m[:2] if name == "cohen_kappa" else m)
            except ValueError:
                continue
            if _nan_without_reason(res):
                missing.setdefault(name, m.tolist())
        x, y = rng.integers(0, 4, size=(2, m.shape[1])).astype(float)
        for name, res in (("spearman", st.spearman(x, y)),
                          ("paired_mean_difference", st.paired_mean_difference(x, y))):
            if _nan_without_reason(res):
                missing.setdefault(name, (x.tolist(), y.tolist()))
        a, b, c, d = (int(v) for v in rng.integers(0, 4, 4))
        for name, res in (
                ("fisher_exact_test", st.fisher_exact_test([[a, b], [c, d]],
                                                           alternative="greater")),
                ("wilson_interval", st.wilson_interval(a, a + b)),
                ("newcombe_difference", st.newcombe_difference(a, a + b, c, c + d))):
            if _nan_without_reason(res):
                missing.setdefault(name, (a, b, c, d))
    assert not missing, missing
