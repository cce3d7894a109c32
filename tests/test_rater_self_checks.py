"""The rater self-checks of protocol 000 section 3.1 as collect warns of them: a share
shown in a warning stays on its side of the bar it is read against."""

from __future__ import annotations

from pathlib import Path

import pytest
from plant_helpers import KEEP, plant, study_from

from sheetflow.collect.content_checks import EXTREME_SHARE, SelfCheckInput, self_checks
from sheetflow.collect.run import collect


def _confidence_warning(n_high: int, n: int) -> str:
    data = SelfCheckInput(confidences=["Medium"] * n_high + ["Low"] * (n - n_high),
                          confidence_target=0.70)
    (found,) = self_checks(data, file="f.xlsx", rater="R1")
    assert found.code == "confidence-low-share"
    return found.message


@pytest.mark.parametrize(("n_high", "n", "shown"), [(125, 179, "69.8%"), (139, 200, "69.5%"),
                                                    (1, 2, "50.0%")])
def test_a_confidence_share_below_the_target_never_reads_as_the_target(n_high, n, shown):
    message = _confidence_warning(n_high, n)
    assert message.startswith(f"Only {shown} of confidence ratings are Medium or High "
                              "(target 70.0%).")


def test_a_share_a_hair_under_the_target_gets_the_decimals_it_needs():
    # 6999 of 10000: 69.99%, which one decimal would show as the target itself
    assert _confidence_warning(6999, 10000).startswith("Only 69.99% of")


def _extreme_warning(n_extreme: int, n: int) -> str:
    data = SelfCheckInput(totals=[0.0] * n_extreme + [12.0] * (n - n_extreme),
                          total_range=(0, 20), extreme_low_max=5, extreme_high_min=18)
    (found,) = self_checks(data, file="f.xlsx", rater="R1")
    assert found.code == "totals-many-extreme"
    return found.message


def test_an_extreme_share_just_over_the_bar_is_not_shown_as_the_bar():
    # 1001 of 4000 = 25.025%: over the bar; one decimal would show 25.0%
    assert EXTREME_SHARE == 0.25
    message = _extreme_warning(1001, 4000)
    assert not message.startswith("25.0% ") and message.startswith("25.02")
    assert _extreme_warning(7, 20).startswith("35.0% of totals are extreme (0-5 or 18-20")


def test_the_extreme_share_warning_states_sheetflows_own_bar():
    """The protocol says only "rare": the 25% is sheetflow's, and is said where it acts."""
    assert _extreme_warning(7, 20).startswith(
        "35.0% of totals are extreme (0-5 or 18-20; sheetflow warns above 25.0%); extreme "
        "totals should be rare.")
    at_the_bar = SelfCheckInput(totals=[0.0] * 5 + [12.0] * 15, total_range=(0, 20),
                                extreme_low_max=5, extreme_high_min=18)
    assert not self_checks(at_the_bar, file="f.xlsx", rater="R1")  # 25% exactly: no warning
    docs = (Path(__file__).parents[1] / "docs" / "issue-codes.md").read_text(encoding="utf-8")
    assert f"more than {EXTREME_SHARE:.0%} of a rater's totals are extreme" in " ".join(
        docs.split())


def test_collect_warns_of_125_of_179_as_69_8_percent(tmp_path: Path):
    """End to end: a return with 125 Medium and 54 Low confidences (one left blank)."""
    root = study_from("paired-rubric", tmp_path / "study")
    given: dict[str, int] = {}

    def answer(cell):
        if cell["part"] != "confidence" or cell["rater"] != "EV-01":
            return KEEP
        n = given[cell["rater"]] = given.get(cell["rater"], 0) + 1
        return None if n == 180 else "Medium" if n <= 125 else "Low"

    plant(root, answer)
    result = collect(root)
    (warning,) = [i for i in result.report.issues
                  if i.code == "confidence-low-share" and i.rater == "EV-01"]
    assert warning.message.startswith("Only 69.8% of confidence ratings are Medium or High "
                                      "(target 70.0%).")


def test_a_margin_and_a_share_at_their_bars_up_to_rounding_are_at_them():
    """Read as the Summary reads a figure (:func:`sheetflow.words.settled`): two mean
    totals 3 apart (16/3 and 7/3) differ by 2.9999999999999996 in floats, which was
    under the 3 points that make a contrary direction suspicious, so no warning; a
    share of 2/3 was under a target of 0.666666666666667, 4e-16 above it."""
    margin = 16 / 3 - 7 / 3
    assert margin < 3.0  # the noise the check must see through
    data = SelfCheckInput(directions=[("c1", "B>A", margin)],
                          confidences=["Medium", "High", "Low"],
                          confidence_target=0.666666666666667)
    (found,) = self_checks(data, file="f.xlsx", rater="R1")
    assert found.code == "direction-inconsistent"
    assert "A scored 3 points higher (at least 3)" in found.message, found.message
