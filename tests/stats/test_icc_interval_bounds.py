"""ICC intervals that are true: no end beyond the pole of the Spearman-Brown step.

Reference values: the limits are McGraw & Wong (1996, Table 7) with Satterthwaite's df
for ICC(A,1), the formulas pingouin's ``intraclass_corr`` and R psych's ``ICC`` use; the
ICC(A,k) limits are the Spearman-Brown step k r / (1 + (k-1) r) of the ICC(A,1) limits
(Shrout & Fleiss 1979, eq. for ICC(2,k); McGraw & Wong 1996, Table 7).
"""

from __future__ import annotations

import numpy as np
import pytest

from sheetflow import stats as st

# 3 units x 2 raters whose ICC(A,1) lower limit (-1.356) lies below -1/(k-1) = -1;
# McGraw & Wong's step applied past the pole gives ICC(A,k) the lower limit 7.617,
# above its own estimate 0.811 (pingouin gives the same 7.617).
PAST_THE_POLE = np.array([[-0.5, -1.5], [-2.5, -1.0], [0.5, 1.0]]).T


def _row(data: np.ndarray, form: str) -> dict:
    res = st.icc(data)
    return res.set_index("type").loc[form].to_dict()


def test_average_absolute_lower_limit_is_minus_infinity_past_the_pole() -> None:
    single, average = _row(PAST_THE_POLE, "ICC2"), _row(PAST_THE_POLE, "ICC2k")
    assert single["ci_low"] == pytest.approx(-1.356037, abs=1e-5)  # McGraw & Wong 1996
    assert average["icc"] == pytest.approx(0.810811, abs=1e-5)
    assert average["ci_low"] == -np.inf
    # the upper limit is the step of ICC(A,1)'s upper limit 0.990953: 2r/(1+r)
    assert average["ci_high"] == pytest.approx(2 * 0.990953 / 1.990953, abs=1e-5)
    assert "no lower end (-inf)" in average["reason"]
    assert "-1.356" in average["reason"]


def test_average_forms_lower_limit_never_above_estimate() -> None:
    """200 small random sets (3-5 units, 2-4 raters): every average form's lower limit
    lies at or below its estimate (4 of them crossed the pole before)."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        n, k = int(rng.integers(3, 6)), int(rng.integers(2, 5))
        data = np.round(rng.normal(size=(k, n)) * 2) / 2
        res = st.icc(data).set_index("type")
        for form in ("ICC1k", "ICC2k", "ICC3k"):
            row = res.loc[form]
            if np.isfinite(row["icc"]) and not np.isnan(row["ci_low"]):
                assert row["ci_low"] <= row["icc"] + 1e-9, (form, data.tolist())


# 3 units x 3 raters with ICC(A,1) = -0.458 (MSE 0.944, F 0.029): Satterthwaite's df
# (McGraw & Wong 1996, Table 7 note) is 0.0093, where F(0.975; 2, v) is infinite and
# F(0.975; v, 2) = 0.93 < 1, so the formula's upper limit -0.4597 lies below the estimate.
TINY_DF = np.array([[0.5, 0, -0.5], [0, -1, 0.5], [-1, -1, 1.5]]).T


@pytest.mark.parametrize("form", ["ICC2", "ICC2k"])
def test_absolute_forms_have_no_interval_when_satterthwaite_df_is_too_small(form) -> None:
    row = _row(TINY_DF, form)
    assert np.isfinite(row["icc"])
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert "Satterthwaite's df" in row["reason"] and "v = 0.0093" in row["reason"]
    assert "fit the model exactly" not in row["reason"]


def test_every_interval_holds_its_estimate_or_is_nan_with_a_reason() -> None:
    """500 small random sets, all six forms: lower <= estimate <= upper, or no interval
    and the reason in the row."""
    rng = np.random.default_rng(12)  # a seed whose sets hit the tiny-df case
    for _ in range(500):
        n, k = int(rng.integers(3, 6)), int(rng.integers(2, 5))
        data = np.round(rng.normal(size=(k, n)) * 2) / 2
        for row in st.icc(data).to_dict("records"):
            if np.isnan(row["icc"]):
                continue
            low, high = row["ci_low"], row["ci_high"]
            if np.isnan(low) or np.isnan(high):
                assert np.isnan(low) and np.isnan(high), (row, data.tolist())
                assert row["reason"].startswith("no interval") or "; no interval" in \
                    row["reason"], (row, data.tolist())
            else:
                assert low <= row["icc"] + 1e-9 <= high + 2e-9, (row, data.tolist())


def test_an_icc_of_exactly_zero_is_reported_as_zero_not_rounding_residue():
    """Units [3, 3], [2, 1], [2, 5] rated by two raters: in rational arithmetic the
    unit and residual mean squares are equal (MSR = MSE = 13/6, checked below with
    fractions), so ICC(C,1) = (MSR - MSE) / (MSR + MSE) and ICC(C,2) = (MSR - MSE) /
    MSR are exactly 0 (McGraw & Wong 1996, Table 4). Floating point left -2.7e-16,
    which the 002 ICC sheet printed as "-2.66E-16"."""
    from fractions import Fraction

    import pandas as pd

    x = [[3, 3], [2, 1], [2, 5]]
    n, k = len(x), 2
    grand = Fraction(sum(map(sum, x)), n * k)
    ssr = k * sum((Fraction(sum(r), k) - grand) ** 2 for r in x)
    ssc = n * sum((Fraction(sum(c), n) - grand) ** 2 for c in zip(*x, strict=True))
    sst = sum((v - grand) ** 2 for r in x for v in r)
    assert ssr / (n - 1) == (sst - ssr - ssc) / ((n - 1) * (k - 1)) == Fraction(13, 6)
    data = pd.DataFrame([(u, r, float(v)) for u, row in enumerate(x)
                         for r, v in enumerate(row)], columns=["unit", "rater", "value"])
    out = st.icc(data).set_index("type")["icc"]
    assert out["ICC3"] == 0.0 and out["ICC3k"] == 0.0
    assert out["ICC1"] == pytest.approx(0.13043478260869565)  # others untouched
