"""Cohen's kappa computed unit by unit (many categories, few units) is the kappa of the
pairs' q x q tables.

``cohen_kappa`` takes each batch of rater pairs either as q x q tables
(``_kappa_batch``) or, when a table has more cells than there are units, from the
units themselves (``_kappa_units``). The second is checked three ways: against the
first on random pairs (every weighting, missing ratings, the undefined cases), against
published values reached through the public function with a domain large enough to
choose it, and on a panel where the same pairs go through both.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sheetflow import stats as st
from sheetflow.stats._weights import agreement_weights
from sheetflow.stats.kappa import _kappa_batch, _kappa_units

COLUMNS = ("n_units", "kappa", "se", "z", "p", "ci_low", "ci_high", "p_o", "p_e")


def _tables(first: np.ndarray, second: np.ndarray, q: int) -> np.ndarray:
    """Each pair's q x q table of counts over the units both rated."""
    pairs = first.shape[0]
    both = (first >= 0) & (second >= 0)
    joint = (np.arange(pairs)[:, None] * q + first) * q + second
    return np.bincount(joint[both], minlength=pairs * q * q).reshape(pairs, q, q).astype(float)


def _same(units: dict, tables: dict) -> None:
    for column in COLUMNS:
        np.testing.assert_allclose(units[column], tables[column], rtol=1e-10, atol=1e-12,
                                   equal_nan=True, err_msg=column)
    assert units["reason"].tolist() == tables["reason"].tolist()


@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic"])
@pytest.mark.parametrize("q, units", [(2, 5), (4, 36), (21, 36), (9, 3)])
def test_unit_sums_equal_the_table_sums_on_random_pairs(weights, q, units) -> None:
    rng = np.random.default_rng(q * 100 + units)
    pairs = 400
    first = rng.integers(0, q, (pairs, units))
    second = np.clip(first + rng.integers(-2, 3, (pairs, units)), 0, q - 1)
    first[rng.random((pairs, units)) < 0.15] = -1
    second[rng.random((pairs, units)) < 0.15] = -1
    first[0], second[0] = 0, 0  # one category used throughout: chance agreement 1
    first[1, :], second[1, :] = -1, 1  # no unit rated by both
    second[2] = first[2]  # perfect agreement
    w = agreement_weights(np.arange(q, dtype=float), weights, "values")
    units_res = _kappa_units(first, second, w, 0.95)
    _same(units_res, _kappa_batch(_tables(first, second, q), w, 0.95))
    assert units_res["reason"][0].startswith("chance agreement is 1")
    assert units_res["reason"][1] == "no unit rated by both raters"


def _long(table: list[list[int]]) -> pd.DataFrame:
    """Two raters' ratings, one unit per count of the contingency ``table``."""
    rows = []
    for i, line in enumerate(table):
        for j, count in enumerate(line):
            rows += [(i, j)] * count
    a, b = np.array(rows).T
    n = len(rows)
    return pd.DataFrame({"unit": np.tile(np.arange(n), 2), "rater": ["a"] * n + ["b"] * n,
                         "value": np.concatenate([a, b])})


def test_fmsb_example_through_the_unit_sums() -> None:
    # R fmsb::Kappa.test(matrix(c(10, 1, 1, 10), 2)): kappa 0.8181818, Z = 3.8376,
    # 95% CI 0.5779259 to 1.0584377. Five categories on 22 units (25 cells): unit
    # sums; unused categories leave unweighted kappa and its variances unchanged.
    res = st.cohen_kappa(_long([[10, 1], [1, 10]]), categories=range(5)).loc[0]
    assert res["kappa"] == pytest.approx(0.8181818, abs=1e-7)
    assert round(res["z"], 4) == 3.8376
    assert res["ci_low"] == pytest.approx(0.5779259, abs=1e-7)
    assert res["ci_high"] == pytest.approx(1.0584377, abs=1e-7)


def test_irrcac_abstractors_through_the_unit_sums() -> None:
    # irrCAC (R) README: kappa2.table(cont3x3abstractors): 0.7964094, se 0.05891072.
    # Eleven categories on 100 units (121 cells): unit sums.
    data = _long([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    res = st.cohen_kappa(data, categories=range(11)).loc[0]
    assert res["kappa"] == pytest.approx(0.7964094, abs=1e-7)
    assert res["se"] == pytest.approx(0.05891072, abs=1e-8)


@pytest.mark.parametrize("weights", ["identity", "quadratic"])
def test_a_panel_gives_the_same_kappas_either_way(weights) -> None:
    """The same 30 raters on 30 units, scored 0-5: 36 cells to 30 units takes the unit
    sums; with 40 units (every rater blank on the 10 added), the tables. Blank units
    count for no pair, so the two runs must agree pair by pair."""
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 6, 30)
    values = np.clip(truth[None, :] + rng.integers(-1, 2, (30, 30)), 0, 5).astype(float)
    values[rng.random(values.shape) < 0.2] = np.nan
    padded = np.hstack([values, np.full((30, 10), np.nan)])
    few = st.cohen_kappa(values, weights=weights, categories=range(6))
    many = st.cohen_kappa(padded, weights=weights, categories=range(6))
    assert len(few) == 435
    pd.testing.assert_frame_equal(few.drop(columns=list(COLUMNS)),
                                  many.drop(columns=list(COLUMNS)))
    for column in COLUMNS:
        np.testing.assert_allclose(few[column], many[column], rtol=1e-10, atol=1e-12,
                                   equal_nan=True, err_msg=column)
