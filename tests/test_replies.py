"""The reply drafts collect writes say what came back: no answers, some answers left
blank, or problems to fix.

Four raters of the paired-rubric template: EV-01 sends their pack back opened and saved
with nothing filled in, EV-03 sends it back byte for byte as it was sent, EV-02 fills
cases 1 to 9 and stops, EV-04 does the same and pastes a value that is not allowed.
"""

from __future__ import annotations

import email
import email.policy
import shutil
from email.message import EmailMessage
from pathlib import Path

import openpyxl
import pytest
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

STOPPED_AFTER = 9  # cards the half-way raters filled


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, dict[str, dict], object]:
    root = init_study(tmp_path_factory.mktemp("replies") / "s", "paired-rubric")
    with (root / "raters.csv").open("a", encoding="utf-8") as out:
        out.write("EV-04,Validator Four,Haddad,ev04@example.org,primary\n")
    generate_packs(root)
    packs = {p["rater_id"]: p for p in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
             ["packs"]}
    returns = root / L.RETURNS_DIR

    def sent(rater: str) -> Path:
        return root / L.PACKS_DIR / packs[rater]["file"]

    # opened and saved without an answer typed (what a spreadsheet program's save does)
    openpyxl.load_workbook(sent("EV-01")).save(returns / packs["EV-01"]["file"])
    shutil.copyfile(sent("EV-03"), returns / packs["EV-03"]["file"])
    for rater in ("EV-02", "EV-04"):
        answers = _first_cards(packs[rater], STOPPED_AFTER)
        if rater == "EV-04":
            cell = next(c for c, (v, _) in answers.items() if v in ("Yes", "No"))
            answers[cell] = ("Maybe", "Maybe")
        fill_openpyxl(sent(rater), returns / packs[rater]["file"], answers)
    return root, packs, collect(root)


def _first_cards(pack: dict, cards: int) -> dict:
    """The answers to the pack's first ``cards`` cards, as a rater who stopped there."""
    done = {c["item_id"] for c in pack["cards"] if c["card"] <= cards}
    answers = plan_answers(pack)
    return {a["cell"]: answers[a["cell"]] for a in L.iter_answer_cells(pack)
            if a["item_id"] in done and a["cell"] in answers}


def _draft(root: Path, rater: str) -> tuple[EmailMessage, str]:
    path = root / "out" / "feedback" / f"{rater}.eml"
    msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    body = msg.get_body(preferencelist=("plain",))
    assert body is not None
    return msg, body.get_content()


def _todo(root: Path, rater: str) -> str:
    ws = openpyxl.load_workbook(root / "out" / "validation.xlsx")["Status"]
    head = [c.value for c in ws[1]]
    rows = [dict(zip(head, (c.value for c in r), strict=True)) for r in ws.iter_rows(min_row=2)]
    return next(r["What to do"] for r in rows if r["Rater"] == rater)


@pytest.mark.parametrize("rater", ["EV-01", "EV-03"])
def test_a_workbook_sent_back_with_no_answers_is_asked_for_filled_in(study, rater):
    """The reply began "Before your answers can be used, please fix the following" and
    listed every blank cell (its subject: "please fix 346 problems"), though no answer
    had come back; the pack sent back as it was sent got the same opening."""
    root, packs, result = study
    msg, body = _draft(root, rater)
    title = load_study(root).title
    assert msg["Subject"] == f"{title}: the workbook you sent has no answers in it"
    assert f"Thank you for sending your workbook ({packs[rater]['file']}). It has no " \
        "answers in it: every answer cell is blank." in body
    assert "send me the workbook with your answers in it" in body
    for untrue in ("fix", "Scoring", "blank (", "Before your answers can be used"):
        assert untrue not in body, untrue
    assert len(body.splitlines()) < 12
    assert [a.get_filename() for a in msg.iter_attachments()] == [packs[rater]["file"]]
    todo = _todo(root, rater)
    assert todo.startswith("the file has no answers in it") and f"{rater}.eml" in todo
    (status,) = [f for f in result.report.files if f.rater == rater]
    assert status.no_answers and not status.used and status.entered == 0


def test_a_half_filled_workbook_gets_the_blank_answers_counted_and_the_cases_named(study):
    """Cases 10 to 18 left blank: the reply's subject said "please fix 173 problems"
    and it gave a line to each case; it now counts the blank answers as such and names
    the cases left in one line."""
    root, packs, result = study
    blank = [i for i in result.report.issues
             if i.rater == "EV-02" and i.code == "answer-missing"]
    assert not [i for i in result.report.issues if i.rater == "EV-02"
                and i.severity == "error" and i.code != "answer-missing"]  # blanks only
    msg, body = _draft(root, "EV-02")
    title = load_study(root).title
    assert msg["Subject"] == f"{title}: {len(blank)} answers still blank in your workbook"
    assert f"It still has {len(blank)} blank answers, listed below; your answers can be " \
        "used once they are filled in:" in body
    cards = {c["card"]: L.case_name(c) for c in packs["EV-02"]["cards"]}
    left = f"- cases {cards[STOPPED_AFTER + 1]} to {cards[len(cards)]}: "
    (line,) = [ln for ln in body.splitlines() if ln.startswith("- case")]
    assert line.startswith(left) and "answers are blank (Scoring rows " in line
    study_level = [i for i in blank if not i.case]
    assert sum(ln.startswith("- Scoring!") for ln in body.splitlines()) >= len(study_level)
    assert "please fix" not in body


def test_blank_answers_beside_another_error_are_counted_apart(study):
    root, _, result = study
    errors = [i for i in result.report.issues if i.rater == "EV-04" and i.severity == "error"]
    blank = sum(i.code == "answer-missing" for i in errors)
    assert len(errors) - blank == 1  # the pasted 'Maybe'
    msg, body = _draft(root, "EV-04")
    assert msg["Subject"].endswith(
        f": please fix 1 problem and fill in {blank} blank answers in your workbook")
    assert f"please fix 1 problem and fill in {blank} blank answers in the file you " \
        "sent:" in body
    assert "'Maybe' is not allowed" in body


def test_a_reply_lists_at_most_so_many_lines_whatever_the_blank_cases():
    """Every other case of 400 left blank: each such case had a line of its own, with
    no limit (the limit counted only the other problems)."""
    from sheetflow.collect.replies import MAX_LISTED, _issue_lines
    from sheetflow.collect.validate import issue

    issues = [issue("answer-missing", file="f.xlsx", sheet="Scoring", cell=f"C{card * 30 + k}",
                    case=f"{card} (X{card:03d})", what="Depth")
              for card in range(1, 401, 2) for k in range(5)]
    lines = _issue_lines(issues)
    assert len(lines) == MAX_LISTED + 1
    assert lines[0] == "- case 1 (X001): 5 answers are blank (Scoring rows 30 to 34)"
    assert lines[-1] == f"- and {(200 - MAX_LISTED) * 5} more blank answers in the file"


def test_blank_answers_on_one_row_name_the_row_not_a_span():
    """A card whose blank answers all sit on one row said "rows 38 to 38"."""
    from sheetflow.collect.replies import _issue_lines
    from sheetflow.collect.validate import issue

    issues = [issue("answer-missing", file="f.xlsx", sheet="Scoring", cell=f"{col}38",
                    case="2 (X002)", what="Depth") for col in "CDEF"]
    assert _issue_lines(issues) == ["- case 2 (X002): 4 answers are blank (Scoring row 38)"]
