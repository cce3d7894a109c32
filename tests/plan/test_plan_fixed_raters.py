"""Protocol 003 adds one second rater to the first: two raters, a count the plan keeps
as it keeps 002's two and 004's trio, whatever the statistic."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.plan import plan_study
from sheetflow.spec import init_study

WHY = ("protocol 003 adds one second rater to the first (\"this half-hour is what makes "
       "the reliability figure in the study computable at all\")")


def test_fleiss_kappa_for_protocol_003_plans_its_two_raters(tmp_path):
    """--statistic fleiss_kappa offered 3 to 6 raters, its cheapest 3 raters x 75 items,
    with no word that 003 has two."""
    folder = init_study(tmp_path / "ar", template="answer-review")
    res = plan_study(folder, statistic="fleiss_kappa")
    assert set(res.table["raters"]) == {2}
    assert f"Every design has 2 raters: {WHY}; plan the items (--items)." in res.notes
    assert res.chosen()["raters"] == 2


def test_more_raters_for_protocol_003_are_refused_naming_why(tmp_path):
    """For Cohen's kappa (003's own statistic) the refusal advised Fleiss' kappa for more
    raters, which the protocol's two rule out as well."""
    folder = init_study(tmp_path / "ar", template="answer-review")
    for args in ([], ["--statistic", "fleiss_kappa"]):
        result = CliRunner().invoke(cli, ["plan", str(folder), "--raters", "3", *args])
        assert result.exit_code == 2, result.output
        assert (f"error: the protocol locks 2 raters ({WHY}): --raters 3 does not apply; "
                "plan the items (--items)") in " ".join(result.output.split())


def test_a_protocol_003_study_listing_three_raters_is_planned_at_two(tmp_path):
    """Three raters listed made the plan Fleiss' kappa over 3 to 6 raters, and called
    its design the study as specified."""
    folder = init_study(tmp_path / "ar", template="answer-review")
    with (folder / "raters.csv").open("a", encoding="utf-8") as raters:
        raters.write("rater3,Reviewer Three,Okafor,rev3@example.org,primary\n")
    res = plan_study(folder, expected=0.7, simulations=20)
    assert res.statistic == "cohen_kappa" and set(res.table["raters"]) == {2}
    assert ("This study at the protocol's rater count (2 raters x 18 items; it lists 3 "
            "raters): Cohen's kappa") in res.notes[0]
    assert "This study as specified" not in " ".join(res.notes)


@pytest.mark.parametrize("template", ["paired-rubric", "keep-known"])
def test_protocols_fixing_no_rater_count_are_not_locked(template, tmp_path):
    folder = init_study(tmp_path / template, template=template)
    quick = dict(simulations=10, n_boot=20, items=[18]) if template == "paired-rubric" \
        else {}
    res = plan_study(folder, expected=0.7, **quick)
    assert not any(n.startswith("Every design has") for n in res.notes)


def test_cohen_kappa_for_protocol_004s_trio_is_refused(tmp_path):
    """--statistic cohen_kappa planned 2 judges for 004 and said "Every design has 2
    raters: protocol 004 scores with a locked trio of judges"."""
    folder = init_study(tmp_path / "jl", template="judge-likert")
    result = CliRunner().invoke(cli, ["plan", str(folder), "--statistic", "cohen_kappa",
                                      "--measure", "completeness"])
    assert result.exit_code == 2, result.output
    assert ("error: Cohen's kappa compares two raters, and the protocol locks 3 (protocol "
            "004 scores with a locked trio of judges): plan Fleiss' kappa (--statistic "
            "fleiss_kappa), alpha or the ICC") in " ".join(result.output.split())
    assert not (folder / "out" / "plan.xlsx").exists()
