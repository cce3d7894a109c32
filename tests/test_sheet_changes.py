"""What a rater adds outside the pack's design is named, never lost in silence: a
sheet of their own, a comment on a cell; a sheet deleted, renamed, hidden or shown is
named once; a clean return, however it was saved, says nothing and reads nothing more."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.comments import Comment
from roundtrip_helpers import (
    paired_study_with_a_copy,
    require_libreoffice,
    return_both_from_libreoffice,
    return_every_pack,
)

from sheetflow.cli import cli
from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

CODES = ("sheet-added", "sheet-deleted", "sheet-renamed", "sheet-visibility-changed",
         "cell-comment")
WHY = "I was unsure: response B cites no source"


def _study(root: Path) -> list[dict]:
    """A paired-rubric study whose every pack came back filled in (openpyxl)."""
    init_study(root, "paired-rubric")
    generate_packs(root)
    (root / L.RETURNS_DIR).mkdir(exist_ok=True)
    return return_every_pack(root)


def _edit(path: Path, change) -> None:
    wb = openpyxl.load_workbook(path)
    change(wb)
    wb.save(path)


def _ours(root: Path) -> list[tuple[str, str, str, str]]:
    """(code, sheet, cell, value) of each issue of these checks, sorted."""
    issues = collect(root, write=False).report.issues
    return sorted((i.code, i.sheet, i.cell, i.value) for i in issues if i.code in CODES)


def _answer_cell(pack: dict) -> str:
    return next(iter(L.iter_answer_cells(pack)))["cell"]


def test_a_sheet_the_rater_added_is_named_with_its_cells(tmp_path):
    root = tmp_path / "study"
    packs = _study(root)

    def add(wb):
        notes = wb.create_sheet("My notes")
        notes["A1"], notes["B4"] = "case 3 looked odd", 7
        wb.create_sheet("Sheet1")  # empty: nothing on it is lost, nothing to say

    _edit(root / L.RETURNS_DIR / packs[0]["file"], add)
    result = collect(root, write=False)
    (found,) = [i for i in result.report.issues if i.code in CODES]
    assert (found.code, found.file, found.sheet, found.severity) == \
        ("sheet-added", packs[0]["file"], "My notes", "warning")
    assert found.message.startswith("The sheet 'My notes' was added to the workbook and "
                                    "holds 2 cells with content, which sheetflow does not "
                                    "read.")
    assert "move anything meant for the study into the answer cells" in found.message
    assert all(f.used for f in result.report.files)  # a warning: the ratings count


def test_a_copied_or_renamed_scoring_sheet_is_named_once(tmp_path):
    """A copy of the Scoring sheet is sheet-duplicated, the Scoring sheet under another
    name sheet-renamed: neither is an added sheet too (the sheet of notes beside is)."""
    root = tmp_path / "study"
    packs = _study(root)
    ret = root / L.RETURNS_DIR / packs[0]["file"]

    def copy(wb):
        wb.copy_worksheet(wb[L.SCORING_SHEET])
        wb.create_sheet("My notes")["A1"] = "case 3 looked odd"

    _edit(ret, copy)
    issues = collect(root, write=False).report.issues
    assert sorted((i.code, i.sheet) for i in issues if i.code.startswith("sheet-")) == \
        [("sheet-added", "My notes"), ("sheet-duplicated", f"{L.SCORING_SHEET} Copy")]
    return_every_pack(root)

    def rename(wb):
        wb[L.SCORING_SHEET].title = "Ratings"
        wb.create_sheet("My notes")["A1"] = "case 3 looked odd"

    _edit(ret, rename)
    assert _ours(root) == [("sheet-added", "My notes", "", ""),
                           ("sheet-renamed", L.SCORING_SHEET, "", "")]


def test_a_renamed_instructions_sheet_is_named_once_and_its_notes_still_found(tmp_path):
    root = tmp_path / "study"
    packs = _study(root)

    def rename(wb):
        wb[L.INSTRUCTIONS_SHEET].title = "Read me"
        wb["Read me"]["E5"] = "a remark"

    _edit(root / L.RETURNS_DIR / packs[0]["file"], rename)
    issues = collect(root, write=False).report.issues
    (renamed,) = [i for i in issues if i.code in CODES]
    assert (renamed.code, renamed.sheet) == ("sheet-renamed", L.INSTRUCTIONS_SHEET)
    assert "renamed to 'Read me'" in renamed.message
    assert [(i.sheet, i.cell, i.value) for i in issues if i.code == "text-outside-answers"] \
        == [("Read me", "E5", "a remark")]


def test_a_deleted_sheet_is_named_and_a_new_one_beside_it_too(tmp_path):
    """A sheet deleted and another added (not a copy of it): both are named."""
    root = tmp_path / "study"
    packs = _study(root)

    def swap(wb):
        del wb[L.MORE_SHEET]
        wb.create_sheet("Scratch")["C3"] = "sums"

    _edit(root / L.RETURNS_DIR / packs[0]["file"], swap)
    assert _ours(root) == [("sheet-added", "Scratch", "", ""),
                           ("sheet-deleted", L.MORE_SHEET, "", "")]
    (deleted,) = [i for i in collect(root, write=False).report.issues
                  if i.code == "sheet-deleted"]
    assert deleted.message == (f"The sheet '{L.MORE_SHEET}' of the workbook as sent was "
                               "deleted. No answer is read from it, so the ratings are used.")


def test_a_sheet_hidden_or_shown_is_named(tmp_path):
    root = tmp_path / "study"
    packs = _study(root)

    def flip(wb):
        wb[L.INSTRUCTIONS_SHEET].sheet_state = "hidden"
        wb[L.IDENTITY_SHEET].sheet_state = "visible"

    _edit(root / L.RETURNS_DIR / packs[0]["file"], flip)
    issues = [i for i in collect(root, write=False).report.issues if i.code in CODES]
    assert sorted((i.code, i.sheet) for i in issues) == \
        [("sheet-visibility-changed", L.INSTRUCTIONS_SHEET),
         ("sheet-visibility-changed", L.IDENTITY_SHEET)]
    shown = next(i for i in issues if i.sheet == L.IDENTITY_SHEET)
    assert f"'{L.IDENTITY_SHEET}' was hidden in the workbook as sent and is visible " \
        "now" in shown.message


def test_a_comment_on_an_answer_cell_is_named_with_its_text(tmp_path):
    root = tmp_path / "study"
    packs = _study(root)
    cell = _answer_cell(packs[0])
    threaded = ("[Threaded comment]\n\nYour version of Excel allows you to read this "
                "threaded comment; however, any edits to it will get removed if the file "
                "is opened in a newer version of Excel.\n\nComment:\n    too short")

    def note(wb):
        wb[L.SCORING_SHEET][cell].comment = Comment(WHY, "rater")
        wb[L.MORE_SHEET]["B2"].comment = Comment(threaded, "rater")

    _edit(root / L.RETURNS_DIR / packs[0]["file"], note)
    assert _ours(root) == [("cell-comment", L.MORE_SHEET, "B2", "too short"),
                           ("cell-comment", L.SCORING_SHEET, cell, WHY)]
    found = next(i for i in collect(root, write=False).report.issues
                 if i.code == "cell-comment" and i.sheet == L.SCORING_SHEET)
    assert found.message.startswith(f"Cell {cell} of sheet '{L.SCORING_SHEET}' has a "
                                    f"comment: '{WHY}'. sheetflow reads only the cells' "
                                    "values")
    assert found.severity == "warning"


def test_many_comments_are_named_up_to_twenty_then_counted(tmp_path):
    root = tmp_path / "study"
    packs = _study(root)

    def note(wb):
        for row in range(1, 26):
            wb[L.MORE_SHEET][f"H{row}"].comment = Comment(f"remark {row}", "rater")

    _edit(root / L.RETURNS_DIR / packs[0]["file"], note)
    found = [i for i in collect(root, write=False).report.issues if i.code == "cell-comment"]
    assert [i.cell for i in found if i.value] == [f"H{r}" for r in range(1, 21)]
    (rest,) = [i for i in found if not i.value]
    assert rest.cell == "H21" and "5 more cells have a comment" in rest.message


def test_a_clean_return_reads_no_comment_and_no_pack(tmp_path, monkeypatch):
    """The usual return: the zip's member names settle it, nothing more is read."""
    root = tmp_path / "study"
    _study(root)

    def refuse(*_args):
        raise AssertionError("read for a clean return")

    monkeypatch.setattr("sheetflow.collect.sheet_changes.read_comments", refuse)
    monkeypatch.setattr("sheetflow.collect.sheet_changes.open_pack", refuse)
    issues = collect(root, write=False, workers=1).report.issues
    assert not [i for i in issues if i.code in CODES]
    assert not [i for i in issues if i.severity == "error"]


