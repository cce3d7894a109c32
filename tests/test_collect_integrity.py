"""Integrity of collected returns against a hostile rater: rows bound to their pack.

A return whose identity names another rater, and whose stored row table was edited to
match no one, must not be counted as that other rater: the hidden row ids on the
Scoring sheet are keyed per pack, so they still say whose workbook it is.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pytest
from generate_helpers import generated_with_two_first_packs
from roundtrip_helpers import claim_identity, fill_openpyxl, plan_answers

from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.workbook import layout as L

TEMPLATES = ("paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert")


def _study(tmp: Path, template: str) -> tuple[Path, list[dict]]:
    root = tmp / template
    packs = generated_with_two_first_packs(root, template)
    (root / "returns").mkdir(exist_ok=True)
    return root, packs


def _filled(tmp: Path, root: Path, pack: dict) -> Path:
    """``pack`` filled in with valid answers, outside ``returns/``."""
    filled = tmp / "filled.xlsx"
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], filled, plan_answers(pack))
    return filled


def _impersonate(src: Path, dst: Path, other: dict) -> None:
    """Claim ``other``'s identity everywhere and scramble the stored row table."""
    wb = openpyxl.load_workbook(src)
    claim_identity(wb, other["identity"])
    ws = wb[L.IDENTITY_SHEET]
    for r in range(L.IDENTITY_ROW_TABLE_FIRST, ws.max_row + 1):
        if ws.cell(r, 1).value:
            ws.cell(r, 1).value = f"forged-{r}"
    wb.save(dst)


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_return_claiming_another_rater_is_refused(tmp_path, template):
    root, packs = _study(tmp_path, template)
    mine, other = packs[0], packs[1]
    filled = _filled(tmp_path, root, mine)
    _impersonate(filled, root / "returns" / other["file"], other)
    result = collect(root, write=False)
    (status,) = result.report.files
    assert not status.used and len(result.ratings) == 0
    codes = {i.code for i in result.report.issues if i.severity == "error"}
    assert "rows-from-other-rater" in codes
    found = next(i for i in result.report.issues if i.code == "rows-from-other-rater")
    assert mine["rater_id"] in found.message


@pytest.mark.parametrize("template", ["paired-rubric", "answer-review"])
@pytest.mark.parametrize("removed", ["sheet", "ids"])
def test_a_forged_claim_without_rows_does_not_put_the_genuine_return_out(tmp_path, template,
                                                                         removed):
    """A rater took their own workbook, claimed another's identity and deleted every row
    proof (the answer sheet, or its hidden ids, and the row table). Both files were
    then ``duplicate-rater`` and the genuine return was not used: the panel was
    incomplete and nothing could be analysed."""
    root, packs = _study(tmp_path, template)
    mine, victim = packs[0], packs[1]
    fill_openpyxl(root / L.PACKS_DIR / victim["file"], root / "returns" / victim["file"],
                  plan_answers(victim))
    filled = _filled(tmp_path, root, mine)
    forged = root / "returns" / ("copy-" + victim["file"])
    _impersonate(filled, forged, victim)
    wb = openpyxl.load_workbook(forged)
    ws = wb[L.IDENTITY_SHEET]
    for r in range(L.IDENTITY_ROW_TABLE_FIRST, ws.max_row + 1):
        for c in range(1, 5):
            ws.cell(r, c).value = None
    if removed == "sheet":
        del wb[L.SCORING_SHEET]
    else:
        for row in wb[L.SCORING_SHEET].iter_rows(min_col=1, max_col=1):
            row[0].value = None
    wb.save(forged)
    result = collect(root, write=False)
    by_name = {f.file: f for f in result.report.files}
    assert by_name[victim["file"]].used, [i.message for i in result.report.issues]
    assert not by_name[forged.name].used
    codes = {(i.file, i.code) for i in result.report.issues}
    assert (forged.name, "rows-unproven") in codes
    assert not any(code == "duplicate-rater" for _, code in codes)
    assert {r["rater_id"] for r in result.ratings} == {victim["rater_id"]}


