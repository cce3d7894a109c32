"""Silent traps that must be refused or flagged, never answered with a plausible number."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st


def _tidy(a: list, b: list) -> pd.DataFrame:
    n = len(a)
    return pd.DataFrame({"unit": list(range(n)) * 2, "rater": ["a"] * n + ["b"] * n,
                         "value": a + b})  # fmt: skip


# "1", "2", "10" as text: alphabetical order would be "1" < "10" < "2".
NUMERIC_TEXT = _tidy(["1", "2", "10", "2", "1", "10", "2", "1"],
                     ["1", "10", "10", "2", "2", "10", "1", "1"])  # fmt: skip
LOW_MID_HIGH = _tidy(["low", "mid", "high", "mid", "low", "high"],
                     ["low", "high", "high", "mid", "mid", "high"])  # fmt: skip


@pytest.mark.parametrize("data", [NUMERIC_TEXT, LOW_MID_HIGH], ids=["numeric-text", "words"])
@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_refuses_text_labels_without_order(data, weights) -> None:
    with pytest.raises(ValueError, match=r"categories=\[\.\.\.\] in scale order"):
        st.cohen_kappa(data, weights=weights)


@pytest.mark.parametrize("data", [NUMERIC_TEXT, LOW_MID_HIGH], ids=["numeric-text", "words"])
@pytest.mark.parametrize("weights", ["linear", "quadratic", "ordinal", "bipolar"])
def test_ac2_refuses_text_labels_without_order(data, weights) -> None:
    with pytest.raises(ValueError, match=r"categories=\[\.\.\.\] in scale order"):
        st.gwet_ac(data, weights=weights)


def test_intra_rater_weighted_kappa_refuses_text_labels_without_order() -> None:
    data = NUMERIC_TEXT.rename(columns={"rater": "sitting"})
    with pytest.raises(ValueError, match="scale order"):
        st.intra_rater_kappa(data, weights="linear")


def test_declared_order_gives_the_numeric_answer() -> None:
    numeric = NUMERIC_TEXT.assign(value=NUMERIC_TEXT["value"].astype(int))
    by_text = st.cohen_kappa(NUMERIC_TEXT, weights="linear", categories=["1", "2", "10"])
    by_rank = st.cohen_kappa(numeric, weights="linear", weight_on="ranks")
    assert by_text.loc[0, "kappa"] == pytest.approx(by_rank.loc[0, "kappa"], abs=1e-12)
    # Unweighted statistics do not depend on the order: text labels stay accepted.
    assert st.cohen_kappa(NUMERIC_TEXT).loc[0, "kappa"] == pytest.approx(
        st.cohen_kappa(numeric).loc[0, "kappa"], abs=1e-12)


LATIN_SQUARE = np.array([[1, 2, 3], [2, 3, 1], [3, 1, 2]], dtype=float)  # units x raters


def test_icc_outside_its_range_is_nan_with_reason() -> None:
    # Latin square: MSR = MSC = 0, MSE = 1.5, so ICC(A,k) = -1.5 / -0.5 = 3.0.
    res = st.icc(LATIN_SQUARE.T).set_index("mcgraw_wong")
    row = res.loc["ICC(A,k)"]
    assert np.isnan(row["icc"]) and np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert "computed as 3" in row["reason"] and "outside its possible range" in row["reason"]
    for form in res.index:
        value = res.loc[form, "icc"]
        assert np.isnan(value) or -0.5 - 1e-12 <= value <= 1.0  # k = 3: single >= -1/2
        assert not np.isnan(value) or res.loc[form, "reason"]


def test_icc_drops_an_all_missing_rater_with_reason() -> None:
    rng = np.random.default_rng(3)
    data = rng.normal(size=(3, 20)) + rng.normal(size=20)
    with_empty = np.vstack([data, np.full(20, np.nan)])
    res, ref = st.icc(with_empty), st.icc(data)
    assert res["icc"].to_numpy() == pytest.approx(ref["icc"].to_numpy(), abs=1e-12)
    assert (res["n_raters"] == 3).all()
    assert res["reason"].str.contains("dropped 1 rater with no rating: 3", regex=False).all()


def test_icc_listwise_deletion_states_the_units_dropped() -> None:
    rng = np.random.default_rng(4)
    data = rng.normal(size=(3, 40)) + rng.normal(size=40)
    data[0, :30] = np.nan
    res = st.icc(data)
    assert (res["n_dropped"] == 30).all() and (res["n_units"] == 10).all()
    assert res["reason"].str.contains("30 of 40 rated units dropped").all()


def test_spearman_and_wilcoxon_state_dropped_pairs() -> None:
    x = [1.0, 2.0, np.nan, 4.0, 5.0, 6.0]
    y = [2.0, 1.0, 3.0, np.nan, 6.0, 5.5]
    res = st.spearman(x, y).loc[0]
    assert res["n"] == 4 and res["reason"] == "2 of 6 pairs dropped for a missing value"
    res = st.wilcoxon_signed_rank(x, y).loc[0]
    assert res["n"] == 4 and res["reason"] == "2 of 6 pairs dropped for a missing value"
    one = st.wilcoxon_signed_rank([1.0, np.nan, -2.0, 3.0]).loc[0]
    assert one["reason"] == "1 of 4 values dropped for a missing value"


def test_a_coefficient_without_standard_error_says_why() -> None:
    """Every NaN comes with its reason: on one unit Fleiss' kappa, Gwet's AC1 and Scott's
    pi are defined but their variance (divided by n - 1) is not; with no spread between
    units the standard error is 0 and there is no z."""
    one = np.array([[1.0], [2.0], [1.0]])
    for table, coef in ((st.fleiss_kappa(one), "kappa"), (st.gwet_ac(one), "ac"),
                        (st.scott_pi(one).iloc[[0]], "pi")):
        row = table.iloc[0]
        assert np.isfinite(row[coef]) and np.isnan(row["se"]) and np.isnan(row["z"])
        assert row["reason"] == ("one unit: no standard error, test or interval (they "
                                 "need two or more units)")
    two = np.array([[1.0, 2.0], [1.0, 2.0]])  # perfect agreement, the same on both units
    row = st.gwet_ac(two).iloc[0]
    assert row["ac"] == 1.0 and row["se"] == 0.0 and np.isnan(row["z"])
    assert row["reason"] == "standard error 0 (no spread between units): no z or p"
    assert st.gwet_ac(np.array([[1.0, 2, 1, 2], [1, 2, 1, 1]])).iloc[0]["reason"] == ""


def test_icc_of_an_exact_fit_says_why_it_has_no_interval() -> None:
    """Identical raters: every ICC is 1 and F is infinite; the single-rater limits
    (F - 1)/(F + k - 1) are 0/0 (pingouin gives NaN there too), and the average forms'
    1 - 1/F would be [1, 1] on any number of units: no form has an interval, and each
    says so in the same words."""
    same = np.tile(np.arange(1.0, 6.0), (3, 1))
    with np.errstate(all="ignore"):
        table = st.icc(same).set_index("type")
    assert (table["icc"] == 1.0).all()
    for form in ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"):
        assert np.isnan(table.loc[form, "ci_low"]) and np.isnan(table.loc[form, "ci_high"])
        assert table.loc[form, "reason"] == ("no interval: the ratings fit the model "
                                             "exactly (error mean square 0, F infinite)")
