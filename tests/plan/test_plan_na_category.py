"""A column whose N/A answers are a category is planned as analyze reads it: nominal.

With ``[analysis.params] na_handling = "category"`` (protocol 003's faithfulness), analyze
reads the column at the nominal level with N/A one more value, and reports Cohen's kappa
on it unweighted; the plan sizes that kappa, not a weighted one over the ordered labels.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from click.testing import CliRunner

from sheetflow.analysis import run_plan
from sheetflow.cli import cli
from sheetflow.plan import plan_study
from sheetflow.plan.inputs import study_measure
from sheetflow.spec import init_study
from sheetflow.spec.study import load_study
from sheetflow.stats import cohen_kappa_batch

ANSWERS = ["Faithful", "Partial", "Unfaithful", "N/A"]


def _na_as_category(tmp_path):
    folder = init_study(tmp_path / "ar", template="answer-review")
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'na_handling = "missing"' in text
    toml.write_text(text.replace('na_handling = "missing"', 'na_handling = "category"'),
                    encoding="utf-8")
    return folder


def _faithfulness(study) -> pd.DataFrame:
    """Two raters' faithfulness answers on every item, N/A among them."""
    rng = np.random.default_rng(3)
    cases = [it.id for it in study.items]
    first = rng.integers(0, 4, len(cases))
    second = np.where(rng.random(len(cases)) < 0.6, first, rng.integers(0, 4, len(cases)))
    return pd.DataFrame([{"rater": rater, "case": case, "label": "", "arm": "",
                          "dimension": "faithfulness", "value": ANSWERS[k], "sitting": 1}
                         for rater, codes in (("rater1", first), ("rater2", second))
                         for case, k in zip(cases, codes, strict=True)])


def test_the_plans_measure_gives_analyzes_kappa(tmp_path):
    """The plan's values and weights, applied to the ratings analyze reads, give the
    kappa analyze reports (unweighted over the four answers, N/A among them)."""
    study = load_study(_na_as_category(tmp_path))
    data = _faithfulness(study)
    pairs = run_plan(study, data).tables["cohen_kappa"]
    row = pairs[pairs["measure"] == "faithfulness"].iloc[0]
    m = study_measure(study, "faithfulness")
    assert m.level == "nominal" and m.domain == tuple(ANSWERS)
    assert row["weights"] == "identity" and m.weighting() == ""
    codes = np.stack([[m.domain.index(v) for v in data.loc[data["rater"] == r, "value"]]
                      for r in ("rater1", "rater2")])
    kappa, low, high = (float(a[0]) for a in cohen_kappa_batch(
        codes[None], len(m.domain), weights=m.kappa_weights()))
    assert (kappa, low, high) == (
        float(row["kappa"]), float(row["ci_low"]), float(row["ci_high"]))


def test_the_plan_says_nominal_and_unweighted(tmp_path):
    folder = _na_as_category(tmp_path)
    run = CliRunner().invoke(cli, ["plan", str(folder), "--measure", "faithfulness",
                                   "--json"])
    assert run.exit_code == 0, run.output
    out = json.loads(run.output)
    assert out["level"] == "nominal" and out["weighting"] is None
    said = CliRunner().invoke(cli, ["plan", str(folder), "--measure", "faithfulness"])
    statistic = next(line for line in said.output.splitlines()
                     if line.startswith("statistic"))
    assert statistic == "statistic  cohen_kappa faithfulness (nominal)"
    # unweighted kappa has kappaSize's closed forms, over the four answers
    result = plan_study(folder, measure="faithfulness")
    assert result.method.startswith("Donner & Rotondi") and "4 values" in result.source
