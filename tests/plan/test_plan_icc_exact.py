"""Where Bonett's ICC width does not hold (few items), the plan's width is the exact one.

Bonett, D. G. (2002). Sample size requirements for estimating intraclass correlations
with desired precision. Statistics in Medicine, 21(9), 1331-1335: a large-sample
approximation of the width of the ICC's interval. McGraw, K. O., & Wong, S. P. (1996).
Forming inferences about some intraclass correlation coefficients. Psychological
Methods, 1(1), 30-46, Table 7: the exact-F interval of ICC(C,1) that
``sheetflow.stats.icc`` reports. The reference here is a seeded simulation of the
two-way model (4000 studies a design) computing that interval, checked against
``icc`` on one study; the exact expected width is checked against it and Bonett's
formula measured by it. At ICC 0.99, 3 raters, 2 items Bonett gives 0.067 where the
interval's mean width is about 0.57.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as sps

from sheetflow.cli import cli
from sheetflow.plan.formulas import bonett_icc_width, icc_design_width, icc_items_needed
from sheetflow.spec import init_study
from sheetflow.stats import icc, icc_expected_width

STUDIES = 4000


def _widths(rho: float, k: int, n: int, seed: int = 20020) -> np.ndarray:
    """The full width of ICC(C,1)'s 95% exact-F interval in each simulated study."""
    rng = np.random.default_rng(seed)
    x = (rng.normal(0, np.sqrt(rho), (STUDIES, n, 1))
         + rng.normal(0, np.sqrt(1 - rho), (STUDIES, n, k)))
    return _interval(x)[1] - _interval(x)[0]


def _interval(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """McGraw & Wong's (1996) ICC(C,1) interval of each study in ``x`` (studies x n x k)."""
    _, n, k = x.shape
    grand = x.mean(axis=(1, 2), keepdims=True)
    ss_rows = k * ((x.mean(axis=2, keepdims=True) - grand) ** 2).sum(axis=(1, 2))
    ss_cols = n * ((x.mean(axis=1, keepdims=True) - grand) ** 2).sum(axis=(1, 2))
    ss_err = ((x - grand) ** 2).sum(axis=(1, 2)) - ss_rows - ss_cols
    df1, df2 = n - 1, (n - 1) * (k - 1)
    f = (ss_rows / df1) / (ss_err / df2)
    f_low, f_up = f / sps.f.ppf(0.975, df1, df2), f * sps.f.ppf(0.975, df2, df1)
    return (f_low - 1) / (f_low + k - 1), (f_up - 1) / (f_up + k - 1)


def test_the_simulated_interval_is_the_one_analyze_reports():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 6, 3)) + rng.normal(size=(1, 6, 1))
    low, high = _interval(x)
    long = pd.DataFrame([(u, r, x[0, u, r]) for u in range(6) for r in range(3)],
                        columns=["unit", "rater", "value"])
    row = icc(long).set_index("type").loc["ICC3"]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low[0], high[0]))


@pytest.mark.parametrize("rho,k,n", [(0.99, 3, 2), (0.99, 2, 4), (0.9, 2, 20),
                                     (0.75, 3, 3), (0.5, 4, 2), (0.75, 4, 30)])
def test_the_exact_expected_width_is_the_simulated_mean(rho, k, n):
    widths = _widths(rho, k, n)
    se = widths.std(ddof=1) / np.sqrt(STUDIES)
    assert abs(icc_expected_width(rho, k, n) - widths.mean()) < 4 * se


def test_bonett_understates_few_items_and_the_plan_uses_the_exact_width():
    """The reported gap: Bonett's 0.067 at ICC 0.99, 3 raters, 2 items."""
    mean = _widths(0.99, 3, 2).mean()
    assert bonett_icc_width(0.99, 3, 2) == pytest.approx(0.0674, abs=1e-4)
    assert mean > 5 * bonett_icc_width(0.99, 3, 2)
    width, exact = icc_design_width(0.99, 3, 2)
    assert exact and width == pytest.approx(mean, rel=0.03)
    # Bonett's count for width 0.2 is 2 items; the exact widths need 4 (0.225 at 3)
    assert icc_items_needed(0.99, 3, 0.2, 2) == 4


@pytest.mark.parametrize("rho,k,n,published", [(0.85, 4, 20, 0.1954993),
                                               (0.5, 3, 50, 0.3233102)])
def test_where_bonett_holds_the_published_width_stays(rho, k, n, published):
    """presize's prec_icc widths (see test_plan_formulas.py): within 10% of exact."""
    assert icc_design_width(rho, k, n) == (pytest.approx(published, abs=1e-6), False)


def test_the_plan_shows_the_exact_width_and_needs_its_items(tmp_path):
    folder = init_study(tmp_path / "jl", template="judge-likert")
    args = ["plan", str(folder), "--expected", "0.99", "--items", "2,3,4,12", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    rows = {d["items"]: d for d in out["designs"]}
    assert rows[2]["expected_width"] == pytest.approx(0.571, abs=0.002)  # was 0.067
    assert not rows[2]["meets"] and not rows[3]["meets"] and rows[4]["meets"]
    assert {d["items_needed"] for d in out["designs"]} == {4}
    assert out["items"] == 4 and rows[2]["method"] == "exact expected width"
    assert any("here at 3 raters x 2, 3, 4, 12 items, the width shown is the exact one"
               in note for note in out["notes"])
