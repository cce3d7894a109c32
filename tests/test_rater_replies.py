"""A rater's reply asks only for what the rater must fix, in words addressed to them;
a consent refused keeps the rater's files out.

- the protocol's self-checks (a target share, every direction the same, a direction
  against the totals) stay on the Issues sheet, never in a reply;
- text typed outside the answer cells is put to the rater in the second person, without
  the tool's name;
- a changed locked text is named by its role, and putting it back is enough;
- a marked flag without its note names the note's cell;
- keep-known's consent question answered No keeps the owner's files out, named on the
  Status sheet and in a polite reply.
"""

from __future__ import annotations

import csv
import email
import email.policy
from email.message import EmailMessage
from pathlib import Path

import openpyxl
import pytest

from sheetflow.collect.replies import feedback_body, feedback_subject
from sheetflow.collect.run import collect
from sheetflow.collect.validate import issue
from sheetflow.demo.simulate import fill_packs
from sheetflow.errors import SpecError
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.study import Rater, load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


class _Row:
    file = "pack.xlsx"


def _body(issues: list) -> str:
    return feedback_body(Rater("R1", "Rae"), _Row(), issues)


def test_self_checks_are_never_quoted_to_a_rater():
    issues = [
        issue("answer-missing", file="f", sheet="Scoring", cell="D9", what="Score",
              expected="a whole number from 0 to 5"),
        issue("confidence-low-share", file="f", detail="68%", expected="70%"),
        issue("direction-all-same", file="f", value="B>A", detail="20"),
        issue("direction-inconsistent", file="f", sheet="Scoring", cell="C40", case="3",
              value="Tied", detail="B scored 4 points higher (at least 3)"),
        issue("totals-many-extreme", file="f", detail="50%", expected="0-5 or 18-20"),
        issue("label-normalised", file="f", sheet="Scoring", cell="D11", what="KEEP",
              value="yes", accepted="Yes"),
    ]
    body = _body(issues)
    assert "Score is blank" in body
    for said in ("target", "direction", "extreme", "was read as", "Please also check"):
        assert said not in body


def test_text_outside_the_answer_cells_is_put_to_the_rater_in_the_second_person():
    note = issue("text-outside-answers", file="f", sheet="Scoring", cell="G30",
                 value="note to self", what="Cell G30 of sheet 'Scoring' holds 'note to "
                 "self', where the workbook as sent had nothing")
    missing = issue("answer-missing", file="f", sheet="Scoring", cell="D9", what="Score",
                    expected="a number")
    body = _body([missing, note])
    assert "You typed 'note to self' in cell G30, outside the answer cells" in body
    assert "sheetflow" not in body and "from the rater" not in body
    assert "sheetflow reads only the answer cells" in note.message  # the Issues sheet's


def test_a_reply_asking_for_a_fresh_copy_asks_for_no_fix_in_the_file_sent():
    gone = issue("sheet-missing", file="f", sheet="Scoring")
    body = _body([gone])
    assert "in the file you sent" not in body and "fresh copy" in body
    assert "in the file you sent" in _body([issue("answer-missing", file="f", what="x",
                                                   expected="y")])


def test_a_reply_asking_for_a_fresh_copy_says_which_file_to_send_back():
    """It ended "Then send the file back", which reads as the file sent, not to be used."""
    body = _body([issue("sheet-missing", file="f", sheet="Scoring")])
    assert "Then send me the fresh copy, filled in. Your original workbook is attached " \
           "again for the fresh copy asked for above" in body
    assert "send the file back" not in body


def test_a_flag_is_asked_for_as_a_mark_or_nothing():
    from sheetflow.collect.values import describe_domain
    from sheetflow.spec.rubric import Dimension

    flag = Dimension("gold_dispute", "Gold answer disputed", "flag", choices=("Y",),
                     required=False)
    assert describe_domain(flag) == "Y, or leave it blank"


def _draft(root: Path, name: str) -> tuple[str, str]:
    msg = email.message_from_bytes((root / "out" / "feedback" / name).read_bytes(),
                                   policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    body = msg.get_body(("plain",))
    assert body is not None
    return str(msg["Subject"]), body.get_content()


def _returned(root: Path, template: str) -> list[dict]:
    init_study(root, template)
    generate_packs(root)
    fill_packs(root, seed=7)
    return read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]


def _edit(root: Path, pack: dict, cells: dict) -> None:
    path = root / L.RETURNS_DIR / pack["file"]
    wb = openpyxl.load_workbook(path)
    for cell, value in cells.items():
        wb[L.SCORING_SHEET][cell].value = value
    wb.save(path)


def test_a_changed_response_is_named_and_putting_it_back_is_enough(tmp_path):
    root = tmp_path / "s"
    packs = _returned(root, "paired-rubric")
    pack = packs[0]
    card = pack["cards"][0]
    field = next(x for r in card["rows"] for x in r["locked"] if r.get("label") == "A")
    first = field["cells"][0]
    sent = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])[L.SCORING_SHEET]
    original = sent[first].value
    _edit(root, pack, {first: "changed"})
    result = collect(root)
    assert any(i.code == "locked-text-changed" for i in result.report.issues)
    _, body = _draft(root, f"{pack['rater_id']}.eml")
    assert f"The text of Response A of case {L.case_name(card)}, in " in body
    assert "Putting it back is enough" in body
    assert "Use a fresh copy" not in body and "earlier answers are not in it" not in body
    _edit(root, pack, {first: original})
    again = collect(root)
    assert not [i for i in again.report.issues if i.severity == "error"]


