"""Every template's ``init`` output plans with no options: the protocol's statistic, its
target and a design that meets it (issue acceptance); ``--expected 0.75`` works too."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec import init_study

EXPECTED = {  # template -> (statistic line, target line)
    "paired-rubric": ("statistic  alpha total (ordinal)", "no wider than 0.1"),
    "keep-known": ("statistic  cohen_kappa keep (nominal)", "no wider than 0.2"),
    "anchored-plan": ("statistic  icc total (interval)", "no wider than 0.2"),
    "answer-review": ("statistic  cohen_kappa overall_rating (ordinal)", "no wider than 0.2"),
    "judge-likert": ("statistic  icc overall (interval)", "no wider than 0.2"),
}


@pytest.mark.parametrize("template", sorted(EXPECTED))
def test_plan_with_no_options_exits_0_with_statistic_target_and_design(template, tmp_path):
    folder = init_study(tmp_path / template, template=template)
    quick = ["--simulations", "20", "--n-boot", "100"] if template == "paired-rubric" else []
    result = CliRunner().invoke(cli, ["plan", str(folder), *quick])
    assert result.exit_code == 0, result.output
    statistic, target = EXPECTED[template]
    assert statistic in result.output and target in result.output
    assert "(the default: give --expected or --pilot)" in result.output
    assert "cheapest   " in result.output.splitlines()[-1]
    assert "band" not in result.output or template == "paired-rubric"
    low, high = map(float, re.search(r"roughly (-?[\d.]+) to (-?[\d.]+)",
                                     result.output).groups())
    assert -1 <= low < high <= 1  # clipped to the statistic's range
    expected = CliRunner().invoke(cli, ["plan", str(folder), "--expected", "0.75", *quick])
    assert expected.exit_code == 0, expected.output


def test_intra_rater_plan_refuses_raters_in_words(tmp_path):
    folder = init_study(tmp_path / "kk", template="keep-known")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "2-4"])
    assert result.exit_code == 2 and "two sittings" in result.output


def test_expected_outside_the_range_is_said(tmp_path):
    folder = init_study(tmp_path / "ar", template="anchored-plan")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--expected", "1.2"])
    assert result.exit_code == 2 and "must lie in [0, 1)" in result.output


def test_closed_and_simulated_kappa_agree_roughly(tmp_path):
    """Cross-check: kappaSize's expected interval width and the simulated width of
    Fleiss' kappa's interval are close for a binary measure."""
    from sheetflow.plan import plan_study

    folder = init_study(tmp_path / "kk", template="keep-known")
    args = dict(statistic="fleiss_kappa", expected=0.6, raters=[3], items=[200])
    closed = plan_study(folder, method="closed", **args)
    simulated = plan_study(folder, method="simulate", simulations=60, n_boot=1, **args)
    pick = lambda res: float(res.table[(res.table["raters"] == 3)  # noqa: E731
                                       & (res.table["items"] == 200)]["expected_width"].iloc[0])
    assert pick(closed) == pytest.approx(pick(simulated), rel=0.15)


def test_locked_trio_plans_three_judges_only(tmp_path):
    """Protocol 004 locks three judges: the grid holds that count alone, and other
    rater counts are refused in words."""
    folder = init_study(tmp_path / "jl", template="judge-likert")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    import json

    designs = json.loads(result.output)["designs"]
    assert designs and {d["raters"] for d in designs} == {3}
    refused = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "2-6"])
    assert refused.exit_code == 2 and "locks 3 raters" in refused.output


def test_protocol_002_plans_its_two_frozen_raters_only(tmp_path):
    """Protocol 002's plan "freezes two pseudonymous rater IDs": the grid holds 2 raters
    alone, the Plan sheet's notes say why, and other rater counts are refused in words."""
    import json

    import openpyxl

    from sheetflow.plan import plan_study
    from sheetflow.plan.workbook import write_plan_workbook

    folder = init_study(tmp_path / "ap", template="anchored-plan")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--json"])
    assert result.exit_code in (0, 1), result.output
    doc = json.loads(result.output)
    assert doc["designs"] and {d["raters"] for d in doc["designs"]} == {2}
    why = ("Every design has 2 raters: protocol 002's plan freezes two pseudonymous rater "
           "IDs (a primary rater on every item, a second rater on the second-rating "
           "subset); plan the items (--items).")
    assert why in doc["notes"]
    plan = plan_study(folder)
    sheet = openpyxl.load_workbook(write_plan_workbook(plan, tmp_path / "plan.xlsx"))["Plan"]
    assert why in [c for row in sheet.iter_rows(values_only=True) for c in row]
    refused = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "2-6"])
    assert refused.exit_code == 2 and "locks 2 raters" in refused.output
    assert "freezes two pseudonymous rater IDs" in refused.output