def test_a_file_name_mismatch_does_not_say_the_file_counted(tmp_path):
    """The warning said "it was counted for EV-02" of a file whose rows proved it was
    not EV-02's, and that counted for nobody."""
    root, packs = _study(tmp_path, "paired-rubric")
    mine, other = packs[0], packs[1]
    filled = _filled(tmp_path, root, mine)
    _impersonate(filled, root / "returns" / mine["file"], other)
    result = collect(root, write=False)
    (status,) = result.report.files
    assert not status.used
    (warning,) = [i for i in result.report.issues if i.code == "file-name-mismatch"]
    assert "counted" not in warning.message and other["rater_id"] in warning.message


def test_rows_edited_to_match_no_pack_are_refused(tmp_path):
    root, packs = _study(tmp_path, "keep-known")
    pack = packs[0]
    filled = _filled(tmp_path, root, pack)
    wb = openpyxl.load_workbook(filled)
    ws = wb[L.SCORING_SHEET]
    for r in range(1, ws.max_row + 1):
        if ws.cell(r, 1).value:
            ws.cell(r, 1).value = str(ws.cell(r, 1).value).split("#")[0]
    wb.save(root / "returns" / pack["file"])
    result = collect(root, write=False)
    assert not result.report.files[0].used
    assert "rows-not-this-rater" in {i.code for i in result.report.issues}


def test_row_ids_differ_between_packs_of_one_study(tmp_path):
    root, packs = _study(tmp_path, "judge-likert")
    ids = [{r["row_id"] for c in p["cards"] for r in c["rows"]} for p in packs]
    items = [{r["item_id"] for c in p["cards"] for r in c["rows"]} for p in packs]
    assert items[0] & items[1]  # the same items ...
    assert not ids[0] & ids[1]  # ... under different row ids
    again = tmp_path / "again"
    shutil.copytree(root, again)
    generate_packs(again, force=True)
    assert (again / L.PACKS_DIR / L.MANIFEST_FILE).read_bytes() == \
        (root / L.PACKS_DIR / L.MANIFEST_FILE).read_bytes()


@pytest.mark.parametrize(("template", "first", "second"), [
    ("keep-known", "keep", "known"),  # KEEP=Yes, KNOWN=No sorted by answer
    ("paired-rubric", "evidence", None),  # a checklist's first two questions
])
def test_lines_sorted_within_a_case_are_refused(tmp_path, template, first, second):
    """Every line of a case carries the same hidden id, so lines sorted within a case
    aligned as in place and their answers were read under each other's questions (the
    file used, no warning). The label beside each answer line shows the move."""
    root, packs = _study(tmp_path, template)
    pack = packs[0]
    filled = _filled(tmp_path, root, pack)
    card = pack["cards"][0]
    answers = card["rows"][0]["answers"]
    if second is None:  # the checklist's first two question lines
        a, b = (q["cell"] for q in answers[first]["questions"][:2])
    else:
        a, b = answers[first]["cell"], answers[second]["cell"]
    row_a, row_b = (int("".join(ch for ch in ref if ch.isdigit())) for ref in (a, b))
    wb = openpyxl.load_workbook(filled)
    ws = wb[L.SCORING_SHEET]
    for c in range(1, ws.max_column + 1):  # what a sort of the two rows does
        top, low = ws.cell(row_a, c), ws.cell(row_b, c)
        top.value, low.value = low.value, top.value
    wb.save(root / "returns" / pack["file"])
    result = collect(root, write=False)
    assert not result.report.files[0].used and len(result.ratings) == 0
    (moved,) = [i for i in result.report.issues if i.code == "answer-line-moved"]
    assert (moved.severity, moved.sheet, moved.cell) == ("error", L.SCORING_SHEET,
                                                         f"B{row_a}")
    assert f"in case {L.case_name(card)} is not where it was: B{row_a} now says '" \
        in moved.message
    assert not {"row-inserted", "rows-reordered"} & {i.code for i in result.report.issues}


