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
