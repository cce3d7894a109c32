"""plan after a collect whose ratings hold no unit rated twice (no return yet, or one
rater's): the study's own ratings cannot be a pilot, so plan assumes the default
anticipated value and says why in its source line, as before any collect; it stopped
with exit 2 ("no unit has two or more ratings ... give --expected"). A pilot asked for
by name (--pilot) is still refused when it has no such unit."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.packs import generate_packs
from sheetflow.spec import init_study

QUICK = ["--simulations", "20", "--n-boot", "40", "--raters", "3", "--items", "18,400"]


@pytest.fixture
def collected_nothing(tmp_path):
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    generate_packs(folder, secret=bytes(range(32)))
    collect(folder)  # no return yet: out/ratings.csv holds no rating
    assert (folder / "out" / "ratings.csv").exists()
    return folder


def test_plain_plan_assumes_the_default_and_says_why(collected_nothing):
    result = CliRunner().invoke(cli, ["plan", str(collected_nothing), *QUICK])
    assert result.exit_code == 0, result.output
    assert ("source     assumed alpha 0.75 (the default: out/ratings.csv has no unit with "
            "two or more ratings of 'total' yet, 0 of 3 raters so far; give --expected or "
            "--pilot), equal shares of 21 values") in result.output.splitlines()


def test_the_ratings_named_as_the_pilot_are_still_refused(collected_nothing):
    own = collected_nothing / "out" / "ratings.csv"
    result = CliRunner().invoke(cli, ["plan", str(collected_nothing), "--pilot", str(own),
                                      *QUICK])
    assert result.exit_code == 2, result.output
    assert "no unit has two or more ratings of 'total'" in result.output
