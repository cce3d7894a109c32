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
    assert ("This study with the protocol's 2 raters (2 raters x 18 items): Cohen's "
            "kappa") in res.notes[0]
    assert "This study as specified" not in " ".join(res.notes)
    assert (f"Every design has 2 raters: {WHY}; plan the items (--items). This study lists "
            "3 raters, not the protocol's 2: it departs from the protocol's design."
            ) in res.notes


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


def _judge_likert(tmp_path, keep: str, *, mapped: bool = True):
    """The judge-likert template (protocol 004) listing the raters ``keep`` numbers
    ("14": the first judge and a person, R4, beside the trio); without its judge mapping
    if not ``mapped``."""
    folder = init_study(tmp_path / "jl", template="judge-likert")
    raters = folder / "raters.csv"
    lines = raters.read_text(encoding="utf-8").splitlines()
    lines.append("R4,Ada,Nwosu,ada@example.org,primary")
    kept = [lines[0], *(lines[int(i)] for i in keep)]
    raters.write_text("\n".join(kept) + "\n", encoding="utf-8")
    if not mapped:
        toml = folder / "study.toml"
        text = toml.read_text(encoding="utf-8")
        start = text.index("judges = {")
        toml.write_text(text[:start] + text[text.index("\n", start) + 1:], encoding="utf-8")
    return folder


def test_a_protocol_004_study_listing_one_judge_is_planned_at_the_trio(tmp_path):
    """One judge listed was planned at 2 raters, 'the locked 2 judges', and told 'Every
    design has 2 raters: protocol 004 scores with a locked trio of judges'."""
    result = CliRunner().invoke(cli, ["plan", str(_judge_likert(tmp_path, "1"))])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "has 2 raters" not in said and "locked 2 judges" not in said
    assert "cheapest 3 raters x 52 items" in said
    assert ("Planned: ICC(A,1) of the locked 3 judges on the total. This study with the "
            "protocol's 3 judges (3 raters x 12 items): the ICC") in said
    assert ("Every design has 3 raters: protocol 004 scores with a locked trio of judges; "
            "plan the items (--items). This study lists 1 judge, not the protocol's 3: it "
            "departs from the protocol's design.") in said


@pytest.mark.parametrize(("keep", "mapped", "raters", "lists"), [
    ("1234", False, 3, "4 judges"),  # every rater is a judge without the mapping: 4, not 3
    ("12", False, 3, "2 judges"),
    ("14", True, 4, "1 judge"),  # one mapped judge and a person beside the trio
])
def test_the_trio_is_the_protocols_whatever_the_study_lists(tmp_path, keep, mapped,
                                                            raters, lists):
    """Four unmapped judges were planned as 'the locked 4 judges', their designs all of
    4 raters, as if the protocol's."""
    res = plan_study(_judge_likert(tmp_path, keep, mapped=mapped))
    assert set(res.table["raters"]) == {raters}
    assert "of the locked 4 judges" not in res.notes[0]
    assert res.notes[0].startswith("Planned: ICC(A,1) of the locked 3 judges on the total"
                                   if raters == 3 else "Planned: ICC(A,1) of the locked "
                                   "trio's 3 judges and 1 other rater on the total")
    assert f"This study with the protocol's 3 judges ({raters} raters x 12 items)" \
        in res.notes[0]
    assert (f"This study lists {lists}, not the protocol's 3: it departs from the "
            "protocol's design.") in res.notes[-1]


def test_a_protocol_004_study_listing_its_trio_keeps_the_protocols_design(tmp_path):
    res = plan_study(_judge_likert(tmp_path, "1234"))  # the trio mapped, a person beside it
    assert set(res.table["raters"]) == {4}
    assert "This study as specified (4 raters x 12 items)" in res.notes[0]
    assert not any("departs from the protocol's design" in n for n in res.notes)
