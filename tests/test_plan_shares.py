"""--shares that put every rating on one value: no study varies, so agreement is
undefined in every simulated study. plan printed "an interval about nan wide (roughly
nan to nan)" and, with --above, stopped on its chart saying to free some space."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec import init_study


@pytest.mark.parametrize("target", [[], ["--above", "0.5"]])
def test_shares_on_one_value_are_refused_in_one_line(tmp_path, target):
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    result = CliRunner().invoke(cli, [
        "plan", str(folder), "--measure", "depth", "--expected", "0.7", "--shares",
        "0,1,0,0", "--raters", "2", "--items", "10", "--simulations", "20", "--n-boot",
        "40", *target])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        "error: --shares 0,1,0,0: every rating would be the same value of 'depth', so "
        "agreement is undefined in every study; give two or more values a share above 0")
    assert not (folder / "out" / "plan.xlsx").exists()


def test_one_share_for_a_measure_of_several_values_is_said_in_the_singular(tmp_path):
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    result = CliRunner().invoke(cli, [
        "plan", str(folder), "--measure", "depth", "--expected", "0.7", "--shares", "1",
        "--raters", "2", "--items", "10", "--simulations", "20", "--n-boot", "40"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --shares gives 1 share; 'depth' has "), \
        result.output
