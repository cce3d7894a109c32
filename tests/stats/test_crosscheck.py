"""Cross-checks against independent implementations on random rating matrices.

sheetflow.stats does not call any of these packages: krippendorff (every alpha level),
statsmodels (Fleiss' kappa, Cohen's kappa, Light's kappa, Scott's pi) and pingouin
(ICC). Each test draws N_MATRICES seeded matrices with missing values. irrCAC's results
are compared from a recorded fixture (test_irrcac_fixture.py): it pins old numpy,
scipy and pandas.
"""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

from sheetflow import stats as st

N_MATRICES = 200
DOMAIN = [1.0, 2.0, 3.0, 4.0, 5.0]


def _matrices(seed: int, missing: float = 0.2, min_raters: int = 2):
    """Raters x units matrices: a latent unit score plus rater noise, with NaN holes.

    Values stay in 1..4 or 1..5, so the value domain 1..5 sometimes has an unused value.
    """
    rng = np.random.default_rng(seed)
    for _ in range(N_MATRICES):
        raters, units = rng.integers(min_raters, 7), rng.integers(4, 40)
        top = rng.choice([4, 5])
        latent = rng.integers(1, top + 1, size=units)
        noise = rng.choice([-1, 0, 0, 0, 1], size=(raters, units)) * (rng.random() < 0.9)
        data = np.clip(latent + noise, 1, top).astype(float)
        data[rng.random(data.shape) < missing * rng.random()] = np.nan
        yield data


def _reference_alpha(data: np.ndarray, level: str) -> float:
    try:
        return float(krippendorff.alpha(data, level_of_measurement=level, value_domain=DOMAIN))
    except (ValueError, ZeroDivisionError):
        return np.nan


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_matches_krippendorff_package(level: str) -> None:
    compared = 0
    for data in _matrices(1):
        ours = st.krippendorff_alpha(data, level=level, value_domain=DOMAIN, n_boot=0).loc[0]
        with np.errstate(all="ignore"):
            ref = _reference_alpha(data, level)
        if np.isnan(ref):
            assert np.isnan(ours["alpha"]) and ours["reason"]
            continue
        assert ours["alpha"] == pytest.approx(ref, abs=1e-9)
        compared += 1
    assert compared >= 0.9 * N_MATRICES


def test_alpha_bootstrap_replicates_match_package_on_resamples() -> None:
    # Each bootstrap replicate must be the alpha of the resampled units: redo the same
    # draws (default_rng(seed).integers over pairable units) and ask the package.
    for i, data in enumerate(itertools.islice(_matrices(3), 20)):
        res = st.krippendorff_alpha(data, level="ordinal", value_domain=DOMAIN, n_boot=40,
                                    seed=i)  # fmt: skip
        if np.isnan(res.loc[0, "alpha"]):
            continue
        pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
        n_pairable = pairable.shape[1]
        draws = np.random.default_rng(i).integers(0, n_pairable, size=(40, n_pairable))
        with np.errstate(all="ignore"):
            reps = np.array([_reference_alpha(pairable[:, d], "ordinal") for d in draws])
        reps = reps[~np.isnan(reps)]
        low, high = np.quantile(reps, [0.025, 0.975])
        assert res.loc[0, "ci_low"] == pytest.approx(low, abs=1e-9)
        assert res.loc[0, "ci_high"] == pytest.approx(high, abs=1e-9)


def test_fleiss_matches_statsmodels_on_complete_units() -> None:
    # statsmodels' fleiss_kappa needs the same number of raters per unit and has no SE,
    # so the check uses the units every rater rated (the balanced subset).
    compared = 0
    for data in _matrices(6, missing=0.15):
        complete = data[:, ~np.isnan(data).any(axis=0)]
        if complete.shape[1] < 2:
            continue
        ours = st.fleiss_kappa(complete, categories=DOMAIN).loc[0, "kappa"]
        table, _ = aggregate_raters(complete.T.astype(int), n_cat=6)
        with np.errstate(all="ignore"):
            ref = fleiss_kappa(table[:, 1:], method="fleiss")
        if np.isnan(ref):
            assert np.isnan(ours)
            continue
        assert ours == pytest.approx(ref, abs=1e-9)
        compared += 1
    assert compared >= 100


