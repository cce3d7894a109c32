"""The study's own ratings as the pilot, mid-study: what plan says of them.

The demo (4 raters x 18 cases) with two returns collected: the source line says the
pilot holds 2 of the 4 raters so far and, with the internal team's totals as one more
rater of the total, "3 values per unit" (not "3-3"); and plan,
which reads these ratings unblinded with the key, names a bad rating by its case and
rater, never by the unit that carries its arm.
"""

from __future__ import annotations

import pytest

from sheetflow.errors import SpecError
from sheetflow.plan import plan_study
from sheetflow.plan.inputs import pilot_from_study, pilot_source, study_measure
from sheetflow.spec.study import load_study


@pytest.fixture(scope="module")
def half_returned(tmp_path_factory):
    """The demo (4 raters x 18 cases) with only the first two returns collected."""
    from sheetflow.collect.run import collect
    from sheetflow.demo.run import run_demo

    folder = run_demo(tmp_path_factory.mktemp("half") / "demo").folder
    for path in sorted((folder / "returns").iterdir())[2:]:
        path.unlink()
    collect(folder)
    return folder


def test_a_pilot_of_part_of_the_panel_says_so(half_returned):
    result = plan_study(half_returned, raters=[2], items=[18], simulations=20, n_boot=50)
    # the internal team is one more rater of the total, as the decision's alpha counts it
    assert result.source.startswith(
        "pilot out/ratings.csv (2 of 4 raters so far; the 2 validators and the internal "
        "team's totals as one more rater, as analyze's alpha on 'total' counts them): 36 "
        "units, 3 values per unit, alpha ")


def test_no_pilot_message_says_which_arm_a_rating_went_to(half_returned):
    """The study's own unblinded units are "case|arm": a value the measure does not
    have is named by its case and rater only."""
    study = load_study(half_returned)
    m = study_measure(study, "total")
    rows = pilot_from_study(half_returned, study, m)
    arms = {unit.split("|")[1] for unit in rows["unit"]}
    assert arms == {arm.id for arm in study.design.arms}
    rows.loc[rows.index[0], "value"] = "999"
    with pytest.raises(SpecError) as err:
        pilot_source(rows, m, "pilot out/ratings.csv")
    case = rows["case"].iloc[0]
    assert f"case {case}, rater {rows['rater'].iloc[0]}" in str(err.value)
    assert not any(arm in str(err.value) for arm in arms)
