"""Collect checks a protocol document asks for: a dispute needs its note (003)."""

from __future__ import annotations

from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


def _cells(pack: dict, dimension: str) -> list[dict]:
    return [a for a in L.iter_answer_cells(pack)
            if a["dimension"] == dimension and a["part"] == "value"]


def test_gold_dispute_without_a_note_is_an_error_naming_the_cell(tmp_path):
    root = tmp_path / "review"
    init_study(root, "answer-review")
    assert load_study(root).rubric.dimension("gold_dispute").note == "rater_note"
    generate_packs(root)
    pack = read_manifest(root / "packs" / "manifest.json")["packs"][0]
    answers = plan_answers(pack)
    flags, notes = _cells(pack, "gold_dispute"), _cells(pack, "rater_note")
    for flag in flags:
        answers[flag["cell"]] = ("Y", "Y")
    del answers[notes[1]["cell"]]  # the second dispute has no note
    answers.pop(flags[2]["cell"])  # not disputed: its note may say anything or nothing
    del answers[notes[2]["cell"]]
    (root / "returns").mkdir(exist_ok=True)
    fill_openpyxl(root / "packs" / pack["file"], root / "returns" / pack["file"], answers)
    found = [i for i in collect(root, write=False).report.issues
             if i.code == "flag-note-missing"]
    card = next(c for c in pack["cards"] if c["item_id"] == flags[1]["item_id"])
    assert [(i.cell, i.severity, i.case) for i in found] == [
        (flags[1]["cell"], "error", L.case_name(card))]  # the case as the rater sees it
    # the note dimension by its label, and its own cell (the flag's is not the one to fill)
    assert f"its Note ({notes[1]['cell']}) is blank" in found[0].message


def test_a_flag_note_must_name_a_text_dimension(tmp_path):
    from sheetflow.errors import SpecError

    root = tmp_path / "review"
    init_study(root, "answer-review")
    toml = root / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'note = "rater_note"', 'note = "overall_rating"'), encoding="utf-8")
    try:
        load_study(root)
    except SpecError as exc:
        assert "note 'overall_rating' must name a text dimension" in str(exc)
    else:
        raise AssertionError("a note naming a categorical dimension was accepted")
