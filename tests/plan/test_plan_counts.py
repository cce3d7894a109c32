"""Rater and item counts no design can use are refused in one line naming the option
and the range it takes, the same bounds for every statistic: two raters (agreement),
two items (an interval), at most what a study holds."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec import init_study


@pytest.mark.parametrize("args,words", [
    (["--raters", "1-2"], "--raters 1: give counts from 2 to 1,000 (agreement needs at "
     "least 2 raters; a study holds at most 1,000)"),
    (["--raters", "0"], "--raters 0: give counts from 2 to 1,000"),
])
def test_counts_no_design_can_use_name_the_option_and_range(args, words, tmp_path):
    """``--raters 1-2`` was refused by the ICC's formula, in words naming no option."""
    folder = init_study(tmp_path / "ap", template="anchored-plan")
    result = CliRunner().invoke(cli, ["plan", str(folder), *args])
    assert result.exit_code == 2
    assert words in " ".join(result.output.split()), result.output


def test_an_item_count_below_two_names_the_option(tmp_path):
    folder = init_study(tmp_path / "kk", template="answer-review")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--items", "1"])
    assert result.exit_code == 2
    assert "--items 1: give counts from 2 to 10,000 (an interval needs at least 2 items;" \
        in " ".join(result.output.split()), result.output


def test_one_validator_beside_protocol_000s_internal_team_is_a_design(tmp_path):
    """Protocol 000's alpha counts the internal team's totals as one more rater
    (sections 4.1-4.2), so --raters counts validators: one validator and the team are
    the two raters alpha needs (--raters 1 was refused as 'agreement needs at least 2
    raters')."""
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "1", "--items", "18",
                                      "--simulations", "20", "--n-boot", "100", "--width",
                                      "0.9"])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.output.splitlines()
            if line.startswith("  ") and line.split()[0].isdigit()]
    assert {row[0] for row in rows} == {"1", "3"}  # the study's own 3 beside it
    assert "cheapest   1 validator plus the internal team x 18 cases" in result.output


@pytest.mark.parametrize("args", [["--statistic", "icc"], ["--measure", "depth"]])
def test_one_validator_without_the_team_is_still_refused(args, tmp_path):
    """The ICC and a dimension's alpha are computed on the validators alone: one is
    no agreement."""
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "1", *args])
    assert result.exit_code == 2
    assert "--raters 1: give counts from 2 to 1,000 (agreement needs at least 2 raters" \
        in " ".join(result.output.split()), result.output