def test_collect_prints_them_and_lists_them_on_the_issues_sheet(tmp_path):
    """Warnings, like text-outside-answers: named in the terminal and on the Issues
    sheet; with every pack back and no error, collect still exits 1, since what the
    rater wrote there is not read (tests/test_unread_text_exit.py)."""
    root = tmp_path / "study"
    packs = _study(root)
    cell = _answer_cell(packs[0])

    def change(wb):
        wb.create_sheet("My notes")["A1"] = "case 3 looked odd"
        wb[L.SCORING_SHEET][cell].comment = Comment(WHY, "rater")

    _edit(root / L.RETURNS_DIR / packs[0]["file"], change)
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.output.splitlines() if "sheet-added" in ln
             or "cell-comment" in ln]
    assert lines == [
        f"  warning: {packs[0]['file']} My notes: [sheet-added] The sheet 'My notes' was "
        "added to the workbook and holds 1 cell with content, which sheetflow does not "
        "read. Read it in the file: move anything meant for the study into the answer "
        "cells (a remark into a notes cell), or ignore it.",
        f"  warning: {packs[0]['file']} {L.SCORING_SHEET}, {cell}: [cell-comment] Cell "
        f"{cell} of sheet '{L.SCORING_SHEET}' has a comment: '{WHY}'. sheetflow reads only "
        "the cells' values: read it in the file, it may explain a score (a remark meant "
        "for the study belongs in a notes cell)."], result.output
    rows = list(openpyxl.load_workbook(root / "out" / "validation.xlsx")["Issues"]
                .iter_rows(values_only=True))
    for code in ("sheet-added", "cell-comment"):
        assert sum(code in row for row in rows) == 1, code


