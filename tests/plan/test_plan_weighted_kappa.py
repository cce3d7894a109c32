"""An ordered measure's Cohen's kappa is planned as analyze reports it: quadratic-weighted.

analyze weighs Cohen's kappa on an ordinal, interval or ratio measure quadratically
(``sheetflow.analysis.context.weights_for``); the plan simulates that kappa with the same
weights (Donner & Rotondi's closed forms are for unweighted kappa), and says so.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from sheetflow.analysis.context import kappa_weights
from sheetflow.cli import cli
from sheetflow.plan import ModelSource, plan_study
from sheetflow.spec import init_study
from sheetflow.stats import cohen_kappa, cohen_kappa_batch
from sheetflow.stats._weights import agreement_weights

Z95 = 1.959963984540054


def _fce(table: np.ndarray, w: np.ndarray) -> tuple[float, float, float]:
    """Weighted kappa and its 95% interval from one q x q table, written out from
    Fleiss, Cohen & Everitt (1969) with loops: independent of the library's arrays."""
    q, n = len(table), table.sum()
    p = table / n
    r = [sum(p[i, j] for j in range(q)) for i in range(q)]
    c = [sum(p[i, j] for i in range(q)) for j in range(q)]
    p_o = sum(w[i, j] * p[i, j] for i in range(q) for j in range(q))
    p_e = sum(w[i, j] * r[i] * c[j] for i in range(q) for j in range(q))
    kappa = (p_o - p_e) / (1 - p_e)
    row_bar = [sum(c[j] * w[i, j] for j in range(q)) for i in range(q)]
    col_bar = [sum(r[i] * w[i, j] for i in range(q)) for j in range(q)]
    term = sum(p[i, j] * (w[i, j] - (row_bar[i] + col_bar[j]) * (1 - kappa)) ** 2
               for i in range(q) for j in range(q))
    se = math.sqrt((term - (kappa - p_e * (1 - kappa)) ** 2) / (n * (1 - p_e) ** 2))
    return kappa, kappa - Z95 * se, kappa + Z95 * se


@pytest.mark.parametrize("values,weights,on", [(3, "quadratic", "ranks"),
                                               (5, "quadratic", "ranks"),
                                               (4, "linear", "ranks"),
                                               (4, "identity", "ranks")])
def test_weighted_batch_kappa_matches_an_independent_computation(values, weights, on):
    """``cohen_kappa_batch`` with weights gives, study by study, the FCE-1969 weighted
    kappa and interval computed by hand, and what analyze's ``cohen_kappa`` reports
    with those weights on the same ratings as labels."""
    rng = np.random.default_rng(values)
    labels = [f"grade {k}" for k in range(values)]
    w = agreement_weights(np.asarray(labels), weights, on)
    codes = rng.integers(0, values, size=(12, 2, 40))  # half at chance, half agreeing
    codes[:6, 1] = np.where(rng.random((6, 40)) < 0.6, codes[:6, 0], codes[:6, 1])
    got = cohen_kappa_batch(codes, values, weights=w)
    for s in range(len(codes)):
        table = np.zeros((values, values))
        np.add.at(table, (codes[s, 0], codes[s, 1]), 1)
        assert [float(g[s]) for g in got] == pytest.approx(_fce(table, w), abs=1e-12)
        ratings = pd.DataFrame({"unit": np.tile(np.arange(40), 2),
                                "rater": np.repeat(["a", "b"], 40),
                                "value": [labels[k] for k in codes[s].ravel()]})
        res = cohen_kappa(ratings, weights=weights, weight_on=on, categories=labels)
        want = [float(res.loc[0, col]) for col in ("kappa", "ci_low", "ci_high")]
        assert [float(g[s]) for g in got] == pytest.approx(want, abs=1e-12)


def test_the_plan_weighs_as_analyze_does():
    """One rule: quadratic weights on the ranks of an ordered labelled measure, on the
    numbers of a numeric one, none on a nominal one."""
    labels = ("Correct", "Partially correct", "Incorrect")
    assert np.allclose(kappa_weights("ordinal", "categorical", labels),
                       [[1, 0.75, 0], [0.75, 1, 0.75], [0, 0.75, 1]])
    assert np.array_equal(kappa_weights("nominal", "categorical", labels), np.eye(3))
    assert np.allclose(kappa_weights("interval", "scale", (1, 2, 4)),
                       1 - (np.subtract.outer([1, 2, 4], [1, 2, 4]) / 3.0) ** 2)