def test_a_row_inserted_inside_a_card_is_one_clear_error(tmp_path):
    """A row inserted between a card's lines left the lines below it where their
    answers are not read: the rater was told that sheetflow's own points formula "is a
    formula; type the value itself" and that 'No' is not a number, with a warning that
    the answers were found by their hidden ids. One line now says what happened."""
    root, packs = _study(tmp_path, "paired-rubric")
    pack = packs[0]
    filled = _filled(tmp_path, root, pack)
    evidence = pack["cards"][0]["rows"][0]["answers"]["evidence"]["questions"][1]["cell"]
    wb = openpyxl.load_workbook(filled)
    wb[L.SCORING_SHEET].insert_rows(int(evidence[1:]), 1)
    wb.save(root / "returns" / pack["file"])
    result = collect(root, write=False)
    assert not result.report.files[0].used
    found = [(i.code, i.severity) for i in result.report.issues]
    assert found == [("answer-line-moved", "error")], found
    assert "Rows were sorted, inserted or moved" in result.report.issues[0].message


def test_a_formula_hidden_behind_an_xml_comment_is_refused(tmp_path):
    """The scan looked for a formula only right after the cell's start tag: behind an
    XML comment it went unseen, and the cell's stored value was taken as typed."""
    import zipfile

    root, packs = _study(tmp_path, "paired-rubric")
    pack = packs[0]
    filled = _filled(tmp_path, root, pack)
    target = root / "returns" / pack["file"]
    with zipfile.ZipFile(filled) as src, zipfile.ZipFile(target, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.startswith("xl/worksheets/sheet"):
                data = data.replace(b"><v>", b"><!-- x --><f>1</f><v>", 1)
            dst.writestr(info, data)
    result = collect(root, write=False)
    (status,) = result.report.files
    assert not status.used
    (refusal,) = [i for i in result.report.issues if i.code == "formula-hidden"]
    assert refusal.file == pack["file"] and "sheet '" in refusal.message


def test_a_pack_whose_name_another_raters_file_carries_says_so_on_its_row(tmp_path):
    """A rater sent their workbook under another rater's pack name: the file counts
    for its writer, and the named rater's Status row said only "not returned yet",
    though a file with their pack's name sat in returns/. The row now names it and
    whose workbook it is."""
    root, packs = _study(tmp_path, "paired-rubric")
    writer, named = packs[0], packs[1]
    shutil.copy(_filled(tmp_path, root, writer), root / "returns" / named["file"])
    result = collect(root, write=False)
    rows = {r.rater_id: r for r in result.roster}
    assert rows[writer["rater_id"]].state != "missing"
    row = rows[named["rater_id"]]
    assert row.state == "missing"
    assert (f"{named['file']} in returns/ has this pack's name but is rater "
            f"{writer['rater_id']}'s workbook (see {writer['rater_id']}'s row)") in row.todo
    assert "remind" in row.todo


def _changed_return(tmp_path: Path, template: str, change) -> tuple[dict, object]:
    """A return of ``template``'s first pack, filled in and changed by
    ``change(scoring sheet, pack)``; the pack and what collect made of it."""
    root, packs = _study(tmp_path, template)
    pack = packs[0]
    wb = openpyxl.load_workbook(_filled(tmp_path, root, pack))
    change(wb[L.SCORING_SHEET], pack)
    wb.save(root / "returns" / pack["file"])
    return pack, collect(root, write=False)


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_column_inserted_is_one_issue_not_hundreds(tmp_path, template):
    """A column inserted before C moved every prompt, response and answer one column
    right: each was reported where it had been (580 errors for a paired pack: locked
    text changed, answers blank or not allowed) and the reply asked to put texts back.
    One error now names the column, and the reply asks for it to be deleted."""
    _, result = _changed_return(tmp_path, template, lambda ws, _: ws.insert_cols(3))
    found = [(i.code, i.severity, i.sheet) for i in result.report.issues]
    assert found == [("column-inserted", "error", L.SCORING_SHEET)], found
    status = result.report.files[0]
    assert not status.used and status.percent_complete is None and not result.ratings
    message = result.report.issues[0].message
    assert message.startswith("A column (now column C) was inserted into sheet 'Scoring'")
    assert "Delete the inserted column" in message


def test_a_column_inserted_asks_the_rater_to_delete_it(tmp_path):
    from sheetflow.collect.replies import feedback_body, feedback_subject
    from sheetflow.spec.study import Rater

    pack, result = _changed_return(tmp_path, "paired-rubric", lambda ws, _: ws.insert_cols(5, 2))
    issues = result.report.issues
    assert [i.code for i in issues] == ["column-inserted"]
    assert "2 columns (now among columns D to H) were inserted" in issues[0].message
    assert feedback_subject("T", issues) == "T: please fix 1 problem in your workbook"
    body = feedback_body(Rater(id=pack["rater_id"]), _Row(pack["file"]), issues)
    assert "Delete the inserted columns and send the workbook again" in body
    assert "put back" not in body and "blank" not in body


@pytest.mark.parametrize(("template", "column", "named"), [
    ("paired-rubric", 3, "column C"), ("paired-rubric", 4, "one of columns D to F"),
    ("keep-known", 2, "column B")])
def test_a_column_deleted_is_one_issue_asking_for_a_fresh_copy(tmp_path, template, column,
                                                                 named):
    from sheetflow.collect.replies import feedback_body
    from sheetflow.spec.study import Rater

    pack, result = _changed_return(tmp_path, template, lambda ws, _: ws.delete_cols(column))
    issues = result.report.issues
    assert [(i.code, i.severity) for i in issues] == [("column-deleted", "error")]
    assert issues[0].message.startswith(f"A column (was {named}) of sheet 'Scoring' was "
                                        "deleted")
    body = feedback_body(Rater(id=pack["rater_id"]), _Row(pack["file"]), issues)
    assert "attached again for the fresh copy" in body


class _Row:
    """The roster row a reply names (the file sent)."""

    def __init__(self, file: str):
        self.file = file


def test_a_deleted_answer_line_is_named_not_the_whole_case(tmp_path):
    """One line of a case deleted was reported as "The row for case 1 (RH66) is
    missing", the words for the whole case deleted: which line, and where, was not
    said. The line is named now, with its dimension and the row it was on."""
    def question(pack):
        return pack["cards"][0]["rows"][0]["answers"]["evidence"]["questions"][1]

    pack, result = _changed_return(tmp_path, "paired-rubric", lambda ws, pack: ws.delete_rows(
        int(question(pack)["cell"][1:])))
    card, asked = pack["cards"][0], question(pack)
    (missing,) = result.report.issues
    assert (missing.code, missing.sheet, missing.case, missing.dimension) == (
        "row-missing", L.SCORING_SHEET, L.case_name(card), "evidence")
    assert missing.message.startswith(
        f"The line for 'Evidence Integration: {asked['question']}' in case "
        f"{L.case_name(card)}, row {asked['cell'][1:]} of the workbook as sent, is missing. ")


def _line_rows(card: dict) -> list[int]:
    """The rows of a card's answer lines (those carrying its hidden ids)."""
    return sorted({int(ref[1:]) for r in card["rows"] for a in r["answers"].values()
                   for ref in ([q["cell"] for q in a["questions"]] if "questions" in a
                               else [a["cell"]])})


def test_a_deleted_case_keeps_its_words(tmp_path):
    def delete_case(ws, pack):
        rows = _line_rows(pack["cards"][0])
        ws.delete_rows(rows[0], rows[-1] - rows[0] + 1)

    pack, result = _changed_return(tmp_path, "paired-rubric", delete_case)
    messages = [i.message for i in result.report.issues if i.code == "row-missing"]
    assert messages == [f"The row for case {L.case_name(pack['cards'][0])} is missing. Do "
                        "not delete rows; copy your answers into a fresh copy of the "
                        "workbook."]


def test_deleted_lines_the_labels_cannot_tell_are_counted(tmp_path):
    """A label edited below the deleted line: which line went cannot be told, so the
    lines missing are counted, never a wrong one named."""
    def delete_and_edit(ws, pack):
        rows = _line_rows(pack["cards"][0])
        ws.delete_rows(rows[1])
        ws.cell(rows[2], 2).value = "my own words"

    pack, result = _changed_return(tmp_path, "paired-rubric", delete_and_edit)
    card = pack["cards"][0]
    messages = [i.message for i in result.report.issues if i.code == "row-missing"]
    assert messages == [f"1 of the {len(_line_rows(card))} answer lines of case "
                        f"{L.case_name(card)} is missing. Do not delete rows; copy your "
                        "answers into a fresh copy of the workbook."]


def test_a_row_inserted_inside_a_card_names_the_first_line_moved(tmp_path):
    """The lines were compared in the order of their dimensions' names, so a row
    inserted below a card's first line named one ten rows further down (B24) as
    moved; the rater is pointed at the first line that moved."""
    def insert_below_first(ws, pack):
        ws.insert_rows(_line_rows(pack["cards"][0])[0] + 1)

    pack, result = _changed_return(tmp_path, "paired-rubric", insert_below_first)
    (moved,) = result.report.issues
    second = _line_rows(pack["cards"][0])[1]
    assert (moved.code, moved.cell) == ("answer-line-moved", f"B{second}")
    assert moved.message.startswith("The line for 'Evidence Integration: ")


def _sittings(tmp: Path) -> tuple[Path, dict, dict, Path]:
    """A keep-known study (one owner, two sittings), its packs of sitting 1 and 2, and
    sitting 1's pack filled in."""
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.spec.templates import init_study

    root = init_study(tmp / "keep-known", "keep-known")
    generate_packs(root)
    (root / "returns").mkdir(exist_ok=True)
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    first, second = sorted(packs, key=lambda p: p["sitting"])
    assert first["rater_id"] == second["rater_id"]
    return root, first, second, _filled(tmp, root, first)


def test_a_first_sitting_returned_as_the_second_is_named_by_its_sitting(tmp_path):
    """Both packs are one rater's: "rater owner-01's workbook, not owner-01's" and "its
    rows are another rater's" were said of the owner's first sitting claiming the
    second (a second sitting copied from the first would inflate intra-rater kappa)."""
    from sheetflow.collect.links import disowned

    root, first, second, filled = _sittings(tmp_path)
    _impersonate(filled, root / "returns" / second["file"], second)
    result = collect(root, write=False)
    (status,) = result.report.files
    assert not status.used
    (found,) = [i for i in result.report.issues if i.code == "rows-from-other-rater"]
    rater = first["rater_id"]
    assert f"{rater} (sitting 1)'s workbook, not of {rater} (sitting 2)'s" in found.message
    assert "another rater's" not in disowned(status, result.report.issues)


def test_a_first_sitting_named_as_the_second_says_which_sitting_the_name_suggests(
        tmp_path):
    """The warning said "The file name suggests rater owner-01, but the workbook says it
    is rater owner-01's" of a sitting-1 workbook under the sitting-2 pack's name."""
    root, first, second, filled = _sittings(tmp_path)
    shutil.copyfile(filled, root / "returns" / second["file"])
    result = collect(root, write=False)
    (warning,) = [i for i in result.report.issues if i.code == "file-name-mismatch"]
    rater = first["rater_id"]
    assert (f"suggests rater {rater} (sitting 2), but the workbook says it is rater "
            f"{rater} (sitting 1)'s") in warning.message
