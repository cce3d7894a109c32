"""Published reference values reproduced by sheetflow.stats.

Each case names its source (publication, table/page, or the documented example of a
package or of R) next to the data and the expected figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st

nan = np.nan

# Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability, section C
# ("nominal data, any number of observers, missing values"), p. 3-8: 4 observers x 12 units.
KRIPP_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


@pytest.mark.parametrize(
    ("level", "expected"),
    # Krippendorff (2011), pp. 4-8: nominal .743, ordinal .815, interval .849, ratio .797.
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_alpha(level: str, expected: float) -> None:
    res = st.krippendorff_alpha(KRIPP_2011, level=level, value_domain=[1, 2, 3, 4, 5], n_boot=0)
    assert round(res.loc[0, "alpha"], 3) == expected
    assert res.loc[0, "n_units"] == 11  # unit 12 has a single value: not pairable
    assert res.loc[0, "n_pairable_values"] == 40


def test_krippendorff_2011_ordinal_strings() -> None:
    # Same data with ordered labels; the krippendorff package docstring gives .815 ordinal
    # (with value_domain) and .743 nominal.
    labels = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    data = [[labels.get(v) if not np.isnan(v) else None for v in row] for row in KRIPP_2011]
    domain = list(labels.values())
    ordinal = st.krippendorff_alpha(data, level="ordinal", value_domain=domain, n_boot=0)
    nominal = st.krippendorff_alpha(data, level="nominal", n_boot=0)
    assert round(ordinal.loc[0, "alpha"], 3) == 0.815
    assert round(nominal.loc[0, "alpha"], 3) == 0.743


def test_krippendorff_wikipedia_value_counts_example() -> None:
    # krippendorff package docstring (Wikipedia example, 3 coders x 15 units):
    # nominal 0.691358, interval 0.810845.
    data = [
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ]
    assert round(st.krippendorff_alpha(data, level="nominal", n_boot=0).loc[0, "alpha"], 6) == (
        0.691358
    )
    assert round(st.krippendorff_alpha(data, level="interval", n_boot=0).loc[0, "alpha"], 6) == (
        0.810845
    )


# Shrout, P. E., & Fleiss, J. L. (1979), Table 2: 6 targets rated by 4 judges.
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
)


@pytest.mark.parametrize(
    ("form", "expected"),
    # Shrout & Fleiss (1979), Table 4: ICC(1,1)=.17, ICC(2,1)=.29, ICC(3,1)=.71,
    # ICC(1,4)=.44, ICC(2,4)=.62, ICC(3,4)=.91.
    [("ICC(1,1)", 0.17), ("ICC(2,1)", 0.29), ("ICC(3,1)", 0.71),
     ("ICC(1,k)", 0.44), ("ICC(2,k)", 0.62), ("ICC(3,k)", 0.91)],
)  # fmt: skip
def test_shrout_fleiss_icc(form: str, expected: float) -> None:
    res = st.icc(SHROUT_FLEISS.T).set_index("shrout_fleiss")
    assert round(res.loc[form, "icc"], 2) == expected


def test_shrout_fleiss_icc_f_and_ci_psych() -> None:
    # R psych::ICC documentation example on the Shrout & Fleiss data (also in the
    # pingouin test-suite): F = 1.79 (df 5, 18) and 11.03 (df 5, 15); 95% bounds
    # ICC1 [-0.13, 0.72], ICC2 [0.02, 0.76], ICC3 [0.34, 0.95],
    # ICC1k [-0.88, 0.91], ICC2k [0.07, 0.93], ICC3k [0.68, 0.99].
    res = st.icc(SHROUT_FLEISS.T)
    np.testing.assert_allclose(res["f"].round(2), [1.79, 11.03, 11.03, 1.79, 11.03, 11.03])
    assert res["df2"].tolist() == [18, 15, 15, 18, 15, 15]
    np.testing.assert_allclose(res["ci_low"].round(2), [-0.13, 0.02, 0.34, -0.88, 0.07, 0.68])
    np.testing.assert_allclose(res["ci_high"].round(2), [0.72, 0.76, 0.95, 0.91, 0.93, 0.99])


# Fleiss (1971), Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses
# (1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other);
# R irr::diagnoses as coded in statsmodels' test_inter_rater.py.
FLEISS_1971 = np.array(
    [[4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
     [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
     [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
     [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
     [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
     [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
     [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
     [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5]]
)  # fmt: skip


def test_fleiss_1971_kappa() -> None:
    # Fleiss (1971), p. 380: kappa = .430 (R irr::kappam.fleiss(diagnoses): 0.430).
    res = st.fleiss_kappa(FLEISS_1971.T)
    assert round(res.loc[0, "kappa"], 3) == 0.430
    assert res.loc[0, "n_units"] == 30


@pytest.mark.parametrize(
    ("category", "expected"),
    # Fleiss (1971), Table 2 / R irr::kappam.fleiss(diagnoses, detail=TRUE):
    # depression .245, personality disorder .245, schizophrenia .520, neurosis .471,
    # other .566.
    [(1, 0.245), (2, 0.245), (3, 0.520), (4, 0.471), (5, 0.566)],
)
def test_fleiss_1971_category_kappas(category: int, expected: float) -> None:
    res = st.fleiss_category_kappa(FLEISS_1971.T).set_index("category")
    assert round(res.loc[category, "kappa"], 3) == expected


# SAS/STAT PROC FREQ agreement example (3 x 3 table), as printed in statsmodels'
# test_inter_rater.py (TestUnweightedCohens / TestWeightedCohens).
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]


def test_sas_simple_kappa() -> None:
    # SAS: Kappa 0.4842, ASE 0.1380, 95% limits 0.2137 to 0.7547.
    res = st.cohen_kappa_table(SAS_TABLE)
    got = res.loc[0, ["kappa", "se", "ci_low", "ci_high"]].astype(float).round(4).tolist()
    assert got == [0.4842, 0.1380, 0.2137, 0.7547]


def test_sas_weighted_kappa_cicchetti_allison() -> None:
    # SAS (Cicchetti-Allison = linear weights): Weighted Kappa 0.4701, ASE 0.1457,
    # 95% limits 0.1845 to 0.7558.
    res = st.cohen_kappa_table(SAS_TABLE, weights="linear", categories=[0, 1, 2])
    got = res.loc[0, ["kappa", "se", "ci_low", "ci_high"]].astype(float).round(4).tolist()
    assert got == [0.4701, 0.1457, 0.1845, 0.7558]


# Gwet (2014) 4 raters x 12 units, irrCAC's raw_4raters data set (Python irrCAC
# documentation, irrCAC.raw module docstring).
GWET_4RATERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


def test_gwet_ac1_raw_4raters() -> None:
    # irrCAC docs: AC1 0.77544, se 0.14295, CI (0.46081, 1), pa 0.81818, pe 0.19032.
    row = st.gwet_ac(GWET_4RATERS).loc[0]
    got = [round(float(row[c]), 5) for c in ("ac", "se", "ci_low", "ci_high", "p_o", "p_e")]
    assert got == [0.77544, 0.14295, 0.46081, 1.0, 0.81818, 0.19032]
    assert row["coefficient"] == "AC1"


def test_gwet_fleiss_kappa_raw_4raters() -> None:
    # irrCAC docs: Fleiss' kappa 0.76117, se 0.15302, CI (0.42438, 1), pe 0.23872.
    row = st.fleiss_kappa(GWET_4RATERS).loc[0]
    got = [round(float(row[c]), 5) for c in ("kappa", "se", "ci_low", "ci_high", "p_e")]
    assert got == [0.76117, 0.15302, 0.42438, 1.0, 0.23872]


def _table_to_tidy(table: list[list[int]], labels: list[str]) -> pd.DataFrame:
    rows, unit = [], 0
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            for _ in range(count):
                rows += [(unit, "r1", labels[i]), (unit, "r2", labels[j])]
                unit += 1
    return pd.DataFrame(rows, columns=["unit", "rater", "value"])


# irrCAC docs (irrCAC.table module docstring): Gwet (2014) 3 x 3 abstractors table,
# 100 pregnant women classified by two abstractors (rows: abstractor 1).
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
ABSTRACTOR_LABELS = ["Ectopic", "AIU", "NIU"]


def test_gwet_ac1_abstractors() -> None:
    # irrCAC docs: AC1 0.84933, pa 0.89, pe 0.26992. Its se (0.04322) comes from the
    # two-rater contingency-table variance formula; sheetflow uses Gwet's raw-data
    # formula (0.0434352 here), so only the coefficient and its parts are compared.
    data = _table_to_tidy(ABSTRACTORS, ABSTRACTOR_LABELS)
    row = st.gwet_ac(data, categories=ABSTRACTOR_LABELS).loc[0]
    assert [round(float(row[c]), 5) for c in ("ac", "p_o", "p_e")] == [0.84933, 0.89, 0.26992]


def test_gwet_ac2_quadratic_abstractors() -> None:
    # irrCAC docs: quadratic AC2 0.94024, pa 0.9725, pe 0.53985 (labels -> ranks 1..3).
    data = _table_to_tidy(ABSTRACTORS, ABSTRACTOR_LABELS)
    row = st.gwet_ac(data, weights="quadratic", categories=ABSTRACTOR_LABELS).loc[0]
    assert [round(float(row[c]), 5) for c in ("ac", "p_o", "p_e")] == [0.94024, 0.9725, 0.53985]
    assert row["coefficient"] == "AC2"


def test_prop_trend_test_r_example() -> None:
    # R documentation, ?prop.trend.test: smokers <- c(83, 90, 129, 70);
    # patients <- c(86, 93, 136, 82); X-squared = 8.2249, df = 1, p-value = 0.004132.
    res = st.cochran_armitage([83, 90, 129, 70], [86, 93, 136, 82]).loc[0]
    assert round(res["statistic"], 4) == 8.2249
    assert round(res["p"], 6) == 0.004132
    assert res["df"] == 1


def test_fisher_exact_scipy_example() -> None:
    # scipy.stats.fisher_exact documentation: acetazolamide table [[7, 17], [15, 5]],
    # alternative='less': statistic 0.13725490196078433, p 0.0028841933752349743.
    res = st.fisher_exact_test([[7, 17], [15, 5]], alternative="less").loc[0]
    assert res["odds_ratio"] == pytest.approx(0.13725490196078433, rel=1e-12)
    assert res["p"] == pytest.approx(0.0028841933752349743, rel=1e-9)


def test_fisher_tea_tasting() -> None:
    # Fisher (1935) tea tasting, R ?fisher.test: TeaTasting, alternative = "greater",
    # p-value = 0.2429.
    res = st.fisher_exact_test([[3, 1], [1, 3]], alternative="greater").loc[0]
    assert round(res["p"], 4) == 0.2429


DARWIN = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]


def test_wilcoxon_darwin_two_sided() -> None:
    # scipy.stats.wilcoxon documentation (Darwin's corn data): (24.0, 0.041259765625).
    res = st.wilcoxon_signed_rank(DARWIN).loc[0]
    assert (res["statistic"], res["p"]) == (24.0, pytest.approx(0.041259765625, rel=1e-12))


def test_wilcoxon_darwin_greater() -> None:
    # scipy.stats.wilcoxon documentation: alternative='greater' -> (96.0, 0.0206298828125).
    res = st.wilcoxon_signed_rank(DARWIN, alternative="greater").loc[0]
    assert (res["statistic"], res["w_plus"]) == (96.0, 96.0)
    assert res["p"] == pytest.approx(0.0206298828125, rel=1e-12)


def test_wilcoxon_r_depression_example() -> None:
    # R ?wilcox.test, Hollander & Wolfe (1973, p. 29) depression scale data:
    # wilcox.test(x, y, paired = TRUE, alternative = "greater"): V = 40, p-value = 0.01953.
    x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
    y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]
    res = st.wilcoxon_signed_rank(x, y, alternative="greater").loc[0]
    assert res["w_plus"] == 40.0
    assert round(res["p"], 5) == 0.01953


def test_spearman_scipy_collagen_example() -> None:
    # scipy.stats.spearmanr documentation (total collagen vs free proline): 0.7.
    x = [7.1, 7.1, 7.2, 8.3, 9.4, 10.5, 11.4]
    y = [2.8, 2.9, 2.8, 2.6, 3.5, 4.6, 5.0]
    assert st.spearman(x, y).loc[0, "rho"] == pytest.approx(0.7, abs=1e-12)


# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories
# (counts per subject and category).
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_wikipedia_fleiss_example_pairwise_agreement_and_kappa() -> None:
    # Wikipedia, ibid.: P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210.
    matrix = np.array([np.repeat(np.arange(1.0, 6.0), row) for row in WIKIPEDIA_FLEISS]).T
    agreement = st.percent_agreement(matrix).loc[0]
    assert round(float(agreement["pairwise_agreement"]), 3) == 0.378
    assert agreement["all_agree_share"] == 0.1  # subject 1 only
    kappa = st.fleiss_kappa(matrix).loc[0]
    assert (round(float(kappa["p_e"]), 3), round(float(kappa["kappa"]), 3)) == (0.213, 0.210)
