"""Text typed over the pack's own cells outside the answer cells (an instruction, a
case title, a guide, a formula, the hidden row table) is named (``sent-text-changed``);
a clean return, however it was saved, says nothing and reads no pack."""

from __future__ import annotations

import openpyxl
import pytest
from click.testing import CliRunner
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
from sheetflow.collect.sent_cells import sheet_digest
from sheetflow.collect.values import ExcelError, Formula
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study, list_templates
from sheetflow.workbook import layout as L
from sheetflow.workbook import sent_cells as S

CODE = "sent-text-changed"


def _ours(issues) -> list:
    return coded(issues, CODE)


def _cells(pack: dict) -> dict[str, str]:
    """Some fixed cells of the pack's first card: its title, a response heading, a
    guide, a formula (points earned) and the progress formula."""
    card = pack["cards"][0]
    title = card["title"]["cell"]
    first = _Plan(pack).anchors[0][0]
    return {"title": title, "heading": f"B{int(title[1:]) + 3}", "guide": f"G{first}",
            "points": f"C{first + 1}", "progress": L.PROGRESS_CELL}


def _sheet_cells(book, pack: dict, name: str) -> tuple[dict, set]:
    if name == L.SCORING_SHEET:
        plan = _Plan(pack)
        return book.cells(name, *plan.window), set(plan.positions.values())
    rows, cols = book.extents[name]
    return book.cells(name, rows, cols), set()


def test_generate_records_digests_collect_makes_again_from_each_pack(tmp_path):
    for template in sorted(list_templates()):
        root = tmp_path / template
        init_study(root, template)
        generate_packs(root)
        for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
            recorded = pack["sheet_digests"]
            assert set(recorded) == {L.INSTRUCTIONS_SHEET, L.SCORING_SHEET, L.MORE_SHEET}
            book = open_book(root / L.PACKS_DIR / pack["file"])
            for name, digest in recorded.items():
                assert sheet_digest(*_sheet_cells(book, pack, name)) == digest, \
                    (template, name)
            book.close()


def test_text_typed_over_the_packs_own_cells_is_named(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    at = _cells(pack)
    edits = {(L.INSTRUCTIONS_SHEET, "B5"): "Changed instruction text",
             (L.SCORING_SHEET, at["title"]): "ZZZZ",
             (L.SCORING_SHEET, at["heading"]): "Response A (the improved system)",
             (L.SCORING_SHEET, at["guide"]): None,
             (L.SCORING_SHEET, at["points"]): 5,
             (L.MORE_SHEET, "B2"): "More, changed"}
    before = edit_cells(ret, edits)
    assert all(before.values())  # each held something in the pack
    result = collect(root, write=False)
    got = {(i.sheet, i.cell): i for i in _ours(result.report.issues)}
    assert set(got) == set(edits)
    title = got[(L.SCORING_SHEET, at["title"])]
    assert title.severity == "warning" and title.value == "ZZZZ"
    assert f"Cell {at['title']} of sheet 'Scoring' holds 'ZZZZ', where the workbook as " \
        f"sent had '{before[(L.SCORING_SHEET, at['title'])]}'" in title.message
    assert "is empty, where" in got[(L.SCORING_SHEET, at["guide"])].message
    assert "holds '5', where the workbook as sent had a formula there" in \
        got[(L.SCORING_SHEET, at["points"])].message
    assert result.report.files[0].used  # a warning: the ratings still count
    # nothing else said of it: no text typed where the pack had none
    assert not [i for i in result.report.issues if i.code == "text-outside-answers"]


def test_the_progress_formula_replaced_makes_collect_exit_1(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.SCORING_SHEET, L.PROGRESS_CELL): "All done"})
    result = CliRunner().invoke(cli, ["collect", str(root)])
    lines = [ln for ln in result.output.splitlines() if CODE in ln]
    assert lines == [f"  warning: {pack['file']} {L.SCORING_SHEET}, {L.PROGRESS_CELL}: "
                     f"[{CODE}] Cell {L.PROGRESS_CELL} of sheet 'Scoring' holds 'All done', "
                     "where the workbook as sent had a formula there. sheetflow reads only "
                     "the answer cells: read it in the file, it may be a note from the rater "
                     "(answers belong in the yellow cells)."], result.output
    assert result.exit_code == 1
    assert "1 return holds text sheetflow does not read" in result.output
    marked = CliRunner().invoke(cli, ["collect", str(root), "--mark-read", pack["file"]])
    assert "marked read" in marked.output


def test_an_edited_row_table_names_its_rows(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    first = L.IDENTITY_ROW_TABLE_FIRST
    wb = openpyxl.load_workbook(ret)
    ws = wb[L.IDENTITY_SHEET]
    ws[f"A{first}"], ws[f"A{first + 1}"] = ws[f"A{first + 1}"].value, ws[f"A{first}"].value
    ws[f"D{first + 3}"] = "0" * 64
    wb.save(ret)
    issues = _ours(collect(root, write=False).report.issues)
    assert [(i.sheet, i.cell) for i in issues] == [
        (L.IDENTITY_SHEET, f"A{first}"), (L.IDENTITY_SHEET, f"A{first + 1}"),
        (L.IDENTITY_SHEET, f"A{first + 3}")]
    assert f"Row {first + 3} of the hidden sheet '_sheetflow'" in issues[2].message
    assert " | " + "0" * 40 in issues[2].value


def test_a_manifest_without_digests_skips_the_check(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.SCORING_SHEET, _cells(pack)["title"]): "ZZZZ"})
    assert_old_manifest_skips(root, "sheet_digests", CODE)


