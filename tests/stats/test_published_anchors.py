"""Quadratic-weighted kappa, Spearman's Fisher-z interval and the Wilcoxon normal
approximation against published values (source cited at each test), plus an
independent closed form for the quadratic-weighted kappa on random data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st
from sheetflow.stats.agreement import _fisher_interval

FIXTURES = Path(__file__).parent / "fixtures"

# R ?wilcox.test, Hollander & Wolfe (1973), p. 29: depression scale factor before (x)
# and after (y) therapy, nine patients.
DEPRESSION_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
DEPRESSION_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def _anxiety_pair() -> np.ndarray:
    """irr's anxiety data (20 subjects), raters 1 and 2, as a raters x units matrix."""
    frame = pd.read_csv(FIXTURES / "irr_anxiety.csv")
    return frame[["rater1", "rater2"]].T.to_numpy(dtype=float)


@pytest.mark.parametrize("weight_on", ["values", "ranks"])
def test_quadratic_kappa_irr_kappa2_anxiety(weight_on: str) -> None:
    # R irr (Gamer et al., irr 0.84.1), ?kappa2 example:
    # kappa2(anxiety[,1:2], "squared") prints Subjects = 20, Raters = 2, Kappa = 0.297,
    # z = 1.34, p-value = 0.18 (also the pyirr port's test_kappa2: 0.297, 1.34, 0.180).
    # irr weighs the positions of the levels used; here both raters' values span 1..6,
    # so the values and their ranks give the same weights. irr's z is kappa over the
    # standard error under independence, as sheetflow's.
    row = st.cohen_kappa(_anxiety_pair(), weights="quadratic", weight_on=weight_on).loc[0]
    assert row["n_units"] == 20
    assert round(row["kappa"], 3) == 0.297
    assert round(row["z"], 2) == 1.34
    assert round(row["p"], 3) == 0.180


def test_quadratic_kappa_is_the_moment_formula_on_random_pairs() -> None:
    # Quadratic-weighted kappa on the scale values equals
    # 2 s_xy / (s_x^2 + s_y^2 + (mean_x - mean_y)^2), with moments over the n units
    # (divisor n): Fleiss & Cohen (1973), Educ. Psychol. Meas. 33, 613-619; Schuster
    # (2004), Educ. Psychol. Meas. 64, 243-253. No weight matrix, no contingency table.
    rng = np.random.default_rng(20240)
    compared = 0
    for _ in range(100):
        n = int(rng.integers(3, 60))
        top = int(rng.integers(2, 8))
        x = rng.integers(1, top + 1, n).astype(float)
        y = np.clip(x + rng.integers(-2, 3, n) * (rng.random(n) < 0.6), 1, top)
        if np.ptp(np.concatenate([x, y])) == 0:
            continue
        ours = st.cohen_kappa(np.vstack([x, y]), weights="quadratic").loc[0, "kappa"]
        s_xy = np.mean((x - x.mean()) * (y - y.mean()))
        ref = 2 * s_xy / (x.var() + y.var() + (x.mean() - y.mean()) ** 2)
        assert ours == pytest.approx(ref, abs=1e-12), (x.tolist(), y.tolist())
        compared += 1
    assert compared >= 95


def test_spearman_interval_is_fieller_hartley_pearson() -> None:
    # R CECPfuns::getCISpearman(.5, 50, Gaussian = TRUE, FHP = TRUE) (Evans, CECPfuns
    # test-getCISpearman.R): LCL 0.249579417145174, UCL 0.68773647839708; the Fisher-z
    # interval with the Fieller, Hartley & Pearson (1957) standard error
    # sqrt(1.06 / (n - 3)) (as Bishara & Hittner 2017 give it) and a normal quantile.
    got = _fisher_interval(0.5, 50, 0.95)
    assert got["ci_low"] == pytest.approx(0.249579417145174, abs=1e-12)
    assert got["ci_high"] == pytest.approx(0.68773647839708, abs=1e-12)
    # Bonett & Wright's (2000) sqrt((1 + r^2 / 2) / (n - 3)) gives another interval:
    # getCISpearman(.5, 50, Gaussian = TRUE) = (0.241224508653415, 0.69239327300752).
    assert got["ci_low"] - 0.241224508653415 > 0.008


def test_spearman_rho_statpsych_ci_spear_example() -> None:
    # R statpsych::ci.spear(.05, y, x) documentation example (Bonett): Estimate
    # 0.8699639 on these 15 pairs. statpsych's interval uses Bonett & Wright's (2000)
    # standard error (LL 0.5840951, UL 0.9638297); sheetflow's is Fieller's
    # sqrt(1.06 / (n - 3)), narrower here, on the same Fisher z centre.
    y = [21, 4, 9, 12, 35, 18, 10, 22, 24, 1, 6, 8, 13, 16, 19]
    x = [67, 28, 30, 28, 52, 40, 25, 37, 44, 10, 14, 20, 28, 40, 51]
    row = st.spearman(x, y).loc[0]
    assert row["rho"] == pytest.approx(0.8699639, abs=1e-7)
    assert row["ci_low"] > 0.5840951 and row["ci_high"] < 0.9638297
    centre = np.arctanh(row["rho"])
    assert (np.arctanh(row["ci_low"]) + np.arctanh(row["ci_high"])) / 2 == \
        pytest.approx(centre, abs=1e-12)


def test_wilcoxon_normal_approximation_r_without_correction() -> None:
    # R 2.11.1, as recorded in Apache Commons Math's WilcoxonSignedRankTestTest:
    # wilcox.test(x, y, alternative = "two.sided", mu = 0, paired = TRUE,
    # exact = FALSE, correct = FALSE): V = 40, p-value = 0.03815 (depression data).
    row = st.wilcoxon_signed_rank(DEPRESSION_X, DEPRESSION_Y, method="approx").loc[0]
    assert row["w_plus"] == 40.0
    assert round(row["p"], 5) == 0.03815


def test_wilcoxon_normal_approximation_scipy_documentation() -> None:
    # scipy.stats.wilcoxon documentation, Darwin's corn data:
    # wilcoxon(d, method='approx') -> (24.0, 0.04088813291185591).
    d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    row = st.wilcoxon_signed_rank(d, method="approx").loc[0]
    assert row["statistic"] == 24.0
    assert row["p"] == pytest.approx(0.04088813291185591, rel=1e-12)


# R's sleep data (Student 1908; Cushny & Peebles): extra hours of sleep of ten patients
# under each of two drugs. The differences have a zero and a tie.
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_wilcoxon_ties_and_zero_r_with_continuity_correction() -> None:
    # R: wilcox.test(extra ~ group, data = sleep, paired = TRUE) (R's default
    # correct = TRUE; it warns it cannot compute an exact p with ties and zeroes):
    # "Wilcoxon signed rank test with continuity correction", V = 0,
    # p-value = 0.009091. The zero is dropped (n = 9) and the tie variance corrected.
    row = st.wilcoxon_signed_rank(SLEEP_1, SLEEP_2, method="approx", correction=True).loc[0]
    assert (row["w_plus"], row["n"], row["n_zero"]) == (0.0, 10, 1)
    assert round(row["p"], 6) == 0.009091
    # without the correction the same z is 22.5 / sqrt(71.125) instead of 22 / ...
    plain = st.wilcoxon_signed_rank(SLEEP_1, SLEEP_2, method="approx").loc[0, "p"]
    assert plain < row["p"]
