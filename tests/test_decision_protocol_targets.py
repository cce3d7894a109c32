"""The targets a protocol's decision needs: ``check`` refuses a spec that lacks one or
sets one against its protocol, and a study generated before that (its plan frozen)
leaves the checks on it undecided, says why and makes ``analyze`` exit 1.

Protocol 000 fixes its three targets (alpha 0.70, direction agreement 70%, rho 0.60)
and its consequence bands end at them: with a direction target of 0% a share of 39%,
below the 50% the rule itself calls a fail, read "met"; with an alpha target of 1.0
an alpha of 0.85 ("high reliability") read "marginal". Protocol 002 freezes its
acceptance threshold and maximum material-error count in the plan: without them no
item was decided and the headline did not say why, and without the maximum alone
items were accepted on their totals in silence.
"""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from decision_helpers import run_analyze
from plant_helpers import plant, study_from
from spec_helpers import check_gives_one_line, replace_once
from test_decision_000_edges import _answers, _internal, _total

import sheetflow.packs.generate as generate
from sheetflow.cli import cli
from sheetflow.collect.run import collect
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
    # 002 freezes ICC(A,1): with ICC3, analyze reported ICC(C,1) as the protocol's ICC
    ("anchored-plan", 'icc_form = "ICC2"', 'icc_form = "ICC3"',
     ["[analysis] icc_form: icc_form = 'ICC3' contradicts protocol 002: its plan freezes "
      "the ICC(A,1) absolute-agreement method", "write icc_form = 'ICC2'"]),
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


def _generated_before_the_check(monkeypatch, template: str, root: Path, edit) -> Path:
    """``root`` generated from ``template`` with ``edit`` as an earlier sheetflow did:
    its plan is frozen with the targets ``edit`` left."""
    monkeypatch.setattr(generate, "require_generatable", lambda study: None)
    study_from(template, root, edit)
    monkeypatch.undo()
    assert load_study(root).generate_problems  # check and generate now refuse it
    return root


def _sub(old: str, new: str):
    def edit(root: Path) -> None:
        _internal()(root)
        replace_once(root / "study.toml", old, new)
    return edit


def _analysed_000(monkeypatch, root: Path, edit, n_improved: int):
    _generated_before_the_check(monkeypatch, "paired-rubric", root, edit)
    plant(root, _answers(n_improved))
    collect(root)
    result, summary, rows = run_analyze(root)
    checks = {c["name"].split(":")[0].split(" on ")[0]: c for c in summary["decision"]["checks"]}
    return result, summary, rows, checks


def test_a_000_target_against_the_protocol_is_never_met_and_analyze_exits_1(
        tmp_path, monkeypatch):
    """pr4: direction target 0, alpha target 1.0, rho target -1. 21 of 54 direction
    judgements (38.9%) name the improved arm: below 50%, a fail by the rule's own words,
    and it read "met"; alpha 1 read against 1.0 was met, and rho 1 against -1 too."""
    edit = _sub("alpha = 0.70\ndirection_agreement = 0.70\nspearman = 0.60",
                "alpha = 1.0\ndirection_agreement = 0\nspearman = -1")
    result, summary, rows, checks = _analysed_000(monkeypatch, tmp_path / "edges", edit, 21)
    assert result.exit_code == 1, result.output
    direction = checks["direction agreement with the improved arm"]
    assert direction["value"] == pytest.approx(21 / 54)
    assert direction["outcome"] == "undefined" and direction["passed"] is None
    assert direction["note"].startswith(
        "not decided: [analysis.targets] direction_agreement = 0 contradicts protocol 000")
    for name in ("Krippendorff's alpha", "Spearman's rho vs internal"):
        assert checks[name]["outcome"] == "undefined", checks[name]
    assert summary["decision"]["status"] == "inconclusive"
    assert rows[2].startswith("DECISION: INCONCLUSIVE")
    # the rule says the protocol's numbers, never a band running downwards ("50%-0%")
    rule = summary["decision"]["rule"]
    assert "(50%-70%: 'weak signal', inconclusive" in rule and "50%-0%" not in rule
    assert "the plan's targets must be these, the protocol's own" in rule
    line = next(ln for ln in result.output.splitlines()
                if ln.startswith("check      direction agreement"))
    assert "(target at least 0.0%): undefined - not decided" in line and ": met" not in line
    assert not any(v["met"] for v in summary["verdicts"])  # none against those targets
    assert "exit 1: the spec's [analysis.targets] lack or contradict what the protocol's " \
        "decision needs" in result.output
    assert "warning: " in result.output and "write direction_agreement = 0.70" in \
        result.output