def test_a_dispute_without_its_note_names_the_note_cell(tmp_path):
    root = tmp_path / "s"
    pack = _returned(root, "answer-review")[0]
    cells = list(L.iter_answer_cells(pack))
    flag = next(a for a in cells if a["dimension"] == "gold_dispute")
    note = next(a for a in cells if a["dimension"] == "rater_note"
                and a["item_id"] == flag["item_id"])
    _edit(root, pack, {flag["cell"]: "Y", note["cell"]: None})
    result = collect(root)
    found = next(i for i in result.report.issues if i.code == "flag-note-missing")
    assert f"({note['cell']}) is blank" in found.message
    _, body = _draft(root, f"{pack['rater_id']}.eml")
    assert f"({note['cell']}) is blank" in body


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> tuple[Path, dict, object]:
    root = tmp_path_factory.mktemp("consent") / "s"
    packs = _returned(root, "keep-known")
    first = next(p for p in packs if p["sitting"] == 1)
    consent = next(a for a in L.iter_answer_cells(first) if a["dimension"] == "consent")
    _edit(root, first, {consent["cell"]: "No"})
    return root, first, collect(root)


def test_a_refused_consent_keeps_every_file_of_the_owner_out(refused):
    root, first, result = refused
    owner = first["rater_id"]
    codes = {(i.file, i.code) for i in result.report.issues if i.severity == "error"}
    assert (first["file"], "consent-refused") in codes
    assert any(code == "consent-refused-elsewhere" for _, code in codes)  # sitting 2
    assert not [f for f in result.report.files if f.rater == owner and f.used]
    assert not result.report.valid
    with (root / "out" / "ratings.csv").open(encoding="utf-8") as fh:
        assert owner not in {row["rater"] for row in csv.DictReader(fh)}
    rows = [r for r in result.roster if r.rater_id == owner]
    assert rows and all(r.todo.startswith("consent not given") for r in rows)


def test_a_refused_consent_is_asked_about_politely(refused):
    root, first, _ = refused
    subject, body = _draft(root, f"{first['rater_id']}.eml")
    assert subject.endswith("your answer to the consent question")
    assert "is 'No', so none of your marks can be used" in body
    assert "If you meant to give your consent" in body
    assert "please fix" not in body


def test_consent_is_a_binary_study_question(tmp_path):
    root = init_study(tmp_path / "s", "keep-known")
    toml = root / "study.toml"
    text = toml.read_text(encoding="utf-8")
    assert load_study(root).rubric.dimensions[-1].consent == "Yes"
    toml.write_text(text.replace('consent = "Yes"', 'consent = "Maybe"'), encoding="utf-8")
    with pytest.raises(SpecError, match="consent 'Maybe' must be the choice"):
        load_study(root)


def test_feedback_subject_for_consent_alone():
    refusal = issue("consent-refused", file="f", sheet="Scoring", cell="C9", value="No",
                    what="Consent", expected="Yes")
    assert feedback_subject("T", [refusal]) == "T: your answer to the consent question"


@pytest.mark.parametrize(("made", "said"), [
    (issue("sitting-too-soon", file="f", sheet="Scoring", cell="C4", rater="R1",
           value="2026-11-03 09:00",
           detail="Batch 1 starts 22.3 h after sitting 1 ended (2026-11-02 10:40)"),
     "Batch 1 starts 22.3 h after sitting 1 ended (2026-11-02 10:40); the study asks for "
     "at least 24 hours between the two sittings. If a time was typed wrong, please "
     "correct it; if the times are right, leave them as they are."),
    (issue("batch-time-overlap", file="f", sheet="Scoring", cell="C26", rater="R1",
           detail="Batch 2 starts at 2026-11-02 09:30, before batch 1 ends "
           "(2026-11-02 10:00)"),
     "Batch 2 starts at 2026-11-02 09:30, before batch 1 ends (2026-11-02 10:00); the "
     "batches are meant to be scored one at a time, with a break between. If a time was "
     "typed wrong, please correct it; if the times are right, leave them as they are."),
    (issue("rows-not-this-rater", file="f", sheet="Scoring", rater="R1"),
     "The rows of the sheet 'Scoring' are not those of the workbook sent to you"),
    (issue("rows-unproven", file="f", rater="R1", detail="R1"),
     "This workbook says it is yours, but none of its rows carries the hidden ids of the "
     "workbook sent to you"),
])
def test_time_and_row_id_issues_speak_to_the_rater(made, said):
    """The coordinator's words reached the rater: "report it as a deviation" (the
    coordinator's job) and "rater R1's workbook" in the third person."""
    body = " ".join(_body([made]).split())
    assert said in body
    for coordinators in ("deviation", "rater R1", "Each rater", "counted for nobody",
                         "sheetflow"):
        assert coordinators not in body
    if made.severity == "error":  # a fresh copy is asked for: no fix "in the file sent"
        assert "fresh copy of your workbook (attached)" in body
        assert "in the file you sent" not in body
