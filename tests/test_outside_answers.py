"""Text a rater types outside the answer cells is named (``text-outside-answers``),
never dropped in silence; a clean return, however it was saved, says nothing."""

from __future__ import annotations

import shutil

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.cell.cell import MergedCell
from return_helpers import (
    assert_old_manifest_skips,
    coded,
    edit_cells,
    filled_return,
    first_pack,
)
from roundtrip_helpers import (
    fill_libreoffice_many,
    libreoffice_profile,
    plan_answers,
    require_libreoffice,
)

from sheetflow.cli import cli
from sheetflow.collect.file_check import _Plan
from sheetflow.collect.reader import open_book
from sheetflow.collect.run import collect
from sheetflow.collect.safety import scan_sheet
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study, list_templates
from sheetflow.workbook import layout as L

CODE = "text-outside-answers"
NOTE = "my note here"


def _ours(issues) -> list:
    return coded(issues, CODE)


def _blank_locked_cells(ws, first_row: int = L.HEADER_ROWS + 1) -> list[str]:
    """Cells of the Scoring sheet's cards a rater cannot answer in and that are empty."""
    found = []
    for row in ws.iter_rows(min_row=first_row, max_row=ws.max_row, max_col=5):
        for c in row[1:]:
            if c.value is None and not isinstance(c, MergedCell) and c.protection.locked:
                found.append(c.coordinate)
    return found






def test_generate_records_the_cells_a_reader_sees_on_each_visible_sheet(tmp_path):
    """The counts in the manifest are what collect's reader finds in the pack as
    written (a cell holding "" does not count: openpyxl drops it, Excel keeps it)."""
    for template in sorted(list_templates()):
        root = tmp_path / template
        init_study(root, template)
        generate_packs(root)
        for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
            recorded = pack["sheet_cells"]
            assert set(recorded) == {L.INSTRUCTIONS_SHEET, L.SCORING_SHEET, L.MORE_SHEET}
            book = open_book(root / L.PACKS_DIR / pack["file"])
            for sheet, count in recorded.items():
                rows, cols = book.extents[sheet]
                assert len(book.cells(sheet, rows, cols)) == count, (template, sheet)
            # all of the Scoring sheet's within the window collect reads and counts
            assert len(book.cells(L.SCORING_SHEET, *_Plan(pack).window)) == \
                recorded[L.SCORING_SHEET], template
            book.close()


def test_the_scan_counts_the_cells_with_content():
    plain = (b'<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" s="3"/>'
             b'<c r="C1"><f>1+1</f><v>2</v></c></row><row r="2"><c r="A2" s="1"/>'
             b'<c r="B2" t="inlineStr"><is><t>x</t></is></c></row></sheetData>')
    assert scan_sheet(plain).cells == 3
    # an error cell sends the scan down its slower, positional path: the same count
    odd = plain.replace(b'<c r="A2" s="1"/>', b'<c r="A2" t="e"><v>#N/A</v></c>')
    assert scan_sheet(odd).cells == 4


def test_notes_on_the_scoring_and_instruction_sheets_are_named(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    ws = openpyxl.load_workbook(ret)[L.SCORING_SHEET]
    cell = _blank_locked_cells(ws)[0]
    edit_cells(ret, {(L.SCORING_SHEET, cell): NOTE, (L.MORE_SHEET, "H3"): "another note",
                 (L.INSTRUCTIONS_SHEET, "E5"): "a third note"})
    issues = _ours(collect(root, write=False).report.issues)
    got = sorted((i.sheet, i.cell, i.value, i.severity) for i in issues)
    assert got == sorted([(L.SCORING_SHEET, cell, NOTE, "warning"),
                          (L.MORE_SHEET, "H3", "another note", "warning"),
                          (L.INSTRUCTIONS_SHEET, "E5", "a third note", "warning")])
    note = next(i for i in issues if i.sheet == L.SCORING_SHEET)
    assert note.file == pack["file"]
    assert f"Cell {cell} of sheet '{L.SCORING_SHEET}' holds '{NOTE}'" in note.message
    assert "may be a note from the rater" in note.message
    assert "yellow cells" in note.message
    result = collect(root, write=False)
    assert result.report.files[0].used  # a warning: the ratings still count


def test_a_long_note_is_quoted_cut_like_other_values(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.MORE_SHEET, "H3"): "word " * 100})
    (found,) = _ours(collect(root, write=False).report.issues)
    assert found.value.endswith("...") and len(found.value) == 80
    assert "word " * 100 not in found.message


