"""Protocol 000's pilot alpha is the decision's: plan reads the study's own ratings with
the internal team's totals as one more rater, as analyze's alpha on the total counts
them (protocol 000 sections 4.1-4.2). On this planted study plan sized the validators'
alpha alone, 0.952, where the decision read 0.432."""

from __future__ import annotations

import json

import numpy as np
import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.analysis.internal_rater import INTERNAL_RATER
from sheetflow.cli import cli
from sheetflow.collect.run import collect
from sheetflow.plan import Target, plan_study
from sheetflow.plan.inputs import Measure, pilot_from_study, pilot_source, study_measure
from sheetflow.plan.record import record_plan
from sheetflow.plan.simulate import ModelSource, simulate_cell
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study

QUICK = dict(raters=[3], items=[18], simulations=20, n_boot=40)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The paired-rubric template, its example internal scores in place, every pack
    filled by the simulated raters, collected and analysed."""
    root = study_from("paired-rubric", tmp_path_factory.mktemp("p000") / "study")
    plant(root, lambda cell: KEEP)
    collect(root)
    _, summary, _ = run_analyze(root)
    return root, summary


def test_the_pilot_alpha_is_the_decision_alpha(planted):
    root, summary = planted
    check = next(c for c in summary["decision"]["checks"]
                 if c["name"].startswith("Krippendorff's alpha on"))
    total = next(r for r in summary["alpha"] if r["kind"] == "total")
    assert check["value"] == pytest.approx(total["alpha"])
    assert total["alpha_validators_only"] != pytest.approx(total["alpha"], abs=1e-3)
    plan = plan_study(root, **QUICK)
    assert plan.source.startswith(
        "pilot out/ratings.csv (the 3 validators and the internal team's totals as one "
        "more rater, as analyze's alpha on 'total' counts them): 36 units, 4 values per "
        f"unit, alpha {check['value']:.3f}")


def test_a_measure_the_internal_scores_do_not_rate_says_validators_only(planted):
    root, summary = planted
    depth = next(r for r in summary["alpha"] if r["measure"] == "depth")
    plan = plan_study(root, measure="depth", **QUICK)
    assert plan.source == (
        "pilot out/ratings.csv (the 3 validators only: the internal scores hold totals "
        f"only): 36 units, 3 values per unit, alpha {depth['alpha']:.3f}")


# The decision's alpha counts the internal team beside the validators, so a design of k
# validators is a study of k + 1 raters: plan sized "3 raters" (validators) and simulated
# 3 raters where the decision's alpha has 4, and resampled the team's totals as if the
# team were one more validator, dropping it from some units.

def test_a_design_of_k_validators_is_simulated_with_the_team(planted):
    root, _ = planted
    plan = plan_study(root, expected=0.6, raters=[2], items=[18], simulations=40,
                      n_boot=40)
    t = plan.table
    row = t[t["raters"] == 2].iloc[0].to_dict()  # the validators to recruit
    assert row["items"] == 18
    model = ModelSource(0.6, plan_model_shares(root), plan_model_domain(root), "ordinal")
    with_team = simulate_cell(model, 3, 36, simulations=40, n_boot=40, seed=plan.seed)
    alone = simulate_cell(model, 2, 36, simulations=40, n_boot=40, seed=plan.seed)
    # same seed, same draws: the design is the 3-rater study, not the 2-rater one
    assert row["expected_width"] == pytest.approx(with_team["expected_width"],
                                                  abs=2 * row["width_se"])
    assert row["expected_width"] == with_team["expected_width"]
    assert abs(row["expected_width"] - alone["expected_width"]) > 2 * row["width_se"]


def test_the_pilot_design_keeps_the_team_in_every_unit(planted):
    root, _ = planted
    plan = plan_study(root, raters=[2], items=[18], **{k: QUICK[k] for k in
                                                      ("simulations", "n_boot")})
    assert plan.method == "pilot resampling"
    study = load_study(root)
    m = study_measure(study, "total")
    pilot = pilot_source(pilot_from_study(root, study, m, as_decided=True), m, "pilot")
    assert pilot.team and pilot.most_raters == 4
    direct = simulate_cell(pilot, 3, 36, simulations=20, n_boot=40, seed=plan.seed)
    t = plan.table
    assert t.loc[t["raters"] == 2, "expected_width"].iloc[0] == direct["expected_width"]


def test_resampling_keeps_the_team_value_and_resamples_the_validators():
    """A pilot whose team always says 0 and whose validators never do: every resampled
    unit of a 2-validator design holds one 0 (the team) and two validators' values."""
    m = Measure("total", "ordinal", tuple(range(8)), 1)
    rows = [{"unit": f"u{u}", "rater": r, "value": v}
            for u in range(30)
            for r, v in ((INTERNAL_RATER, 0), ("a", 5 + u % 3), ("b", 6), ("c", 7))]
    pilot = pilot_source(pd.DataFrame(rows), m, "pilot")
    codes = pilot.draw(np.random.default_rng(1), 50, 3, sets=20)  # sets x raters x units
    assert ((codes == 0).sum(axis=1) == 1).all()
    assert (codes[:, 0, :] == 0).all()


