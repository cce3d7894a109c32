"""Behaviour the rating protocols rely on: input forms, seeds, undefined cases, tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from sheetflow import stats as st

nan = np.nan
KRIPP = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


def _tidy(matrix: list[list[float]]) -> pd.DataFrame:
    rows = [(f"case{u:02d}", f"r{r}", v) for r, row in enumerate(matrix)
            for u, v in enumerate(row) if not np.isnan(v)]  # fmt: skip
    return pd.DataFrame(rows, columns=["case", "rater", "score"])


def test_alpha_tidy_input_equals_matrix_input() -> None:
    a = st.krippendorff_alpha(KRIPP, level="ordinal", seed=5)
    b = st.krippendorff_alpha(_tidy(KRIPP), level="ordinal", unit="case", rater="rater",
                              value="score", seed=5)  # fmt: skip
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["alpha", "ci_low", "ci_high", "level", "n_units", "n_raters",
                               "n_pairable_values", "n_boot", "n_boot_used", "seed",
                               "reason"]  # fmt: skip


def test_alpha_bootstrap_seed_is_recorded_and_reproduces() -> None:
    first = st.krippendorff_alpha(KRIPP, level="interval")
    again = st.krippendorff_alpha(KRIPP, level="interval", seed=int(first.loc[0, "seed"]))
    pd.testing.assert_frame_equal(first, again)
    assert first.loc[0, "n_boot"] == 1000
    assert first.loc[0, "ci_low"] < first.loc[0, "alpha"] <= first.loc[0, "ci_high"]
    other = st.krippendorff_alpha(KRIPP, level="interval", seed=int(first.loc[0, "seed"]) + 1)
    assert other.loc[0, "ci_low"] != first.loc[0, "ci_low"]


def test_alpha_without_bootstrap_has_no_interval() -> None:
    res = st.krippendorff_alpha(KRIPP, level="nominal", n_boot=0).loc[0]
    assert np.isnan(res["ci_low"]) and np.isnan(res["ci_high"]) and res["reason"] == ""


def test_value_domain_changes_interval_alpha_only_through_values() -> None:
    # An unused value in the domain leaves nominal alpha unchanged; a value outside it
    # is an error.
    base = st.krippendorff_alpha(KRIPP, level="nominal", n_boot=0).loc[0, "alpha"]
    wide = st.krippendorff_alpha(KRIPP, level="nominal", value_domain=range(1, 8), n_boot=0)
    assert wide.loc[0, "alpha"] == pytest.approx(base, abs=1e-12)
    with pytest.raises(ValueError, match="outside the value domain"):
        st.krippendorff_alpha(KRIPP, level="nominal", value_domain=[1, 2, 3], n_boot=0)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([[3, 3, 3], [3, 3, 3]], "fewer than two values"),  # one category only
        ([[1, 2, 3, 4]], "nothing pairable"),  # one rater
        ([[1, nan, nan], [nan, 2, nan], [nan, nan, 3]], "nothing pairable"),  # no unit twice
        ([[nan, nan], [nan, nan]], "no ratings"),  # empty
    ],
)
def test_alpha_undefined_inputs_return_nan_with_reason(data: list, reason: str) -> None:
    res = st.krippendorff_alpha(data, level="ordinal", n_boot=100, seed=1).loc[0]
    assert np.isnan(res["alpha"]) and reason in res["reason"]


def test_alpha_no_variation_with_full_domain() -> None:
    res = st.krippendorff_alpha([[3, 3], [3, 3]], level="ordinal", value_domain=[1, 2, 3, 4, 5])
    assert np.isnan(res.loc[0, "alpha"]) and "no variation" in res.loc[0, "reason"]


def test_empty_tidy_table_is_not_an_exception() -> None:
    empty = pd.DataFrame({"unit": [], "rater": [], "value": []})
    assert st.krippendorff_alpha(empty, level="nominal").loc[0, "reason"] == "no ratings"
    assert st.cohen_kappa(empty).empty
    assert st.fleiss_kappa(empty).loc[0, "reason"] == "no ratings"
    assert st.gwet_ac(empty).loc[0, "reason"] == "no ratings"
    assert st.icc(empty)["reason"].str.contains("fewer than two").all()
    assert st.percent_agreement(empty).loc[0, "reason"]


def test_invalid_arguments_raise_value_error() -> None:
    with pytest.raises(ValueError, match="Unknown level"):
        st.krippendorff_alpha(KRIPP, level="cardinal")
    with pytest.raises(ValueError, match="Unknown weights"):
        st.cohen_kappa(KRIPP, weights="cubic")
    with pytest.raises(ValueError, match="value_domain"):
        st.krippendorff_alpha([["a", "b"], ["b", "a"]], level="ordinal")
    with pytest.raises(ValueError, match="Duplicate"):
        st.krippendorff_alpha(pd.DataFrame({"unit": [1, 1], "rater": ["a", "a"],
                                            "value": [1, 2]}), level="nominal")  # fmt: skip


def test_kappa_fleiss_gwet_undefined_cases() -> None:
    one_cat = [[2, 2, 2], [2, 2, 2]]
    # the units compared only: a rating left out before (an N/A under na_handling =
    # "missing") may be of another category, so "throughout" would not be true
    assert st.cohen_kappa(one_cat).loc[0, "reason"] == ("chance agreement is 1 (one "
                                                        "category on every unit compared)")
    assert "fewer than two categories" in st.fleiss_kappa(one_cat).loc[0, "reason"]
    assert "fewer than two categories" in st.gwet_ac(one_cat).loc[0, "reason"]
    disjoint = [[1, nan], [nan, 2]]
    assert st.cohen_kappa(disjoint).loc[0, "reason"] == "no unit rated by both raters"
    assert "two or more" in st.fleiss_kappa(disjoint).loc[0, "reason"]


def test_icc_listwise_deletion_reports_dropped_units() -> None:
    data = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
                     [6, 2, 4, 7], [5, nan, 3, 3]], dtype=float).T  # fmt: skip
    res = st.icc(data)
    assert (res["n_dropped"] == 1).all() and (res["n_units"] == 6).all()
    assert round(res.loc[1, "icc"], 2) == 0.29  # Shrout-Fleiss data once unit 7 is dropped
    few = st.icc([[1, 2, nan], [2, nan, 3]])
    assert few["icc"].isna().all() and few.loc[0, "reason"].startswith("fewer than two units")
    assert set(res["mcgraw_wong"]) == {"ICC(1)", "ICC(A,1)", "ICC(C,1)", "ICC(k)", "ICC(A,k)",
                                       "ICC(C,k)"}  # fmt: skip


def test_intra_rater_kappa_equals_cohen_between_sittings() -> None:
    rng = np.random.default_rng(3)
    first = rng.integers(0, 2, 30)
    second = np.where(rng.random(30) < 0.8, first, 1 - first)
    df = pd.DataFrame({"item": np.tile(np.arange(30), 2), "sitting": [1] * 30 + [2] * 30,
                       "keep": np.concatenate([first, second])})  # fmt: skip
    intra = st.intra_rater_kappa(df, unit="item", sitting="sitting", value="keep").loc[0]
    table = pd.crosstab(first, second).to_numpy()
    direct = st.cohen_kappa_table(table).loc[0]
    assert intra["kappa"] == pytest.approx(direct["kappa"], abs=1e-12)
    assert intra["se"] == pytest.approx(direct["se"], abs=1e-12)
    assert (intra["sitting1"], intra["sitting2"], intra["n_units"]) == (1, 2, 30)


def test_percent_agreement_definitions() -> None:
    # unit 1: 3 ratings, one agreeing pair of 3 -> 1/3; unit 2: all agree -> 1;
    # unit 3: one rating -> ignored.
    data = [[1, 2, 1], [1, 2, nan], [2, 2, nan]]
    res = st.percent_agreement(data).loc[0]
    assert res["pairwise_agreement"] == pytest.approx((1 / 3 + 1) / 2)
    assert res["all_agree_share"] == pytest.approx(0.5)
    assert res["n_units"] == 2


def test_direction_agreement_pairwise_and_reference() -> None:
    df = pd.DataFrame({
        "case": [1, 1, 1, 2, 2, 2, 3, 3, 3],
        "rater": ["x", "y", "team"] * 3,
        "direction": ["A>B", "A>B", "A>B", "B>A", "Tied", "B>A", "Tied", nan, "A>B"],
    })
    kw = {"unit": "case", "rater": "rater", "value": "direction"}
    pairs = st.direction_agreement(df, **kw).set_index(["rater", "other"])
    assert pairs.loc[("team", "x"), "agreement"] == pytest.approx(2 / 3)
    assert pairs.loc[("team", "y"), "n_units"] == 2
    ref = st.direction_agreement(df, against="reference", reference="team", **kw)
    assert ref["rater"].tolist() == ["x", "y"]
    assert ref["agreement"].tolist() == [pytest.approx(2 / 3), 0.5]
    with pytest.raises(ValueError, match="not found"):
        st.direction_agreement(df, against="reference", reference="nobody", **kw)


def test_direction_majority_ties_are_counted_and_left_out() -> None:
    df = pd.DataFrame({"unit": [1, 1, 1], "rater": ["a", "b", "c"],
                       "value": ["A>B", "B>A", "Tied"]})  # fmt: skip
    res = st.direction_agreement(df, against="majority")
    assert (res["n_ties"] == 1).all() and res["agreement"].isna().all()


def test_spearman_interval_uses_fieller_hartley_pearson_se() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    res = st.spearman(x, y).loc[0]
    z, se = np.arctanh(res["rho"]), np.sqrt(1.06 / 37)
    assert res["ci_low"] == pytest.approx(np.tanh(z - 1.959963984540054 * se), abs=1e-12)
    assert res["ci_high"] == pytest.approx(np.tanh(z + 1.959963984540054 * se), abs=1e-12)
    assert res["p"] == pytest.approx(sps.spearmanr(x, y).pvalue, abs=1e-15)
    assert "constant" in st.spearman([1, 1, 1, 1], [1, 2, 3, 4]).loc[0, "reason"]
    assert np.isnan(st.spearman([1, 2], [2, 1]).loc[0, "rho"])


def test_fisher_one_sided_directions() -> None:
    greater = st.fisher_exact_test([[8, 2], [3, 7]], alternative="greater").loc[0, "p"]
    less = st.fisher_exact_test([[8, 2], [3, 7]], alternative="less").loc[0, "p"]
    assert greater < 0.05 < less
    with pytest.raises(ValueError):
        st.fisher_exact_test([[8, 2], [3, 7]], alternative="bigger")


def test_permutation_test_matches_fisher_and_records_seed() -> None:
    # Shuffling labels of 0/1 outcomes is the conditional (hypergeometric) null, so the
    # one-sided permutation p estimates Fisher's one-sided p.
    a = np.array([1] * 14 + [0] * 16)
    b = np.array([1] * 6 + [0] * 24)
    res = st.permutation_test_proportions(a, b, alternative="greater", seed=11).loc[0]
    fisher = sps.fisher_exact([[14, 16], [6, 24]], alternative="greater")[1]
    assert res["p"] == pytest.approx(fisher, abs=0.01)
    assert res["diff"] == pytest.approx(14 / 30 - 6 / 30)
    assert (res["n_permutations"], res["seed"]) == (10_000, 11)
    hits = res["p"] * (res["n_permutations"] + 1) - 1  # p = (b + 1) / (m + 1)
    assert hits == pytest.approx(round(hits), abs=1e-6)
    again = st.permutation_test_proportions(a, b, alternative="greater", seed=11).loc[0]
    assert again["p"] == res["p"]


def test_permutation_p_never_zero() -> None:
    res = st.permutation_test_proportions([1] * 20, [0] * 20, alternative="greater",
                                          n_permutations=500, seed=1).loc[0]  # fmt: skip
    assert res["p"] == pytest.approx(1 / 501)


def test_cochran_armitage_two_groups_is_pearson_chi_square() -> None:
    table = np.array([[12, 18], [25, 10]])
    res = st.cochran_armitage(table[:, 0], table.sum(axis=1)).loc[0]
    chi2 = sps.chi2_contingency(table, correction=False)[0]
    assert res["statistic"] == pytest.approx(chi2, rel=1e-12)
    assert res["z"] > 0  # second group has the higher proportion
    flat = st.cochran_armitage([0, 0, 0], [5, 5, 5]).loc[0]
    assert np.isnan(flat["statistic"]) and flat["reason"]


def test_wilcoxon_zero_handling() -> None:
    x = [10, 12, 9, 14, 11, 13, 15, 10]
    y = [8, 12, 7, 10, 11, 9, 12, 6]
    res = st.wilcoxon_signed_rank(x, y).loc[0]
    assert (res["n"], res["n_zero"], res["zero_method"]) == (8, 2, "wilcox")
    # zeros among 13 or fewer differences: every sign assignment counted (sheetflow's
    # auto rule, scipy's since 1.14; scipy before approximated). The six non-zero
    # differences (2, 2, 4, 4, 3, 4) are all positive: only "all +" and "all -" are as
    # extreme, 2 of the 2**6 assignments.
    assert res["p"] == 2 / 2**6
    same = st.wilcoxon_signed_rank([1, 2, 3], [1, 2, 3]).loc[0]
    assert np.isnan(same["p"]) and same["reason"] == "all differences are zero"


def test_permutation_with_others_shuffles_over_the_whole_pool() -> None:
    # Exact null by enumeration: two successes among a pool of 6 (groups of 2 and 2, two
    # items in neither group). P(diff >= 1) = P(group a gets both successes) = 1/C(6,2)
    # = 1/15; with the two groups alone (pool of 4) it is 1/C(4,2) = 1/6.
    from sheetflow import stats as st

    whole = st.permutation_test_proportions([1, 1], [0, 0], others=[0, 0],
                                            alternative="greater", seed=3)
    pair = st.permutation_test_proportions([1, 1], [0, 0], alternative="greater", seed=3)
    assert abs(whole.loc[0, "p"] - 1 / 15) < 0.01
    assert abs(pair.loc[0, "p"] - 1 / 6) < 0.015
    assert whole.loc[0, "n_others"] == 2 and pair.loc[0, "n_others"] == 0