@pytest.mark.libreoffice
def test_libreoffice_round_trip_names_the_sheet_and_comment_and_nothing_else(tmp_path):
    """A sheet of notes, a comment on an answer cell and a hidden sheet, then every
    answer entered and the workbook saved by LibreOffice itself: its own xlsx names the
    three; a pack only answered in LibreOffice is named for none of them."""
    require_libreoffice()
    root, packs, noted = paired_study_with_a_copy(tmp_path, "noted.xlsx")
    cell = _answer_cell(packs[0])

    def change(wb):
        wb.create_sheet("My notes")["B2"] = "case 3 looked odd"
        wb[L.SCORING_SHEET][cell].comment = Comment(WHY, "rater")
        wb[L.MORE_SHEET].sheet_state = "hidden"

    _edit(noted, change)
    return_both_from_libreoffice(root, packs, noted, tmp_path)
    issues = collect(root, write=False).report.issues
    assert sorted((i.file, i.code, i.sheet, i.cell, i.value) for i in issues
                  if i.code in CODES) == \
        sorted([(packs[0]["file"], "sheet-added", "My notes", "", ""),
                (packs[0]["file"], "cell-comment", L.SCORING_SHEET, cell, WHY),
                (packs[0]["file"], "sheet-visibility-changed", L.MORE_SHEET, "", "")])