def test_every_line_says_validators_plus_the_internal_team(planted, tmp_path):
    root, _ = planted
    out = CliRunner().invoke(cli, ["plan", str(root), "--raters", "2-3", "--items", "18,300",
                                   "--simulations", "20", "--n-boot", "40", "--json"])
    assert out.exit_code in (0, 1), out.output
    data = json.loads(out.output)
    assert data["plus_internal_team"] is True
    assert "3 validators plus the internal team x 18 cases" in data["notes"][0]
    assert any("a design of k validators is simulated with k + 1 raters" in n
               for n in data["notes"])
    text = CliRunner().invoke(cli, ["plan", str(root), "--raters", "2-3", "--items",
                                    "18,300", "--simulations", "20", "--n-boot", "40"])
    lines = text.output.splitlines()
    assert any(line.split()[:2] == ["validators", "cases"] for line in lines)
    best = [line for line in lines if line.startswith("cheapest")]
    assert best and " validators plus the internal team x " in best[0]
    assert not any(" raters x " in line for line in lines), text.output
    sheet = openpyxl.load_workbook(root / "out" / "plan.xlsx")["Plan"]
    cells = {c.value for row in sheet.iter_rows() for c in row if isinstance(c.value, str)}
    assert "Validators (plus the internal team)" in cells
    chart = openpyxl.load_workbook(root / "out" / "plan.xlsx")["Chart data"]
    assert chart.cell(1, 2).value == "Expected width, 2 validators plus the internal team"


def test_a_measure_the_team_does_not_rate_plans_raters_alone(planted):
    root, _ = planted
    plan = plan_study(root, measure="depth", **QUICK)
    assert not plan.team and plan.raters_word == "raters"
    assert "3 raters x 18 cases" in plan.notes[0]
    assert not any("internal team" in n for n in plan.notes)


def plan_model_shares(root):
    """Equal shares of the total's values, as plan assumes without --shares."""
    domain = plan_model_domain(root)
    return tuple([1 / len(domain)] * len(domain))


def plan_model_domain(root):
    return study_measure(load_study(root), "total").domain


def test_the_recorded_design_says_the_team_rates_beside_it(tmp_path):
    folder = init_study(tmp_path / "p000", template="paired-rubric")
    plan = plan_study(folder, expected=0.75, raters=[3], items=[18, 400],
                      target=Target(width=0.2), simulations=20, n_boot=40)
    record = json.loads(record_plan(folder, plan).read_text(encoding="utf-8"))
    assert (record["raters"], record["items"], record["plus_internal_team"]) == (3, 400, True)
