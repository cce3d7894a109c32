"""Which arm is ahead, and whether that is shown: the ``arms`` line never overstates.

- Equal mean totals name no winner, even when the two means, summed in another
  order, differ in the last bit (the arm ahead was decided by rounding noise).
- A difference whose interval includes 0 is named with "not shown to differ", on the
  command's line, in ``summary.json`` (``shown``) and on the Summary sheet.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from sheetflow.analysis.decision import Arms
from sheetflow.analysis.p000_paired_rubric import _arms


def _ctx(first: list[float], second: list[float]) -> SimpleNamespace:
    cases = [f"C{i:02d}" for i in range(len(first))]
    table = pd.DataFrame({"case": cases * 2, "arm": ["a"] * len(first) + ["b"] * len(second),
                          "value": first + second})
    study = SimpleNamespace(design=SimpleNamespace(arms=[SimpleNamespace(id="a"),
                                                         SimpleNamespace(id="b")]),
                            rubric=SimpleNamespace(totals=[SimpleNamespace(id="total")]))
    return SimpleNamespace(study=study, numeric=lambda _total: table)


def test_equal_means_name_no_winner_whatever_the_rounding() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):  # per-case means of 7 raters: sevenths, in two orders
        first = (rng.integers(0, 30, 18) / 7).tolist()
        second = rng.permutation(first).tolist()
        if pd.Series(first).mean() != pd.Series(second).mean():
            break
    else:
        pytest.fail("no pair of orders whose means differ in the last bit")
    arms = _arms(_ctx(first, second), {})
    assert arms.winner == "" and arms.note == "the two arms' mean totals are equal"
    assert arms.sentence() == "no arm ahead (the two arms' mean totals are equal)"


def test_a_real_difference_still_names_its_arm() -> None:
    first = [10.0, 12.0, 11.0, 13.0, 12.0, 14.0, 11.0, 12.0]
    arms = _arms(_ctx(first, [v + 2.0 for v in first]), {})
    assert arms.winner == "b" and arms.effect == pytest.approx(2.0)
    assert arms.shown() is True and "not shown" not in arms.sentence()


def _arms_with(ci: list[float] | None, p: float | None) -> Arms:
    return Arms(winner="improved", other="baseline", effect=0.833,
                effect_measure="mean total difference per case", ci=ci, p=p,
                test="Wilcoxon signed-rank (two-sided)",
                means={"improved": 17.778, "baseline": 16.944}, means_label="mean total")


@pytest.mark.parametrize(("ci", "p", "shown", "said"), [
    ([-1.299, 2.965], 0.405, False, "improved ahead of baseline (not shown to differ: the "
                                    "interval includes 0): "),
    ([0.2, 1.4], 0.03, True, "improved ahead of baseline: "),
    (None, 0.405, False, "improved ahead of baseline (not shown to differ: p = 0.405): "),
    (None, 0.01, True, "improved ahead of baseline: "),
    (None, None, None, "improved ahead of baseline: "),
])
def test_a_difference_not_shown_is_said_to_be_so(ci, p, shown, said) -> None:
    arms = _arms_with(ci, p)
    assert arms.shown() is shown
    assert arms.sentence().startswith(said)
    assert arms.to_dict()["shown"] is shown


@pytest.mark.parametrize(("ci", "p", "said"), [
    ([0.5, 1.2], 0.00004, "Wilcoxon signed-rank (two-sided) p < 0.001"),
    ([0.5, 1.2], 0.0312, "Wilcoxon signed-rank (two-sided) p = 0.0312"),
    (None, 0.00004, "Wilcoxon signed-rank (two-sided) p < 0.001"),
])
def test_a_small_p_reads_p_below_not_p_equals_below(ci, p, said) -> None:
    """"p = < 0.001" says two things at once; the sentence says "p < 0.001"."""
    sentence = _arms_with(ci, p).sentence()
    assert said in sentence and "p = <" not in sentence


@pytest.mark.parametrize(("p", "said"), [
    (0.00004, "p < 0.001"), (0.0953, "p = 0.0953"), (float("nan"), "p = n/a"),
    (0.04996, "p = 0.04996"),
])
def test_p_said_puts_a_p_value_in_a_sentence(p, said) -> None:
    from sheetflow.words import p_said
    assert p_said(p, [0.05]) == said


@pytest.mark.parametrize(("ci", "p", "shown", "said"), [
    # the decision's test decides, whatever the interval says
    ([-0.028, 0.522], 0.0279, True, "improved ahead of baseline: "),
    ([0.009, 0.520], 0.0608, False, "improved ahead of baseline (not shown to differ: "
                                    "permutation p = 0.0608, not below 0.05): "),
    ([0.009, 0.520], 0.05, False, "improved ahead of baseline (not shown to differ: "
                                  "permutation p = 0.0500, not below 0.05): "),
    ([0.009, 0.520], None, None, "improved ahead of baseline: "),
])
def test_a_difference_decided_by_a_test_is_shown_by_that_test(ci, p, shown, said) -> None:
    """Where the decision rests on a test against alpha (001's permutation p), "shown"
    is that test: p strictly below alpha, the interval shown beside it as it is."""
    arms = _arms_with(ci, p)
    arms.alpha, arms.p_of = 0.05, "permutation"
    assert arms.shown() is shown and arms.to_dict()["shown"] is shown
    assert arms.sentence().startswith(said)