def test_a_changed_sheet_whose_pack_is_gone_is_said_not_guessed(tmp_path):
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.INSTRUCTIONS_SHEET, "B5"): "Changed"})
    (root / L.PACKS_DIR / pack["file"]).unlink()
    (found,) = _ours(collect(root, write=False).report.issues)
    assert found.sheet == L.INSTRUCTIONS_SHEET and not found.cell
    assert f"packs/{pack['file']} is missing" in found.message


@pytest.mark.libreoffice
def test_a_libreoffice_save_changes_no_digest(tmp_path):
    """Packs answered and saved by LibreOffice: nothing is said, and the packs are never
    read (each is replaced by other bytes before collect, which the slow path would
    name: "cannot be told")."""
    require_libreoffice()
    root = tmp_path / "study"
    init_study(root, "paired-rubric")
    generate_packs(root)
    (root / "returns").mkdir(exist_ok=True)
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][:2]
    jobs = [(root / L.PACKS_DIR / p["file"], root / "returns" / p["file"], plan_answers(p))
            for p in packs]
    fill_libreoffice_many(jobs, libreoffice_profile(tmp_path))
    for p in packs:
        (root / L.PACKS_DIR / p["file"]).write_bytes(b"not the pack generate wrote")
    issues = collect(root, write=False).report.issues
    assert not _ours(issues)
    assert not [i for i in issues if i.code == "text-outside-answers"]


def test_a_cell_emptied_and_another_written_names_both(tmp_path):
    """The count of cells with content is as sent; the digest still shows the change,
    and the text written where the pack had none is named too."""
    root = tmp_path / "study"
    pack = first_pack(root)
    ret = filled_return(root, pack)
    edit_cells(ret, {(L.MORE_SHEET, "B2"): None, (L.MORE_SHEET, "H3"): "a note"})
    issues = collect(root, write=False).report.issues
    assert sorted((i.code, i.cell) for i in issues if i.sheet == L.MORE_SHEET) == [
        (CODE, "B2"), ("text-outside-answers", "H3")]


def test_a_value_typed_over_a_total_says_the_recomputed_total_is_used(tmp_path):
    """A 90 typed over the total's formula read "it may be a note from the rater" and
    no more: the total sheetflow uses is recomputed from the scores, and the warning
    says so with both values (or, where no total could be recomputed, that the value
    typed is not used)."""
    root = tmp_path / "study"
    pack = first_pack(root, "anchored-plan")
    ret = filled_return(root, pack)
    card = pack["cards"][0]
    row = card["rows"][0]
    (total_id, where), = row["derived"].items()
    answers = plan_answers(pack)
    parts = next(t for t in load_study(root).rubric.totals if t.id == total_id).of
    recomputed = sum(answers[row["answers"][d]["cell"]][0] for d in parts)
    assert recomputed != 999
    edit_cells(ret, {(L.SCORING_SHEET, where["cell"]): 999})
    (found,) = _ours(collect(root, write=False).report.issues)
    assert found.cell == where["cell"]
    assert (f"holds '999', where the workbook as sent had a formula there: the total of "
            f"case {L.case_name(card)}, which sheetflow recomputes from the scores and uses: "
            f"{recomputed:g}, not the 999 typed. sheetflow reads only") in found.message
    # a score left blank: no total to name, still not the value typed
    edit_cells(ret, {(L.SCORING_SHEET, row["answers"][parts[0]]["cell"]): None})
    (found,) = _ours(collect(root, write=False).report.issues)
    assert "which sheetflow recomputes from the scores (not from the value typed). " \
        in found.message


@pytest.mark.parametrize("extra", [{}, {(3, 1): True}, {(3, 1): ExcelError("#N/A")}])
def test_the_digest_of_read_cells_is_the_digest_of_their_canonical_values(extra):
    """Text, numbers and formulas are digested by whole lists, anything else cell by
    cell: either way the digest is that of each cell's canonical value, in reading
    order, without the cells skipped or holding ""."""
    cells = {(2, 2): "b", (1, 3): 2.5, (1, 1): Formula("A2+1"), (2, 1): "",
             (1, 2): "a", (9, 9): "skipped", (4, 1): Formula("B1"), **extra}
    kept = {p: v for p, v in cells.items() if p != (9, 9) and v != ""}
    want = S.digest([(p, S.FORMULA if isinstance(v, Formula) else S.canonical(v))
                     for p, v in kept.items()])
    assert sheet_digest(cells, {(9, 9)}) == want
    assert sheet_digest({p: v for p, v in cells.items() if p != (9, 9)}, set()) == want
