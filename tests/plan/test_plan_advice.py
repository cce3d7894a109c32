"""What a plan advises beyond its table: the options it names are ones that apply, a
band-wide interval is not called a decided band, a protocol's fixed item count is said,
and the docs say what an ICC plan takes."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.plan import Target, plan_study
from sheetflow.spec import init_study
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import data_dir

FAST = ["--simulations", "20", "--n-boot", "50"]


def _plan(folder: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["plan", str(folder), *args])
    return result.exit_code, " ".join(result.output.split())  # notes wrap on screen


@pytest.mark.parametrize("template,args", [
    ("judge-likert", ["--expected", "0.85", "--assurance", "0.5", "--items", "20"]),
    ("anchored-plan", ["--items", "20"]),
    ("keep-known", ["--items", "20,40"]),
])
def test_a_locked_rater_count_is_not_advised_to_change(template, args, tmp_path):
    """The headline said "try more items (--items) or raters (--raters)" where --raters
    is refused: the protocol locks the raters, or one rater's two sittings are compared."""
    code, said = _plan(init_study(tmp_path / template, template=template), *args)
    assert code == 1, said
    assert said.endswith("no design of the grid meets the target: try more items (--items)")
    assert "--raters" not in said and "or raters" not in said


def test_a_free_rater_count_is_still_advised(tmp_path):
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    code, said = _plan(folder, "--statistic", "icc", "--raters", "2", "--items", "10")
    assert code == 1, said
    assert said.endswith("try more items (--items) or raters (--raters)")


def test_the_grid_note_names_only_items_where_the_raters_are_fixed(tmp_path):
    """The note where no design of the grid clears an edge ended "try more items
    (--items) or raters." for one rater's two sittings too."""
    folder = init_study(tmp_path / "kk", template="keep-known")
    res = plan_study(folder, method="simulate", expected=0.75, items=[10], simulations=20,
                     n_boot=50, target=Target(edge=0.6))
    note = next(n for n in res.notes if n.startswith("No "))
    assert note.endswith("try more items (--items).") and "raters" not in note.split(";")[1]


def test_the_searched_count_missing_names_raters_only_where_they_are_free():
    from sheetflow.plan.notes import _more_needed

    assert "--raters" not in _more_needed(SimpleNamespace(raters_fixed=True))
    assert "--items" in _more_needed(SimpleNamespace(raters_fixed=True))
    assert "more raters (--raters)" in _more_needed(SimpleNamespace(raters_fixed=False))


def test_a_band_wide_interval_is_not_called_a_decided_band(tmp_path):
    """"About 200 cases ... would make the interval fit within one band, so the band
    decision is reliable": a median width of one band fits in a band only when the
    estimate lands near its middle (such a design clears 0.70 in about half of its
    studies); the note says so and names --above."""
    folder = init_study(tmp_path / "pr", template="paired-rubric")
    res = plan_study(folder, expected=0.75, raters=[3], items=[18, 200], simulations=20,
                     n_boot=50)
    note = next(n for n in res.notes if n.startswith("About "))
    assert "would make the interval narrow enough to fit within one band when centred " \
           "in it (the chance that the interval clears a band's edge is planned with " \
           "--above EDGE)" in note
    assert "reliable" not in " ".join(res.notes)


@pytest.mark.parametrize("template,word,source,why", [
    ("paired-rubric", "cases", "its items file", "protocol 000 has 18 test cases"),
    ("keep-known", "repeated items", "its [design.repeats] count",
     "protocol 001's second sitting re-scores 30 items"),
    ("answer-review", "items", "its items file", "protocol 003's second rater rates 18 items"),
    ("judge-likert", "items", "its items file", "protocol 004's pilot has 12 records"),
])
def test_a_protocol_that_fixes_the_items_is_said_with_the_width_at_its_count(
        template, word, source, why, tmp_path):
    """The plan asked for 120 or 200 items where the protocol fixes 18 (or 30, or 12)
    and said nothing of it; the note gives the study's own count and its width."""
    folder = init_study(tmp_path / template, template=template)
    quick = dict(simulations=20, n_boot=50, raters=[3]) if template == "paired-rubric" \
        else {}
    res = plan_study(folder, **quick)
    own = res.table[~res.table["meets"]]
    n = 30 if template == "keep-known" else len(load_study(folder).items)
    row = own[own["items"] == n].iloc[0]
    note = next(x for x in res.notes if x.startswith("The protocol fixes"))
    assert note.startswith(f"The protocol fixes the number of {word}: {why}")
    assert (f"This study has {n} ({source}); at {n} {word} the expected width is "
            f"{row['expected_width']:.3f}. The cheapest design meeting the target (") in note
    # where the cheapest design departs, the one note says so, and the protocol's count
    # and why are said once: a second note repeated both, after "more would depart"
    best = res.chosen()
    assert (f"x {best['items']} {word}) has more {word} than the protocol's "
            f"{res.table['items'][res.table['note'] == ''].iloc[0]}, so it is not the "
            f"protocol's design. No design of the grid with ") in note, note
    said = " ".join(res.notes)
    assert said.count(why) == 1 and "would depart" not in said, res.notes


