"""Protocol 000's pilot alpha is the decision's: plan reads the study's own ratings with
the internal team's totals as one more rater, as analyze's alpha on the total counts
them (protocol 000 sections 4.1-4.2). On this planted study plan sized the validators'
alpha alone, 0.952, where the decision read 0.432."""

from __future__ import annotations

import pytest
from decision_helpers import run_analyze
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.run import collect
from sheetflow.plan import plan_study

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