@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic"])
def test_cohen_matches_statsmodels(weights: str) -> None:
    # Pairwise deletion; statsmodels' linear/quadratic weights computed on the scores
    # passed as `weights` = the category values (sheetflow's weight_on="values").
    compared = null_checked = 0
    for data in _matrices(7):
        ours = st.cohen_kappa(data, weights=weights, categories=DOMAIN)
        for row in ours.itertuples():
            pair = data[[row.rater1, row.rater2]]
            pair = pair[:, ~np.isnan(pair).any(axis=0)].astype(int) - 1
            table = np.zeros((5, 5))
            np.add.at(table, (pair[0], pair[1]), 1)
            kw = {} if weights == "identity" else {"weights": DOMAIN, "wt": weights}
            with np.errstate(all="ignore"):
                ref = cohens_kappa(table, **kw)
            if np.isnan(row.kappa):
                assert row.reason
                continue
            assert row.kappa == pytest.approx(ref.kappa, abs=1e-9)
            if np.isnan(row.se):
                # one rater gave one category throughout: kappa is 0 by construction;
                # statsmodels gives it a standard error of 0, sheetflow none (its
                # stated convention), with the reason
                assert row.kappa == 0 and ref.var_kappa == pytest.approx(0, abs=1e-14)
                assert "by construction" in row.reason
                continue
            # kappa = 1 can give a variance of +-1e-17 from rounding, so compare variances
            assert row.se**2 == pytest.approx(max(ref.var_kappa, 0.0), rel=1e-9, abs=1e-14)
            # the null variance behind z: with fewer units than the 25 cells of the
            # 1..5 domain the pair goes through the unit sums, otherwise the tables
            if ref.var_kappa0 > 1e-12:
                assert row.z == pytest.approx(ref.z_value, rel=1e-9)
                null_checked += 1
            compared += 1
    assert compared >= N_MATRICES and null_checked >= N_MATRICES


def test_cohen_rank_weights_differ_from_value_weights_when_unequally_spaced() -> None:
    # Convention check: with unequally spaced scale values (0, 2, 4, 5) the "values"
    # weights follow statsmodels fed the values, "ranks" follows statsmodels fed 0..3.
    rng = np.random.default_rng(8)
    scale = np.array([0.0, 2.0, 4.0, 5.0])
    for _ in range(N_MATRICES):
        codes = rng.integers(0, 4, size=(2, 30))
        codes[1] = np.where(rng.random(30) < 0.6, codes[0], codes[1])
        table = np.zeros((4, 4))
        np.add.at(table, (codes[0], codes[1]), 1)
        by_value = st.cohen_kappa(scale[codes], weights="linear", categories=scale).loc[0]
        by_rank = st.cohen_kappa(scale[codes], weights="linear", categories=scale,
                                 weight_on="ranks").loc[0]  # fmt: skip
        with np.errstate(all="ignore"):
            ref_value = cohens_kappa(table, weights=scale, wt="linear").kappa
            ref_rank = cohens_kappa(table, weights=np.arange(4), wt="linear").kappa
        assert by_value["kappa"] == pytest.approx(ref_value, abs=1e-9)
        assert by_rank["kappa"] == pytest.approx(ref_rank, abs=1e-9)


def _close(a: float, b: float, tol: float) -> bool:
    """Equal within ``tol``, or both NaN (e.g. the interval of an exact fit, F = inf)."""
    return bool((np.isnan(a) and np.isnan(b)) or abs(a - b) <= tol)