def test_the_fixed_items_note_reads_the_study_own_count(tmp_path):
    """The count is the items file's, not a constant: a judge-likert study of 8 records."""
    folder = tmp_path / "jl"
    shutil.copytree(data_dir("templates") / "judge-likert", folder)
    items = pd.read_csv(folder / "items.csv", dtype=str, keep_default_na=False)
    items.head(8).to_csv(folder / "items.csv", index=False)
    res = plan_study(folder)
    note = next(x for x in res.notes if x.startswith("The protocol fixes"))
    assert ("This study has 8 (its items file), fewer than the protocol's 12; at 8 items "
            "the expected width") in note
    assert "depart" not in note  # more items would bring 8 towards the protocol's 12


def test_a_study_with_more_items_than_the_protocol_is_not_told_more_would_depart(tmp_path):
    """A judge-likert study of 14 records (the protocol fixes 12) was told "More items
    would depart from the protocol", as if its own 14 kept it."""
    folder = tmp_path / "jl"
    shutil.copytree(data_dir("templates") / "judge-likert", folder)
    items = pd.read_csv(folder / "items.csv", dtype=str, keep_default_na=False)
    extra = items.head(2).assign(response_id=["R13", "R14"])
    pd.concat([items, extra]).to_csv(folder / "items.csv", index=False)
    note = next(x for x in plan_study(folder).notes if x.startswith("The protocol fixes"))
    assert ("This study has 14 (its items file), more than the protocol's 12; at 14 items "
            "the expected width") in note
    assert "would depart" not in note, note


@pytest.mark.parametrize("template,args", [
    ("anchored-plan", []),  # protocol 002 fixes no item count
    ("judge-likert", ["--width", "0.5"]),  # the study's own 12 meet the target
])
def test_no_fixed_items_note_where_none_applies(template, args, tmp_path):
    code, said = _plan(init_study(tmp_path / template, template=template), *args)
    assert code in (0, 1) and "note: Planned: " in said, said
    assert "The protocol fixes the number" not in said, said


def test_an_icc_plan_takes_a_pilot_as_the_docs_say(tmp_path):
    """docs/plan.md said "An ICC plan takes --expected, not a pilot", while a pilot's
    alpha is taken as the anticipated ICC."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "plan.md").read_text("utf-8")
    assert "not a\npilot" not in docs and "not a pilot" not in " ".join(docs.split())
    assert "An ICC plan takes `--expected`, or a pilot" in " ".join(docs.split())
    folder = init_study(tmp_path / "ap", template="anchored-plan")
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("unit,rater,value\nu1,a,30\nu1,b,40\nu2,a,55\nu2,b,60\nu3,a,20\n"
                     "u3,b,25\nu4,a,80\nu4,b,70\n", encoding="utf-8")
    code, said = _plan(folder, "--pilot", str(pilot))
    assert code == 0 and "taken as the anticipated ICC" in said, said


def test_the_fixed_items_note_does_not_round_a_miss_onto_the_target(tmp_path):
    """keep-known at an expected kappa of 0.95 and a target width of 0.3: 30 repeated
    items give 0.301, and the note said "the expected width is 0.30", which reads as
    the target met where the table says it is not."""
    folder = init_study(tmp_path / "kk", template="keep-known")
    res = plan_study(folder, expected=0.95, target=Target(width=0.3))
    row = res.table[res.table["items"] == 30].iloc[0]
    assert not row["meets"] and row["expected_width"] > 0.3
    note = next(x for x in res.notes if x.startswith("The protocol fixes"))
    assert f"the expected width is {row['expected_width']:.3f}." in note, note
    assert "the expected width is 0.30." not in note


def test_a_kappa_row_within_the_width_below_kappasize_floor_is_explained(tmp_path):
    """keep-known at a target width of 1.5: the 10-item row's width (0.812) is within
    it, yet it says "no" (kappaSize sizes 11 items or more) with nothing saying why."""
    folder = init_study(tmp_path / "kk", template="keep-known")
    res = plan_study(folder, target=Target(width=1.5))
    row = res.table[res.table["items"] == 10].iloc[0]
    assert not row["meets"] and row["expected_width"] <= 1.5
    note = next(x for x in res.notes if x.startswith("kappaSize's closed forms"))
    assert f"(10 repeated items: {row['expected_width']:.3f})" in note
    assert "size 11 items or more" in note
    # where every row below 11 items misses the width anyway, nothing is said
    res = plan_study(folder, target=Target(width=0.5))
    assert not any(x.startswith("kappaSize's closed forms") for x in res.notes)
