"""plan on a study mid-way: every template, its packs returned and collected, plans
with the study's own ratings as the pilot."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from roundtrip_helpers import return_every_pack

from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.packs import generate_packs
from sheetflow.plan.inputs import study_measure
from sheetflow.spec import init_study, list_templates
from sheetflow.spec.study import load_study

SECRET = bytes(range(32))

# the templates whose collected packs hold no unit rated twice: keep-known's second
# sitting and anchored-plan's second rater come later, so plan assumes the default
# value and says why
NO_PILOT_YET = {"anchored-plan", "keep-known"}
# the answers filled in are not meant to agree: answer-review's fall below chance,
# which kappaSize's closed forms cannot plan from, so plan says so (on a nominal column:
# its ordinal first column's weighted kappa is simulated, which plans from any pilot)
BELOW_CHANCE = {"answer-review": ["--measure", "citation_quality"]}


@pytest.mark.parametrize("template", sorted(list_templates()))
def test_plan_reads_each_templates_own_ratings_as_the_pilot(template, tmp_path):
    """Mid-study, plan reads the collected ratings as its pilot. The judge-likert total
    is the mean of six 1-5 scores, yet its values were taken for 1..5 alone: the first
    mean between them (2.67) stopped plan with "is not a value of 'overall'"."""
    folder = init_study(tmp_path / template, template=template)
    generate_packs(folder, secret=SECRET)  # the same packs, so the same answers, each run
    return_every_pack(folder)
    collect(folder)
    quick = ["--simulations", "20", "--n-boot", "40"]
    result = CliRunner().invoke(cli, ["plan", str(folder), *quick])
    if template in BELOW_CHANCE:
        assert result.exit_code == 0, result.output  # the weighted kappa, simulated
        assert "source     pilot out/ratings.csv" in result.output, result.output
        quick += BELOW_CHANCE[template]
        result = CliRunner().invoke(cli, ["plan", str(folder), *quick])
    if template in NO_PILOT_YET:
        assert result.exit_code == 0, result.output
        assert "(the default: out/ratings.csv has no unit with two or more ratings of " \
            in result.output, result.output
    elif template in BELOW_CHANCE:
        assert result.exit_code == 2, result.output
        assert "at or below chance" in result.output, result.output
        result = CliRunner().invoke(cli, ["plan", str(folder), "--expected", "0.75", *quick])
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 0, result.output
        assert "source     pilot out/ratings.csv" in result.output, result.output
    assert "cheapest   " in result.output.splitlines()[-1]


def test_a_mean_total_takes_each_sum_over_its_dimension_count(tmp_path):
    measure = study_measure(load_study(init_study(tmp_path / "jl", "judge-likert")))
    assert measure.id == "overall" and len(measure.domain) == 6 * 4 + 1
    assert measure.domain[0] == 1 and measure.domain[-1] == 5
    assert measure.domain[10] == pytest.approx(16 / 6)


def test_a_pilot_below_chance_is_refused_naming_it_and_the_way_on(tmp_path):
    """kappaSize stopped with "kappa0 must lie within (0, 1).", naming neither the
    pilot nor what to do."""
    folder = init_study(tmp_path / "ar", template="answer-review")
    pilot = tmp_path / "pilot.csv"
    answers = ("Good", "Poor")
    rows = [f"u{i},{rater},{answers[(i + k) % 2]}" for i in range(20)
            for k, rater in enumerate("ab")]  # always apart
    pilot.write_text("unit,rater,value\n" + "\n".join(rows) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--pilot", str(pilot),
                                      "--measure", "citation_quality"])  # nominal: closed
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        "error: pilot pilot.csv: its alpha is -0.950, at or below chance, and kappaSize's "
        "closed forms need an anticipated Cohen's kappa above 0; give --expected (e.g. "
        "0.75), or plan by --method simulate"), result.output