def _weighted_widths(items: int, studies: int = 200) -> np.ndarray:
    """Weighted-kappa widths of ``studies`` two-rater studies drawn from the plan's own
    model (kappa 0.75, three equal shares), each computed by analyze's ``cohen_kappa``."""
    labels = ["Correct", "Partially correct", "Incorrect"]
    model = ModelSource(0.75, (1 / 3, 1 / 3, 1 / 3), tuple(labels), "ordinal")
    rng = np.random.default_rng(2024)
    widths = []
    for _ in range(studies):
        codes = model.draw(rng, items, 2)
        ratings = pd.DataFrame({"unit": np.tile(np.arange(items), 2),
                                "rater": np.repeat(["a", "b"], items),
                                "value": [labels[k] for k in codes.ravel()]})
        res = cohen_kappa(ratings, weights="quadratic", weight_on="ranks",
                          categories=labels)
        widths.append(float(res.loc[0, "ci_high"] - res.loc[0, "ci_low"]))
    return np.asarray(widths)


def test_answer_review_plan_meets_the_target_for_the_kappa_analyze_reports(tmp_path):
    """Protocol 003's ordinal column: the recommended design's weighted-kappa interval,
    simulated independently of the plan, is no wider than the target (the unweighted
    closed form's 120 items gave a weighted width of about 0.25)."""
    folder = init_study(tmp_path / "ar", template="answer-review")
    result = plan_study(folder)
    best = result.chosen()
    assert best is not None and int(best["raters"]) == 2
    assert np.median(_weighted_widths(int(best["items"]))) <= result.target.width
    assert result.statistic == "cohen_kappa" and result.simulations > 0
    assert result.weighting == "quadratic-weighted on the ranks of its values"


def test_the_weighting_is_said_and_closed_forms_refused(tmp_path):
    folder = init_study(tmp_path / "ar", template="answer-review")
    run = CliRunner().invoke(cli, ["plan", str(folder)])
    assert run.exit_code == 0, run.output
    assert ("statistic  cohen_kappa overall_rating (ordinal), quadratic-weighted on the "
            "ranks of its values, as analyze reports it") in run.output
    sheet = load_workbook(folder / "out" / "plan.xlsx")["Plan"]
    texts = [str(c.value) for row in sheet.iter_rows() for c in row if c.value]
    assert "Cohen's kappa on 'overall_rating', ordinal level, quadratic-weighted on the " \
        "ranks of its values" in texts
    methods = load_workbook(folder / "out" / "plan.xlsx")["Methods"]
    assert "Weighted kappa" in [c.value for row in methods.iter_rows() for c in row]
    closed = CliRunner().invoke(cli, ["plan", str(folder), "--method", "closed"])
    assert closed.exit_code == 2
    assert "kappaSize's closed forms are for unweighted kappa" in closed.output
    assert "--method simulate" in closed.output and "Traceback" not in closed.output


def test_a_nominal_column_keeps_the_closed_form(tmp_path):
    folder = init_study(tmp_path / "ar", template="answer-review")
    result = plan_study(folder, measure="citation_quality")
    assert result.method.startswith("Donner & Rotondi") and result.weighting == ""


def test_a_simulated_kappa_plan_names_no_bootstrap(tmp_path):
    """A kappa's simulated interval is normal-theory: the method line and the Plan sheet
    said "500 bootstrap resamples" of a plan that drew none; alpha's still say it."""
    folder = init_study(tmp_path / "ar", template="answer-review")
    run = CliRunner().invoke(cli, ["plan", str(folder)])
    method = next(line for line in run.output.splitlines() if line.startswith("method"))
    assert method == "method     simulation, 100 simulated studies per design, seed 3004"
    sheet = load_workbook(folder / "out" / "plan.xlsx")["Plan"]
    texts = [str(c.value) for row in sheet.iter_rows() for c in row if c.value]
    assert "100 per design" in texts and not any("bootstrap" in t for t in texts)
    alpha = CliRunner().invoke(cli, ["plan", str(folder), "--statistic", "alpha",
                                     "--simulations", "20", "--n-boot", "50",
                                     "--items", "20"])
    assert "20 simulated studies per design, 50 bootstrap resamples, seed" in alpha.output