def test_a_000_study_without_targets_says_no_target_not_undefined(tmp_path, monkeypatch):
    """pr6: every figure is defined; what is missing is its target. Each line said
    "0.406: undefined" and analyze exited 0."""
    def edit(root: Path) -> None:
        _internal()(root)
        spec = root / "study.toml"
        text = spec.read_text(encoding="utf-8")
        spec.write_text(re.sub(r"\[analysis\.targets\]\n(.*\n)*?\n", "", text, count=1),
                        encoding="utf-8")
    result, summary, _, checks = _analysed_000(monkeypatch, tmp_path / "none", edit, 38)
    assert result.exit_code == 1, result.output
    for name, target in (("Krippendorff's alpha", "alpha = 0.70"),
                         ("direction agreement with the improved arm",
                          "direction_agreement = 0.70"),
                         ("Spearman's rho vs internal", "spearman = 0.60")):
        check = checks[name]
        assert check["value"] is not None and check["has_target"] is False
        assert check["note"].startswith("not decided: [analysis.targets] ")
        assert f"write {target}" in check["note"]
        line = next(ln for ln in result.output.splitlines()
                    if ln.startswith(f"check      {name}"))
        assert ": no target in the plan - not decided" in line, line
        assert ": undefined" not in line, line
    assert summary["decision"]["status"] == "inconclusive"
    sheet = openpyxl.load_workbook(tmp_path / "none" / "out" / "analysis.xlsx")["Summary"]
    outcomes = {r[0]: r[4] for r in sheet.iter_rows(max_col=5, values_only=True) if r[0]}
    named = next(k for k in outcomes if str(k).startswith("Spearman's rho vs internal"))
    assert outcomes[named] == "no target in the plan"


def test_000_reads_alpha_against_the_protocols_bands_not_the_plans_labels(tmp_path):
    """An alpha of 0.607 is 'marginal' (0.60-0.69, section 4.4) whatever bands the plan
    labels alphas with: without a 0.60 band it read as 'cannot validate', a fail."""
    def edit(root: Path) -> None:
        _internal(lambda c, a: _total(c, a) + 3)(root)
        replace_once(root / "study.toml", '  { min = 0.60, label = "Marginal reliability '
                     '(exploratory analyses only)" },\n', "")
    root = study_from("paired-rubric", tmp_path / "bands", edit)
    plant(root, _answers(38))
    collect(root)
    result, summary, _ = run_analyze(root)
    assert result.exit_code == 0, result.output
    alpha = next(c for c in summary["decision"]["checks"]
                 if c["name"].startswith("Krippendorff's alpha"))
    assert alpha["value"] == pytest.approx(0.607, abs=5e-4)
    assert alpha["outcome"] == "weak" and summary["decision"]["status"] == "inconclusive"
    assert "'Marginal reliability; rubric refinement needed for Iteration 3'" in alpha["note"]


@pytest.mark.parametrize(("removed", "named"), [
    ("acceptance_threshold = 70\nmax_material_errors = 1\n",
     ["acceptance_threshold is missing", "; max_material_errors is missing"]),
    ("max_material_errors = 1\n", ["max_material_errors is missing"]),
])
def test_a_002_study_without_its_frozen_targets_says_why_nothing_is_decided(
        tmp_path, monkeypatch, removed, named):
    """ap5: "RESULT: no item could be decided (no acceptance table)" and exit 0; without
    the maximum alone, an item with 5 material errors was accepted on its totals."""
    from test_decision_002 import PRIMARY, SECOND, _fill

    root = init_study(tmp_path / "ap", "anchored-plan")
    replace_once(root / "study.toml", removed, "")
    monkeypatch.setattr(generate, "require_generatable", lambda study: None)
    generate.generate_packs(root)  # and the lock's packs, as an earlier sheetflow did
    _fill(root, PRIMARY, {"W001": 5})
    collect(root)
    assert CliRunner().invoke(cli, ["lock", str(root)]).exit_code == 0
    monkeypatch.undo()
    _fill(root, SECOND, {})
    collect(root)
    result, summary, rows = run_analyze(root)
    assert result.exit_code == 1, result.output
    first = summary["decision"]["reasons"][0]
    assert first.startswith("no item could be decided: no target in the plan: "
                            "[analysis.targets] "), first
    for words in named:
        assert words in first
    assert "acceptance" not in summary
    assert summary["decision"]["status"] == "inconclusive"
    assert rows[2] == "DECISION: INCONCLUSIVE" and rows[4] == f"- {first}"
    assert "exit 1: the spec's [analysis.targets] lack" in result.output
