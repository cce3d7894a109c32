"""A pilot value off the measure's scale: named by its file and line, with the values
allowed in few words."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.errors import SpecError
from sheetflow.plan.inputs import read_pilot_csv, study_measure
from sheetflow.spec import init_study
from sheetflow.spec.study import load_study


def test_a_pilot_value_off_the_scale_is_named_by_its_line_in_few_words(tmp_path):
    """A 0-100 pilot of judge-likert's mean of six 1-5 scores listed 25 raw floats
    ("1.0, 1.1666666666666667, ...") and no line."""
    folder = init_study(tmp_path / "jl", template="judge-likert")
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("unit,rater,value\nu1,a,3\nu1,b,4\nu2,a,55\nu2,b,60\n", "utf-8")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--pilot", str(pilot)])
    code, said = result.exit_code, " ".join(result.output.split())
    assert code == 1 and said == (
        f"error: {pilot}: line 4: value '55' (unit u2, rater a) is not a value of "
        "'overall'; allowed: 1 to 5 in sixths; give the pilot's ratings on the "
        "measure's scale"), said
    measure = study_measure(load_study(folder))
    ratings = tmp_path / "ratings.csv"  # sheetflow's own ratings table, by its line too
    ratings.write_text("rater_id,case_id,dimension,value\nr1,c1,overall,3\n"
                       "r1,c1,other,70\nr2,c1,overall,70\n", "utf-8")
    with pytest.raises(SpecError, match=r"ratings.csv: line 4: value '70' \(unit c1, rater "
                                        r"r2\)"):
        read_pilot_csv(ratings, measure)


@pytest.mark.parametrize("domain,said", [
    ((0, 1, 2), "0, 1, 2"),
    (("Yes", "No"), "Yes, No"),
    (tuple(range(101)), "the whole numbers 0 to 100"),
    (tuple(s / 6 for s in range(6, 31)), "1 to 5 in sixths"),
    (tuple(s / 12 for s in range(0, 25)), "0 to 2 in steps of 1/12"),
    ((0, 2, 4, 5, 7, 9, 11, 20), "8 values from 0 to 20 (0, 2, 4, ..., 20)"),
])
def test_a_measure_values_are_said_compactly(domain, said):
    from sheetflow.plan.inputs import values_text

    assert values_text(domain) == said
    assert not re.search(r"\d\.\d{4}", values_text(domain))