def test_a_pasted_block_is_named_up_to_twenty_cells_then_counted(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.MORE_SHEET, f"H{r}"): f"pasted {r}" for r in range(1, 36)})
    issues = _ours(collect(root, write=False).report.issues)
    named = [i for i in issues if i.value]
    assert [i.cell for i in named] == [f"H{r}" for r in range(1, 21)]
    (rest,) = [i for i in issues if not i.value]
    assert rest.cell == "H21"
    assert "15 more cells" in rest.message and "first 20" in rest.message


def test_content_far_out_on_an_instructions_sheet_is_said(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.INSTRUCTIONS_SHEET, "XFD1048576"): NOTE})
    (found,) = _ours(collect(root, write=False).report.issues)
    assert found.sheet == L.INSTRUCTIONS_SHEET
    assert "as far as XFD1048576, beyond the first 100,000 rows" in found.message


def test_a_clean_return_reads_no_pack_and_says_nothing(tmp_path, monkeypatch):
    """Filled in, and sent back as it was sent: nothing to name, and the pack in
    packs/ is never opened (the counts settle it)."""
    root = tmp_path / "study"
    pack = first_pack(root)
    filled_return(root, pack)
    shutil.copyfile(root / L.PACKS_DIR / pack["file"], root / "returns" / "as-sent.xlsx")

    def refuse(checker):
        raise AssertionError("the pack was read for a clean return")

    monkeypatch.setattr("sheetflow.collect.outside_answers.open_pack", refuse)
    issues = collect(root, write=False, workers=1).report.issues
    assert not _ours(issues)
    assert not [i for i in issues if i.severity == "error" and i.code != "pack-as-sent"]


def _second_card_row(pack: dict) -> int:
    """The row of the second card's first answer line in the pack."""
    return _Plan(pack).anchors[1][0]


def test_rows_inserted_without_text_name_nothing_on_the_scoring_sheet(tmp_path):
    """Rows inserted move every cell below them: each row is compared with the pack's
    row it holds, so nothing moved is taken for text typed; other sheets still are."""
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    wb = openpyxl.load_workbook(ret)
    wb[L.SCORING_SHEET].insert_rows(_second_card_row(pack) - 3, 2)
    wb[L.MORE_SHEET]["H3"] = NOTE
    wb.save(ret)
    issues = collect(root, write=False).report.issues
    assert [(i.sheet, i.cell) for i in _ours(issues)] == [(L.MORE_SHEET, "H3")]
    assert "row-inserted" in {i.code for i in issues}


def test_text_typed_in_inserted_rows_is_named(tmp_path):
    """row-inserted is a warning and the ratings are used: a note typed in a row the
    rater inserted, or beside a row the insertion moved, was never looked at."""
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    wb = openpyxl.load_workbook(ret)
    ws = wb[L.SCORING_SHEET]
    at = _second_card_row(pack) - 3
    ws.insert_rows(at, 2)
    ws[f"C{at}"] = NOTE
    ws[f"B{at + 1}"] = "a second note"
    ws[f"H{at + 2}"] = "beside a moved row"  # the pack's row `at`, two rows down now
    wb.save(ret)
    result = collect(root, write=False)
    issues = result.report.issues
    assert "row-inserted" in {i.code for i in issues}
    assert sorted((i.sheet, i.cell, i.value) for i in _ours(issues)) == [
        (L.SCORING_SHEET, f"B{at + 1}", "a second note"),
        (L.SCORING_SHEET, f"C{at}", NOTE),
        (L.SCORING_SHEET, f"H{at + 2}", "beside a moved row")]
    assert result.report.files[0].used
    assert result.report.unread_text_files() == [pack["file"]]