def test_paired_headline_counts_cases(tmp_path):
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--statistic", "icc"])
    assert result.exit_code == 0, result.output
    assert re.search(r"^cheapest +\d+ raters x \d+ cases,", result.output, re.M)
    assert "  raters  cases  responses  width  ratings per dimension  meets" in result.output


@pytest.mark.parametrize("template,args,words", [
    ("anchored-plan", ["--above", "0.8"], "the default anticipated ICC 0.75: a lower limit "
     "at or above --above 0.8 needs an anticipated ICC above 0.8"),
    ("answer-review", ["--above", "0.8", "--expected", "0.75"], "--expected 0.75: a lower "
     "limit at or above --above 0.8 needs an anticipated Cohen's kappa above 0.8"),
    ("keep-known", ["--expected", "0"], "--expected 0: kappaSize's closed forms need an "
     "anticipated Cohen's kappa above 0"),
])
def test_an_anticipated_value_the_plan_cannot_use_is_said(template, args, words, tmp_path):
    folder = init_study(tmp_path / template, template=template)
    result = CliRunner().invoke(cli, ["plan", str(folder), *args])
    assert result.exit_code == 2 and words in " ".join(result.output.split()), result.output


def test_readme_plan_examples_run(tmp_path):
    """Every ``sheetflow plan my-study ...`` line of the README runs on a new study and
    finds a design (exit 0); the simulated ones with fewer studies, to stay quick."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    lines = re.findall(r"^\$ sheetflow plan my-study(.*)$", readme, re.M)
    assert len(lines) >= 4
    folder = init_study(tmp_path / "my-study")
    for line in lines:
        args = line.split("#")[0].split()
        quick = [] if "icc" in args else ["--simulations", "20", "--n-boot", "50"]
        result = CliRunner().invoke(cli, ["plan", str(folder), *args, *quick])
        assert result.exit_code == 0, (line, result.output)


def test_cohen_kappa_plan_refuses_other_rater_counts(tmp_path):
    """Cohen's kappa compares two raters: ``--raters 3`` planned 2 raters in silence;
    it is refused in one line (exit 2), and ``--raters 2`` still plans. (Protocol 003
    fixes two raters itself, tests/plan/test_plan_fixed_raters.py: the study here names
    no protocol.)"""
    folder = init_study(tmp_path / "ar", template="answer-review")
    toml = folder / "study.toml"
    toml.write_text(toml.read_text("utf-8").replace('protocol = "003 ', 'protocol = "'),
                    encoding="utf-8")
    refused = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "3"])
    assert refused.exit_code == 2
    assert refused.output == (
        "error: Cohen's kappa compares two raters: --raters 3 does not apply; plan the "
        "items (--items), or Fleiss' kappa for more raters (--statistic fleiss_kappa)\n")
    two = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "2", "--items", "50",
                                   "--simulations", "20"])
    assert two.exit_code in (0, 1) and "cohen_kappa" in two.output, two.output
    fleiss = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "3",
                                      "--statistic", "fleiss_kappa", "--json"])
    assert fleiss.exit_code in (0, 1), fleiss.output


def test_a_number_without_a_cap_is_named_as_such_not_as_no_rated_dimension(tmp_path):
    """002's material-error count lost its cap (any whole number 0 or more), so the plan
    has no values to model it on; --measure on it said it was 'not a rated dimension',
    which it is (analyze reports its alpha): the line says why it cannot be planned."""
    folder = init_study(tmp_path / "s", template="anchored-plan")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--measure", "material_errors"])
    assert result.exit_code == 2, result.output
    assert "not a rated dimension" not in result.output
    assert "'material_errors' is a number without a fixed set of values" in result.output


def test_a_person_rating_beside_the_judge_trio_is_not_called_a_judge(tmp_path):
    """check accepts a person rating beside protocol 004's mapped trio; the plan's
    designs count them (analyze's ICC takes every rater), but called them all judges:
    'ICC(A,1) of the locked 4 judges', 'Every design has 4 raters: ... a locked trio'."""
    folder = init_study(tmp_path / "s", template="judge-likert")
    with (folder / "raters.csv").open("a", encoding="utf-8") as fh:
        fh.write("R4,Ada,Nwosu,ada@example.org,primary\n")
    result = CliRunner().invoke(cli, ["plan", str(folder)])
    assert result.exit_code == 0, result.output
    assert "locked 4 judges" not in result.output
    assert "ICC(A,1) of the locked trio's 3 judges and 1 other rater" in result.output
    assert "a locked trio of judges, and 1 other rater rates beside them" in result.output
