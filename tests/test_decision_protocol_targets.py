"""The targets a protocol's decision needs: ``check`` and ``generate`` refuse a spec
that lacks one or sets one against its protocol.

Protocol 000 fixes its three targets (alpha 0.70, direction agreement 70%, rho 0.60)
and its consequence bands end at them: with a direction target of 0% a share of 39%,
below the 50% the rule itself calls a fail, read "met"; with an alpha target of 1.0
an alpha of 0.85 ("high reliability") read "marginal". Protocol 002 freezes its
acceptance threshold and maximum material-error count in the plan.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_helpers import check_gives_one_line, replace_once

from sheetflow.spec import init_study, load_study

TEMPLATES = ("paired-rubric", "anchored-plan", "answer-review", "judge-likert", "keep-known")
SAMPLES = Path(__file__).resolve().parents[1] / "samples"


@pytest.mark.parametrize(("template", "old", "new", "words"), [
    ("paired-rubric", "\nalpha = 0.70\n", "\nalpha = 1.0\n",
     ["[analysis.targets]: alpha = 1 contradicts protocol 000: sections 4.2 and 4.4 fix it",
      "the only target its consequence bands allow is 0.70", "write alpha = 0.70"]),
    ("paired-rubric", "\nalpha = 0.70\n", "\nalpha = 0.65\n",
     ["alpha = 0.65 contradicts protocol 000", "0.60-0.69 'marginal'"]),
    ("paired-rubric", "direction_agreement = 0.70", "direction_agreement = 0",
     ["[analysis.targets]: direction_agreement = 0 contradicts protocol 000",
      "'Target: >=70% agreement (better than random 50%)'",
      "write direction_agreement = 0.70"]),
    ("paired-rubric", "direction_agreement = 0.70", "direction_agreement = 0.80",
     ["direction_agreement = 0.8 contradicts protocol 000", "50-70% is a 'weak signal'"]),
    ("paired-rubric", "spearman = 0.60", "spearman = -1",
     ["[analysis.targets]: spearman = -1 contradicts protocol 000", "write spearman = 0.60"]),
    ("paired-rubric", "spearman = 0.60\n", "",
     ["[analysis.targets]: spearman is missing: protocol 000's decision needs it",
      "'Target: rho >= 0.60'", "write spearman = 0.60"]),
    ("anchored-plan", "acceptance_threshold = 70\n", "",
     ["[analysis.targets]: acceptance_threshold is missing: protocol 002's decision needs "
      "it and the protocol freezes the operative acceptance threshold",
      "in the plan before enrolment", "acceptance_threshold = 70, the template's value"]),
    ("anchored-plan", "max_material_errors = 1\n", "",
     ["[analysis.targets]: max_material_errors is missing: protocol 002's decision needs it",
      "max_material_errors = 1, the template's value"]),
])
def test_check_refuses_a_target_the_protocol_needs_missing_or_contradicted(
        tmp_path, template, old, new, words):
    root = init_study(tmp_path / "s", template)
    replace_once(root / "study.toml", old, new)
    check_gives_one_line(root, ["s/study.toml", *words])


def test_every_template_and_the_demo_sample_hold_their_protocols_targets(tmp_path):
    for template in TEMPLATES:
        assert load_study(init_study(tmp_path / template, template)).generate_problems == ()
    assert load_study(SAMPLES / "paired-rubric").generate_problems == ()
