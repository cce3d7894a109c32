"""Conger, Light, Brennan-Prediger, Randolph, Scott, bipolar AC2, mean rho, tolerance
agreement and kappa's z/p against published values (source cited at each test).

The R irr data sets (diagnoses, anxiety, video) are in fixtures/, exported unchanged
from the package's data/ folder (irr 0.84.1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st

FIXTURES = Path(__file__).parent / "fixtures"
nan = np.nan
# irrCAC's cac.raw4raters (Gwet 2014, Handbook 4th ed., 4 raters x 12 units).
RAW4 = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                 [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
                 [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
                 [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])  # fmt: skip
# irrCAC's cont3x3abstractors (2 raters, contingency table).
ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])


def _irr(name: str) -> np.ndarray:
    """An irr data set as a raters x units matrix."""
    frame = pd.read_csv(FIXTURES / f"irr_{name}.csv")
    numeric = all(pd.api.types.is_numeric_dtype(frame[c]) for c in frame)
    return frame.T.to_numpy(dtype=float if numeric else object, copy=True)


def _raw_from_table(table: np.ndarray) -> np.ndarray:
    rows, cols = np.nonzero(table)
    reps = table[rows, cols]
    return np.vstack([np.repeat(rows, reps), np.repeat(cols, reps)]).astype(float)


def test_conger_kappa_irrcac_raw4raters() -> None:
    # irrCAC (R) README: conger.kappa.raw(cac.raw4raters): pa 0.8181818, pe 0.2334252,
    # coeff 0.76282, se 0.14917, conf.int (0.435, 1), p.value 0.0003367066.
    res = st.conger_kappa(RAW4).loc[0]
    assert res["p_o"] == pytest.approx(0.8181818, abs=1e-7)
    assert res["p_e"] == pytest.approx(0.2334252, abs=1e-7)
    assert round(res["kappa"], 5) == 0.76282 and round(res["se"], 5) == 0.14917
    assert round(res["ci_low"], 3) == 0.435 and res["ci_high"] == 1.0
    assert res["p"] == pytest.approx(0.0003367066, rel=1e-6)


def test_brennan_prediger_irrcac_raw4raters_and_table() -> None:
    # irrCAC (R) README: bp.coeff.raw(cac.raw4raters): pe 0.2, coeff 0.77273,
    # se 0.14472, conf.int (0.454, 1), p.value 0.0002375609;
    # bp2.table(cont3x3abstractors): 0.835.
    res = st.brennan_prediger(RAW4).loc[0]
    assert res["p_e"] == 0.2
    assert round(res["bp"], 5) == 0.77273 and round(res["se"], 5) == 0.14472
    assert round(res["ci_low"], 3) == 0.454
    assert res["p"] == pytest.approx(0.0002375609, rel=1e-6)
    assert st.brennan_prediger(_raw_from_table(ABSTRACTORS)).loc[0, "bp"] == pytest.approx(0.835)


def test_randolph_is_free_marginal_kappa() -> None:
    # Randolph (2005): kappa_free = (P_o - 1/q) / (1 - 1/q); with the full domain of
    # 5 categories on cac.raw4raters this is BP's 0.77273 (irrCAC README).
    res = st.randolph_kappa(RAW4, categories=[1, 2, 3, 4, 5]).loc[0]
    assert round(res["kappa"], 5) == 0.77273
    assert res["kappa"] == pytest.approx((res["p_o"] - 1 / 5) / (1 - 1 / 5), abs=1e-15)
    # An unused sixth category lowers chance agreement to 1/6.
    wider = st.randolph_kappa(RAW4, categories=[1, 2, 3, 4, 5, 6]).loc[0]
    assert wider["kappa"] == pytest.approx((res["p_o"] - 1 / 6) / (1 - 1 / 6), abs=1e-15)


def test_scott_pi_irrcac_cont3x3abstractors() -> None:
    # irrCAC (R) README: scott2.table(cont3x3abstractors): 0.7962397, se 0.05905473,
    # CI (0.679, 0.913).
    res = st.scott_pi(_raw_from_table(ABSTRACTORS)).loc[0]
    assert res["pi"] == pytest.approx(0.7962397, abs=1e-7)
    assert res["se"] == pytest.approx(0.05905473, abs=1e-8)
    assert (round(res["ci_low"], 3), round(res["ci_high"], 3)) == (0.679, 0.913)


def test_ac2_bipolar_irrcac_documentation() -> None:
    # irrCAC (Python) raw module documentation: CAC(raw_4raters, weights="bipolar")
    # .gwet(): AC2 0.90037, se 0.10582, CI (0.66747, 1), pa 0.96836, pe 0.68244,
    # z 8.50888.
    res = st.gwet_ac(RAW4, weights="bipolar").loc[0]
    assert res["coefficient"] == "AC2"
    for col, want in [("ac", 0.90037), ("se", 0.10582), ("ci_low", 0.66747),
                      ("p_o", 0.96836), ("p_e", 0.68244), ("z", 8.50888)]:  # fmt: skip
        assert round(res[col], 5) == want, col


def test_light_kappa_irr_diagnoses() -> None:
    # R irr documentation, kappam.light(diagnoses): Kappa = 0.459, z = 2.31,
    # p-value = 0.0211 (30 subjects, 6 raters).
    res = st.light_kappa(_irr("diagnoses")).loc[0]
    assert (res["n_units"], res["n_raters"], res["n_pairs"]) == (30, 6, 15)
    assert round(res["kappa"], 3) == 0.459
    assert round(res["z"], 2) == 2.31 and round(res["p"], 4) == 0.0211


def test_light_kappa_states_listwise_deletion() -> None:
    data = _irr("diagnoses")
    data[0, :4] = None
    res = st.light_kappa(data).loc[0]
    assert res["n_units"] == 26 and res["n_dropped"] == 4
    assert "4 of 30 rated units dropped" in res["reason"]


def test_tolerance_agreement_irr_video() -> None:
    # R irr documentation: agree(video) %-agree = 35; agree(video, 1) %-agree = 90.
    video = _irr("video")
    assert st.tolerance_agreement(video).loc[0, "agreement"] == pytest.approx(0.35)
    res = st.tolerance_agreement(video, tolerance=1).loc[0]
    assert res["agreement"] == pytest.approx(0.90) and res["n_agree"] == 18


def test_tolerance_agreement_text_and_deletion() -> None:
    diagnoses = _irr("diagnoses")
    # Units 1, 4, 10, 21 and 30 (1-based) are the only ones all six raters agree on.
    assert st.tolerance_agreement(diagnoses).loc[0, "n_agree"] == 5
    with pytest.raises(ValueError, match="numeric scores"):
        st.tolerance_agreement(diagnoses, tolerance=1)
    video = _irr("video")
    video[1, :5] = np.nan
    res = st.tolerance_agreement(video, tolerance=1).loc[0]
    assert res["n_dropped"] == 5 and "5 of 20 rated units dropped" in res["reason"]


def test_mean_spearman_irr_anxiety() -> None:
    # R irr meanrho(anxiety): Rho = 0.314, z = 1.29, p-value = 0.196, with the
    # warning that ties may make the coefficient incorrect (values as reproduced by
    # the pyirr port's test suite).
    res = st.mean_spearman(_irr("anxiety")).loc[0]
    assert round(res["rho"], 3) == 0.314 and round(res["z"], 2) == 1.29
    assert round(res["p"], 3) == 0.196 and "ties" in res["reason"]


def test_mean_spearman_plain_mean_and_perfect_pairs() -> None:
    from scipy import stats as sps

    anxiety = _irr("anxiety")
    plain = st.mean_spearman(anxiety, fisher=False).loc[0, "rho"]
    pairs = [sps.spearmanr(anxiety[a], anxiety[b]).statistic for a, b in [(0, 1), (0, 2), (1, 2)]]
    assert plain == pytest.approx(np.mean(pairs), abs=1e-15)
    data = np.array([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]], dtype=float)
    res = st.mean_spearman(data).loc[0]
    assert res["n_perfect"] == 1 and "1 perfect correlation left out" in res["reason"]
    assert res["rho"] == pytest.approx(0.8, abs=1e-12)  # the two remaining pairs: 0.8, 0.8
    # irr::meanrho's test, z = rho * sqrt(n - 3) with n the number of units (5), not
    # the number of perfect pairs (a perfect pair once gave NaN here)
    assert res["z"] == pytest.approx(0.8 * np.sqrt(2.0), abs=1e-12)
    assert res["p"] == pytest.approx(2 * sps.norm.sf(0.8 * np.sqrt(2.0)), abs=1e-15)
    ten = np.arange(1.0, 11.0)
    swapped = np.array([2, 1, 4, 3, 6, 5, 8, 7, 10, 9], dtype=float)
    five = st.mean_spearman(np.vstack([ten, ten, ten, swapped, swapped])).loc[0]
    r = sps.spearmanr(ten, swapped).statistic  # every one of the 6 imperfect pairs
    assert five["n_perfect"] == 4 and five["rho"] == pytest.approx(r, abs=1e-12)
    assert five["z"] == pytest.approx(r * np.sqrt(7.0), abs=1e-12)  # 10 units


def test_cohen_kappa_z_and_p_fmsb_example() -> None:
    # R fmsb::Kappa.test(matrix(c(10, 1, 1, 10), 2)): kappa 0.8181818, Z = 3.8376,
    # one-sided p = 6.212e-05, 95% CI 0.5779259 to 1.0584377.
    res = st.cohen_kappa_table([[10, 1], [1, 10]]).loc[0]
    assert res["kappa"] == pytest.approx(0.8181818, abs=1e-7)
    assert round(res["z"], 4) == 3.8376
    assert res["p"] / 2 == pytest.approx(6.212e-05, rel=1e-3)  # sheetflow is two-sided
    assert res["ci_low"] == pytest.approx(0.5779259, abs=1e-7)
    assert res["ci_high"] == pytest.approx(1.0584377, abs=1e-7)


def test_cohen_kappa_table_irrcac_cont3x3abstractors() -> None:
    # irrCAC (R) README: kappa2.table(cont3x3abstractors): 0.7964094, se 0.05891072.
    res = st.cohen_kappa_table(ABSTRACTORS).loc[0]
    assert res["kappa"] == pytest.approx(0.7964094, abs=1e-7)
    assert res["se"] == pytest.approx(0.05891072, abs=1e-8)
    assert res["z"] > 0 and 0 <= res["p"] < 1e-10


def _exact_best_of(n: int, yields: dict[str, int], control: int, others: int):
    """Exact one-sided p of the best-of test, by enumerating the group counts of ones
    under random relabelling (multivariate hypergeometric: C(n, x1)...C(n, xk) /
    C(total, ones)), for equal groups of ``n``. Returns (max-statistic p, fixed p)."""
    from itertools import product
    from math import comb

    names = list(yields)
    ones = sum(yields.values()) + control + others
    groups = len(names) + 2
    total = comb(n * groups, ones)
    winner = max(names, key=lambda k: yields[k])
    observed = (yields[winner] - control) / n
    p_max = p_fixed = 0.0
    for counts in product(range(n + 1), repeat=groups - 1):
        rest = ones - sum(counts)
        if not 0 <= rest <= n:
            continue
        *cands, base = counts
        weight = np.prod([comb(n, x) for x in (*counts, rest)]) / total
        gaps = [(x - base) / n for x in cands]
        p_max += weight * (max(gaps) >= observed - 1e-12)
        p_fixed += weight * (gaps[names.index(winner)] >= observed - 1e-12)
    return p_max, p_fixed


def test_best_of_permutation_matches_the_exact_max_statistic_p():
    """Protocol 001 picks the better of two candidates from the data; the null must
    re-pick it in every relabelling (max-T, Westfall & Young 1993). Reference: the exact
    p by enumeration of the multivariate hypergeometric counts. The fixed-winner p is
    smaller, as the trap says (a planted 'signal' that is not one)."""
    n, yields, control, others = 10, {"b3": 3, "b6": 5}, 1, 3  # exact: 0.082 vs 0.044
    exact_max, exact_fixed = _exact_best_of(n, yields, control, others)
    assert exact_fixed < 0.05 < exact_max  # held fixed it signals; honestly it does not
    m = 20_000
    res = st.permutation_test_best_of(
        {k: [1] * v + [0] * (n - v) for k, v in yields.items()},
        [1] * control + [0] * (n - control), others=[1] * others + [0] * (n - others),
        n_permutations=m, seed=7)
    row = res.iloc[0]
    assert row["winner"] == "b6" and row["diff"] == pytest.approx(0.4)  # 5/10 - 1/10
    for got, exact in ((row["p"], exact_max), (row["p_fixed_winner"], exact_fixed)):
        se = (exact * (1 - exact) / m) ** 0.5
        assert abs(got - exact) < 4 * se + 1 / m, (got, exact)
