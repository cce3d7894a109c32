"""Cohen's kappa when one rater gives one category throughout and the other varies.

Observed agreement then equals chance agreement for any weights (the constant rater's
margin is all in one category), so kappa = (p_o - p_e) / (1 - p_e) is 0 by
construction (Cohen 1960, with p_e < 1); R ``irr::kappa2`` (0.84.1) returns 0 and no
z. The large-sample variance of Fleiss, Cohen & Everitt (1969) is 0 there, so the
interval kappa +/- z se was [0, 0]: a certainty the data do not give. The value stays
0; standard error, z, p and interval are undefined, with the reason.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sheetflow.stats import cohen_kappa, cohen_kappa_table

CONSTANT = [1] * 8
VARYING = [1, 2, 1, 2, 1, 1, 2, 1]


def _tidy(first: list[int], second: list[int]) -> pd.DataFrame:
    n = len(first)
    return pd.DataFrame({"unit": list(range(n)) * 2, "rater": ["a"] * n + ["b"] * n,
                         "value": first + second})


@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic"])
@pytest.mark.parametrize("categories", [[1, 2, 3], list(range(1, 30))])  # table / unit sums
def test_one_constant_rater_gives_kappa_zero_and_no_interval(weights, categories):
    row = cohen_kappa(_tidy(CONSTANT, VARYING), weights=weights,
                      categories=categories).iloc[0]
    assert row["kappa"] == 0.0  # irr::kappa2: (po - pe) / (1 - pe) with po == pe
    assert row["p_o"] == pytest.approx(row["p_e"])
    for col in ("se", "z", "p", "ci_low", "ci_high"):
        assert np.isnan(row[col]), col
    assert "0 by construction" in row["reason"] and "one category" in row["reason"]


def test_the_constant_rater_may_be_either_one():
    row = cohen_kappa(_tidy(VARYING, CONSTANT)).iloc[0]
    assert row["kappa"] == 0.0 and np.isnan(row["ci_low"]) and np.isnan(row["se"])


def test_a_table_with_one_constant_row_margin():
    row = cohen_kappa_table([[5, 3], [0, 0]]).iloc[0]
    assert row["kappa"] == 0.0 and np.isnan(row["ci_high"])


def test_two_constant_raters_on_different_categories():
    """Both constant, never agreeing: p_o = p_e = 0, kappa 0 by the formula, no spread."""
    row = cohen_kappa(_tidy([1] * 6, [2] * 6), categories=[1, 2]).iloc[0]
    assert row["kappa"] == 0.0 and np.isnan(row["ci_low"])


def test_varying_raters_keep_their_interval():
    row = cohen_kappa(_tidy(VARYING, [1, 2, 2, 2, 1, 1, 2, 2])).iloc[0]
    assert row["ci_low"] < row["kappa"] < row["ci_high"] and row["reason"] == ""