def test_text_typed_beside_cards_swapped_is_named(tmp_path):
    """rows-reordered (the first two cards swapped, each whole) is a warning too: a
    note beside a moved row is named, and nothing the swap moved."""
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    wb = openpyxl.load_workbook(ret)
    ws = wb[L.SCORING_SHEET]
    titles = [(r, str(ws.cell(r, 2).value or "")) for r in range(1, ws.max_row + 1)]
    starts = [r for r, text in titles  # a card's title, not its "...: scores" heading
              if text.startswith(("Case 1 of", "Case 2 of", "Case 3 of")) and ":" not in text]
    first, second, third = starts
    ws.move_range(f"A{first}:M{second - 1}", rows=1000)  # out of the way
    ws.move_range(f"A{second}:M{third - 1}", rows=first - second)
    moved_to = first + third - second  # the first card, after the second
    ws.move_range(f"A{first + 1000}:M{second + 999}", rows=moved_to - first - 1000)
    ws[f"H{moved_to + 1}"] = NOTE  # the first card's Prompt row, swapped down
    wb.save(ret)
    result = collect(root, write=False)
    issues = result.report.issues
    assert "rows-reordered" in {i.code for i in issues}
    assert [(i.sheet, i.cell, i.value) for i in _ours(issues)] == [
        (L.SCORING_SHEET, f"H{moved_to + 1}", NOTE)]
    assert result.report.files[0].used


def test_a_pack_changed_after_generate_is_said_not_guessed(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.MORE_SHEET, "H3"): NOTE, (L.MORE_SHEET, "H4"): NOTE})
    packed = root / L.PACKS_DIR / pack["file"]
    packed.write_bytes(packed.read_bytes() + b"\0")
    (found,) = _ours(collect(root, write=False).report.issues)
    assert found.sheet == L.MORE_SHEET and not found.cell
    assert "2 more cells with content" in found.message
    assert f"packs/{pack['file']} is not the workbook generate wrote" in found.message
    packed.unlink()
    (found,) = _ours(collect(root, write=False).report.issues)
    assert f"packs/{pack['file']} is missing" in found.message


def test_a_manifest_without_counts_skips_the_check(tmp_path):
    """A manifest from before the counts were recorded: the check is not done (and
    the collect still works)."""
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.MORE_SHEET, "H3"): NOTE})
    assert_old_manifest_skips(root, "sheet_cells", CODE)


def test_collect_prints_the_file_sheet_and_cell(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.MORE_SHEET, "H3"): NOTE})
    result = CliRunner().invoke(cli, ["collect", str(root)])
    lines = [ln for ln in result.output.splitlines() if CODE in ln]
    assert lines == [f"  warning: {pack['file']} {L.MORE_SHEET}, H3: [{CODE}] Cell H3 of "
                     f"sheet '{L.MORE_SHEET}' holds '{NOTE}', where the workbook as sent "
                     "had nothing. sheetflow reads only the answer cells: read it in the "
                     "file, it may be a note from the rater (answers belong in the yellow "
                     "cells)."], result.output


@pytest.mark.libreoffice
def test_libreoffice_round_trip_names_the_note_and_nothing_else(tmp_path):
    """A note typed into the pack, then every answer entered and the workbook saved by
    LibreOffice itself: its own xlsx names the note, and nothing LibreOffice wrote; a
    pack only answered in LibreOffice has its counts match, so its pack is never read:
    it is replaced by other bytes before collect, which the slow path would name
    ("cannot be told"), and nothing is said of it. (A patched reader in the test
    process would not do: the reader children are fresh interpreters whenever the
    process runs threads, as it does after the mail tests.)"""
    require_libreoffice()
    root = tmp_path / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    (root / "returns").mkdir(exist_ok=True)
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][:2]
    noted = tmp_path / "noted.xlsx"
    shutil.copyfile(root / L.PACKS_DIR / packs[0]["file"], noted)
    cell = _blank_locked_cells(openpyxl.load_workbook(noted)[L.SCORING_SHEET])[0]
    edit_cells(noted, {(L.MORE_SHEET, "H3"): NOTE, (L.SCORING_SHEET, cell): "beside a case"})
    jobs = [(noted, root / "returns" / packs[0]["file"], plan_answers(packs[0])),
            (root / L.PACKS_DIR / packs[1]["file"], root / "returns" / packs[1]["file"],
             plan_answers(packs[1]))]
    fill_libreoffice_many(jobs, libreoffice_profile(tmp_path))
    (root / L.PACKS_DIR / packs[1]["file"]).write_bytes(b"not the pack generate wrote")
    issues = collect(root, write=False).report.issues
    assert sorted((i.file, i.sheet, i.cell, i.value) for i in _ours(issues)) == \
        sorted([(packs[0]["file"], L.MORE_SHEET, "H3", NOTE),
                (packs[0]["file"], L.SCORING_SHEET, cell, "beside a case")])
