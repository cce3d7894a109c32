"""What plan says of a lower-bound target met by a closed form (--above without a
simulation): the formula's item count, never a share of simulated studies, which a
closed form does not have ("clears 0.6 in nan% of simulated studies")."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.plan import Target, plan_study
from sheetflow.plan.sim_error import figure_text
from sheetflow.spec import init_study


@pytest.fixture
def paired(tmp_path):
    return init_study(tmp_path / "pr", template="paired-rubric")


@pytest.mark.parametrize("statistic, measure", [("icc", "total"), ("fleiss_kappa", "depth")])
def test_the_cheapest_closed_form_design_says_what_its_formula_gives(paired, statistic,
                                                                     measure):
    result = CliRunner().invoke(cli, ["plan", str(paired), "--statistic", statistic,
                                      "--measure", measure, "--expected", "0.8",
                                      "--above", "0.6", "--raters", "3"])
    assert result.exit_code == 0, result.output
    assert "nan" not in result.output and "simulated studies" not in result.output
    last = result.output.rstrip().splitlines()[-1]
    data = json.loads(CliRunner().invoke(cli, [
        "plan", str(paired), "--statistic", statistic, "--measure", measure, "--expected",
        "0.8", "--above", "0.6", "--raters", "3", "--json"]).output)
    need = data["designs"][0]["items_needed"]
    assert last.startswith(f"cheapest   3 raters x {data['items']} cases, expected width ")
    assert (f"by the formula its lower limit clears 0.6 with probability 0.8 or more "
            f"({need} cases needed; no simulated share)") in last


def test_a_closed_form_design_short_of_its_item_count_is_said_to_fall_short(paired):
    plan = plan_study(paired, statistic="icc", expected=0.8, raters=[2], items=[10],
                      target=Target(edge=0.6))
    row = plan.table[plan.table["items"] == 10].iloc[0].to_dict()
    assert figure_text(plan.target, row, "cases") == (
        "by the formula its lower limit clears 0.6 with probability 0.8 only from 25 "
        "cases (no simulated share)")
