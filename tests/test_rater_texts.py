"""No internal id in any text a rater reads.

A rater knows a dimension, a shown field or a total by its label ("Note", "Gold
reference answer"), never by the spec's id (``rater_note``, ``gold_answer``). For every
template this reads every text of its packs a rater can see (the cells of the visible
sheets, the dropdown lists, every input and error message) and of the e-mail drafts
that go with them, and looks for each id whose label differs from it.

Only ids that cannot be ordinary words are looked for (those with ``_``, ``-`` or a
digit): ``keep`` (label "KEEP") or ``notes`` are words a text may well use.
"""

from __future__ import annotations

import re
import shutil
from email import message_from_bytes, policy
from pathlib import Path

import openpyxl
import pytest
from roundtrip_helpers import generate_every_template

from sheetflow.packs.generate import generate_packs
from sheetflow.packs.guides import display_label
from sheetflow.spec.study import load_study
from sheetflow.spec.wording import id_mentions, labelled_ids
from sheetflow.workbook import layout as L

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ["anchored-plan", "answer-review", "judge-likert", "keep-known", "paired-rubric"]


def internal_ids(folder: Path) -> dict[str, str]:
    """Id -> the label a rater sees, for every id of the spec that is not a plain word."""
    study = load_study(folder)
    return {i: next((display_label(d) for d in study.rubric.dimensions if d.id == i), label)
            for i, label in labelled_ids(study).items()}


def rater_texts(folder: Path) -> list[tuple[str, str]]:
    """(where, text) of everything a rater of the study's packs can read."""
    out: list[tuple[str, str]] = []
    for path in sorted((folder / L.PACKS_DIR).glob("**/*.xlsx")):
        wb = openpyxl.load_workbook(path)
        for ws in wb.worksheets:
            if ws.sheet_state == "veryHidden" or ws.title == L.IDENTITY_SHEET:
                continue  # the identity sheet: never shown (the lists sheet feeds dropdowns)
            out.append((f"{path.name}: sheet name", ws.title))
            for row in ws.iter_rows():
                for cell in row:
                    if isinstance(cell.value, str) and cell.data_type != "f" and \
                            cell.column_letter != L.ROW_ID_COLUMN:
                        out.append((f"{path.name}!{ws.title}!{cell.coordinate}", cell.value))
            for dv in ws.data_validations.dataValidation:
                for text in (dv.promptTitle, dv.prompt, dv.errorTitle, dv.error):
                    if text:
                        out.append((f"{path.name}!{ws.title}: message at {dv.sqref}", text))
    for path in sorted((folder / L.PACKS_DIR).glob("**/*.eml")):
        msg = message_from_bytes(path.read_bytes(), policy=policy.default)
        out.append((f"{path.name}: subject", str(msg["Subject"])))
        out.append((f"{path.name}: body", msg.get_body(("plain",)).get_content()))
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generate_every_template(tmp_path_factory.mktemp("texts"), emails=True)


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_text_a_rater_reads_names_an_internal_id(generated, template):
    folder = generated[template]
    ids = internal_ids(folder)
    if template == "keep-known":  # its ids are all plain words ("keep", "consent")
        assert not ids, ids
        return
    assert ids, "the template should have ids that are not plain words"
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, ids)) +
                         r")(?![A-Za-z0-9_])")
    texts = rater_texts(folder)
    assert len(texts) > 100
    found = sorted({f"{where}: {m.group(1)!r} (the rater sees {ids[m.group(1)]!r})"
                    for where, text in texts for m in pattern.finditer(text)})
    assert not found, "\n".join(found[:20])


def test_the_scan_finds_an_id_where_one_is_written(tmp_path):
    """The scan itself: an id put into a help text is found in the pack it reaches."""
    folder = tmp_path / "study"
    shutil.copytree(ROOT / "templates" / "answer-review", folder)
    toml = folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        'help = "One line: why you', 'help = "See gold_dispute. One line: why you', 1),
        encoding="utf-8")
    generate_packs(folder, emails=True)
    texts = rater_texts(folder)
    assert any("gold_dispute" in text for _, text in texts)


def test_check_and_generate_name_an_id_a_text_uses(tmp_path):
    """The spec's author is told which label to write, before any rater sees the id."""
    folder = tmp_path / "study"
    shutil.copytree(ROOT / "templates" / "answer-review", folder)
    assert id_mentions(load_study(folder)) == []
    toml = folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        "then write one line in Note.", "then one line in rater_note.", 1), encoding="utf-8")
    expected = (f"{folder}/study.toml: the help of 'gold_dispute' names 'rater_note'; "
                "raters see it as 'Note': write that instead")
    assert id_mentions(load_study(folder)) == [expected]
    assert expected in generate_packs(folder).warnings


def test_a_guide_says_optional_once(tmp_path):
    """The paired template's notes help opens "Optional: brief notes ..." and the guide
    beside them added "Optional." under it: every guide says it at most once."""
    from sheetflow.packs.guides import guide
    from sheetflow.spec.templates import init_study

    init_study(tmp_path / "s", "paired-rubric")
    dims = load_study(tmp_path / "s").rubric.dimensions
    texts = {d.id: guide(d) for d in dims}
    said = [t for t in texts.values() if t.lower().count("optional") > 1]
    assert not said, said
    assert any(t.lower().startswith("optional") for t in texts.values())


COORDINATOR_WORDS = ("Give the rater", "The validator recomputes", "before enrolment",
                     "protocol step", "complete the self-check", "methodology feedback")
"""Words meant for the coordinator, or naming what the rater does not have: the
protocol's steps beyond the rater's instructions, a "self-check" section the workbook
does not have (its Submission area is meant), a note field by a name it does not have."""


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_text_a_rater_reads_speaks_to_the_coordinator(generated, template):
    found = sorted({f"{where}: {words!r}" for where, text in rater_texts(generated[template])
                    for words in COORDINATOR_WORDS if words.lower() in text.lower()})
    assert not found, "\n".join(found[:20])


def test_the_studys_text_wrapped_in_the_spec_reads_as_paragraphs(generated):
    """Text hard-wrapped in study.toml was shown one row per line, with gaps
    mid-sentence: single line ends join, a blank line or a list item starts anew."""
    from sheetflow.packs.instructions import study_paragraphs

    assert study_paragraphs("One line\nwrapped here.\n\nNext:\n- a\n- b\n1. c\nd") == [
        "One line wrapped here.", "", "Next:", "- a", "- b", "1. c d"]
    texts = [text for where, text in rater_texts(generated["anchored-plan"])
             if "!Instructions!" in where]
    assert ("Score each of the five dimensions using only the listed anchors. Where an "
            "output falls between two adjacent anchors, interpolate once between them and "
            "record a whole number; do not invent a new standard after seeing outputs."
            ) in texts


def test_the_paired_invitation_and_help_name_the_workbooks_own_parts(generated):
    """The invitation asked to "complete the self-check" (the workbook's Submission
    area was meant); the instructions name each note field by its label."""
    texts = dict(rater_texts(generated["paired-rubric"]))
    body = next(text for where, text in texts.items() if where.endswith(": body"))
    assert "fill in the Submission area at the bottom of the Scoring sheet" in " ".join(
        body.split())
    labels = {d.label for d in load_study(generated["paired-rubric"]).rubric.dimensions}
    instructions = (ROOT / "templates" / "paired-rubric" / "instructions.md").read_text()
    for named in ("Interpretation standards (50-100 words)", "Qualitative notes"):
        assert named in labels and named in instructions
    assert "Methodology notes (optional, 200-400 words)" in labels
    assert "in Methodology notes" in instructions