def test_icc_matches_pingouin() -> None:
    # pingouin's nan_policy="omit" is listwise deletion of units, as sheetflow's.
    # pingouin rounds CI95 to 2 decimals.
    compared = 0
    for data in _matrices(9, missing=0.1):
        ours = st.icc(data).set_index("mcgraw_wong")
        tidy = pd.DataFrame(
            [(u, r, data[r, u]) for r in range(data.shape[0]) for u in range(data.shape[1])],
            columns=["unit", "rater", "value"],
        )
        if ours["icc"].isna().all():
            continue
        with np.errstate(all="ignore"):
            ref = pg.intraclass_corr(tidy, targets="unit", raters="rater", ratings="value",
                                     nan_policy="omit")  # fmt: skip
        ref = ref.rename(columns={"CI95%": "CI95"})  # pingouin < 0.5.5 names it CI95%
        # pingouin >= 0.5.5 names the forms McGraw-Wong style, earlier ones ICC1..ICC3k.
        names = {"ICC(1,1)": "ICC(1)", "ICC(1,k)": "ICC(k)",
                 **dict(zip(ours["type"], ours.index, strict=True))}  # fmt: skip
        for ref_row in ref.itertuples():
            mine = ours.loc[names.get(ref_row.Type, ref_row.Type)]
            if np.isnan(mine["icc"]):  # outside the possible range: pingouin reports it
                assert "outside its possible range" in mine["reason"]
                ref_value, floor = float(ref_row.ICC), -1 / (data.shape[0] - 1)
                outside = ref_value > 1 - 1e-12 or ref_value < floor + 1e-12
                assert outside or not np.isfinite(ref_value)
                continue
            assert mine["icc"] == pytest.approx(ref_row.ICC, abs=1e-9)
            if abs(ref_row.F) > 1e12:
                # Exact fit (residual SS is rounding noise): pingouin reports F = +-1e16,
                # sheetflow sets the residual to 0, so F = inf, p = 0, CI NaN.
                assert mine["f"] == np.inf and mine["p"] == 0.0
                continue
            assert mine["f"] == pytest.approx(ref_row.F, rel=1e-9)
            assert mine["p"] == pytest.approx(ref_row.pval, abs=1e-9)
            assert (mine["df1"], mine["df2"]) == (ref_row.df1, ref_row.df2)
            assert _close(mine["ci_low"], ref_row.CI95[0], 0.005 + 1e-9)
            assert _close(mine["ci_high"], ref_row.CI95[1], 0.005 + 1e-9)
        compared += 1
    assert compared >= 0.9 * N_MATRICES


def test_light_kappa_is_mean_statsmodels_cohen_on_complete_units() -> None:
    compared = 0
    for data in _matrices(12, missing=0.1):
        ours = st.light_kappa(data).loc[0]
        complete = data[:, ~np.isnan(data).any(axis=0)].astype(int) - 1
        if np.isnan(ours["kappa"]):
            assert ours["reason"]
            continue
        kappas = []
        for a, b in itertools.combinations(range(complete.shape[0]), 2):
            table = np.zeros((5, 5))
            np.add.at(table, (complete[a], complete[b]), 1)
            with np.errstate(all="ignore"):
                kappas.append(cohens_kappa(table).kappa)
        assert ours["kappa"] == pytest.approx(np.mean(kappas), abs=1e-9)
        assert ours["n_dropped"] == int((~np.isnan(data).all(axis=0)).sum()) - complete.shape[1]
        compared += 1
    assert compared >= 0.8 * N_MATRICES


def test_scott_pi_is_statsmodels_fleiss_for_two_raters() -> None:
    # Fleiss' (1971) kappa generalises Scott's pi: for two raters they coincide.
    compared = 0
    for data in _matrices(13, missing=0.15):
        pair = data[:2]
        ours = st.scott_pi(pair, categories=DOMAIN).loc[0]
        complete = pair[:, ~np.isnan(pair).any(axis=0)]
        if np.isnan(ours["pi"]):
            assert ours["reason"]
            continue
        table, _ = aggregate_raters(complete.T.astype(int), n_cat=6)
        assert ours["pi"] == pytest.approx(fleiss_kappa(table[:, 1:]), abs=1e-9)
        compared += 1
    assert compared >= 0.9 * N_MATRICES
