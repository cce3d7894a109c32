"""The fast read path: calamine and openpyxl agree, the manifest index, the ratings
spool, batch times, and locked text found again after inserted rows."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect.file_check import RATING_COLUMNS, neutralise
from sheetflow.collect.reader import _non_empty, _openpyxl_window, open_book
from sheetflow.collect.run import collect
from sheetflow.collect.values import Formula
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import open_manifest, read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


def _study(tmp: Path, template: str) -> tuple[Path, list[dict]]:
    root = tmp / template
    init_study(root, template)
    generate_packs(root)
    manifest = read_manifest(root / "packs" / "manifest.json")
    (root / "returns").mkdir(exist_ok=True)
    return root, manifest["packs"]


@pytest.fixture(scope="module")
def paired(tmp_path_factory):
    root, packs = _study(tmp_path_factory.mktemp("paired"), "paired-rubric")
    for pack in packs:
        fill_openpyxl(root / "packs" / pack["file"], root / "returns" / pack["file"],
                      plan_answers(pack))
    return root, packs


def _answer_cells(pack, dimension):
    return [a["cell"] for a in L.iter_answer_cells(pack)
            if a["dimension"] == dimension and a["part"] == "value"]


def test_calamine_and_openpyxl_read_the_same_cells(paired, tmp_path):
    root, packs = paired
    pack = packs[0]
    path = tmp_path / "formula.xlsx"
    wb = openpyxl.load_workbook(root / "returns" / pack["file"])
    count = _answer_cells(pack, "depth")[0]
    wb[L.SCORING_SHEET][count].value = '=1+1&"x"'
    wb.save(path)
    book = open_book(path)
    for sheet, (rows, cols) in ((L.SCORING_SHEET, (400, 10)), (L.IDENTITY_SHEET, (60, 4))):
        fast = book.cells(sheet, rows, cols)
        slow = _openpyxl_window(str(path), sheet, rows, cols)
        assert fast.keys() == slow.keys()
        for key, value in slow.items():
            other = fast[key]
            assert (other == value or float(other) == float(value)), (key, value, other)
    row, col = (int(count[1:]), ord(count[0]) - 64)
    assert book.cells(L.SCORING_SHEET, 400, 10)[(row, col)] == Formula('1+1&"x"')
    book.close()


def test_grid_cells_are_placed_right_after_a_longer_or_wider_grid():
    """The places of a grid's cells are kept from grid to grid: a shorter, narrower or
    wider grid read after another still has each value at its own row and column."""
    def grid(rows, width):
        return [[f"{r}:{c}" if (r + c) % 3 else "" for c in range(1, width + 1)]
                for r in range(1, rows + 1)]

    def expected(rows, width, cols):
        return {(r, c): f"{r}:{c}" for r in range(1, rows + 1)
                for c in range(1, min(width, cols) + 1) if (r + c) % 3}

    for rows, width, cols in ((40, 5, 9), (7, 5, 9), (3, 5, 2), (50, 6, 9), (2, 6, 4),
                              (45, 5, 9), (300, 900, 900)):
        assert _non_empty(grid(rows, width), cols) == expected(rows, width, cols)


def test_manifest_index_matches_the_json(paired):
    root, packs = paired
    manifest = open_manifest(root)
    assert not manifest.temporary
    assert [manifest.pack(h) for h in manifest.heads] == packs
    assert manifest.top["study_id"] and "packs" not in manifest.top


def test_manifest_in_another_form_is_read_whole(paired, tmp_path):
    root, packs = paired
    other = tmp_path / "pretty"
    shutil.copytree(root, other)
    path = other / "packs" / "manifest.json"
    path.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=1),
                    encoding="utf-8")
    # as a study generated in that form: its seal records that manifest
    lock = other / "sealed" / "plan.lock.json"
    record = json.loads(lock.read_text(encoding="utf-8"))
    record["manifest_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    lock.write_text(json.dumps(record), encoding="utf-8")
    manifest = open_manifest(other)
    assert manifest.temporary and [manifest.pack(h) for h in manifest.heads] == packs
    copy = Path(manifest.path)
    manifest.close()
    assert not copy.exists()
    fast, slow = collect(root, write=False), collect(other, write=False)
    assert fast.to_dict() == slow.to_dict() and list(fast.ratings) == list(slow.ratings)


def test_ratings_spool_csv_and_frame_agree(paired):
    root, _ = paired
    result = collect(root)
    rows = list(result.ratings)
    assert len(rows) == len(result.ratings) > 0
    assert all(tuple(r) == RATING_COLUMNS for r in rows)
    keys = [(r["rater_id"], r["sitting"], r["case_id"], r["label"], r["dimension"],
             r["field"], r["file"]) for r in rows]
    assert keys == sorted(keys)
    frame = result.ratings.to_frame()
    assert frame.to_dict("records") == rows
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(RATING_COLUMNS)
    for row in rows:
        writer.writerow([neutralise(row[c]) for c in RATING_COLUMNS])
    assert (root / "out" / "ratings.csv").read_bytes() == buf.getvalue().encode("utf-8")


def _insert(src: Path, dst: Path, row: int, count: int = 2) -> None:
    wb = openpyxl.load_workbook(src)
    wb[L.SCORING_SHEET].insert_rows(row, count)
    wb.save(dst)


def _study_without_returns(root: Path, tmp_path: Path) -> Path:
    """A copy of the study at ``tmp_path / "study"``, its returns and outputs left out
    (an empty ``returns/``)."""
    study = tmp_path / "study"
    shutil.copytree(root, study, ignore=shutil.ignore_patterns("returns", "out"))
    (study / "returns").mkdir(exist_ok=True)
    return study


@pytest.mark.parametrize("where", ["below-text", "above-title", "between-cards"])
def test_rows_inserted_near_locked_text_are_not_edits(paired, tmp_path, where):
    root, packs = paired
    pack = packs[1]
    card = pack["cards"][1]
    first_line = min(int(a["cell"][1:]) for r in card["rows"]
                     for a in L.iter_answer_cells({"cards": [{**card, "case_answers": {}}]})
                     if a["row_id"] == r["row_id"])
    title = int(card["title"]["cell"][1:])
    row = {"below-text": first_line, "above-title": title, "between-cards": title - 1}[where]
    study = _study_without_returns(root, tmp_path)
    _insert(root / "returns" / pack["file"], study / "returns" / pack["file"], row)
    codes = {i.code for i in collect(study, write=False).report.issues}
    assert "row-inserted" in codes
    assert "locked-text-changed" not in codes


def _locked_text_changed(paired: tuple[Path, list[dict]], tmp_path: Path, card_no: int,
                         change: Callable[[Any, str], None]) -> tuple[Path, dict, str]:
    """A copy of the study whose one return is the second pack's, the Scoring sheet
    changed by ``change(sheet, cell)`` where ``cell`` holds the first locked text of its
    card ``card_no``; the copy, that card and that cell."""
    root, packs = paired
    pack = packs[1]
    card = pack["cards"][card_no]
    study = _study_without_returns(root, tmp_path)
    text_cell = card["rows"][0]["locked"][0]["cells"][0]
    wb = openpyxl.load_workbook(root / "returns" / pack["file"])
    change(wb[L.SCORING_SHEET], text_cell)
    wb.save(study / "returns" / pack["file"])
    return study, card, text_cell


def test_an_edit_between_inserted_rows_is_still_found(paired, tmp_path):
    def edit_then_insert_a_row_below(ws, text_cell: str) -> None:
        ws[text_cell].value = "Edited."
        ws.insert_rows(int(text_cell[1:]) + 1, 1)

    study, _, _ = _locked_text_changed(paired, tmp_path, 1, edit_then_insert_a_row_below)
    codes = {i.code for i in collect(study, write=False).report.issues}
    assert "locked-text-changed" in codes


@pytest.mark.parametrize("change", ["formula", "number", "emptied", "edited"])
def test_locked_text_changed_in_place_is_found_in_its_card(paired, tmp_path, change):
    """With no line moved, each locked field is checked where the pack put it: a
    field whose cell now holds a formula giving its text, a number, nothing or other
    words is named, in its own card and no other."""
    def replace(ws, text_cell: str) -> None:
        text = str(ws[text_cell].value)
        ws[text_cell].value = {"formula": '="' + text.replace('"', '""')[:200] + '"',
                               "number": 12, "emptied": None, "edited": text + "."}[change]

    study, card, text_cell = _locked_text_changed(paired, tmp_path, 2, replace)
    found = [(i.code, i.case, i.cell) for i in collect(study, write=False).report.issues
             if i.code == "locked-text-changed"]
    assert found == [("locked-text-changed", L.case_name(card), text_cell)]


DAY = dt.datetime(2026, 11, 2)


def _fill_batches(root: Path, pack: dict, times: dict[str, object]) -> None:
    wb = openpyxl.load_workbook(root / "packs" / pack["file"])
    ws = wb[L.SCORING_SHEET]
    for cell, (value, _) in plan_answers(pack).items():
        ws[cell].value = value
    for cell, value in times.items():
        ws[cell].value = value
    wb.save(root / "returns" / pack["file"])


@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    root, packs = _study(tmp_path_factory.mktemp("batches"), "keep-known")
    pack = next(p for p in packs if p["batches"] and p["sitting"] == 1)
    b1, b2, b3 = pack["batches"][:3]
    _fill_batches(root, pack, {
        b1["start"]["cell"]: DAY.replace(hour=9), b1["end"]["cell"]: DAY.replace(hour=8, minute=30),
        b2["start"]["cell"]: DAY.replace(hour=10),
        b3["start"]["cell"]: "after lunch", b3["end"]["cell"]: dt.time(11, 0)})
    result = collect(root, write=False)
    return result, pack


def test_batch_times_are_checked(batches):
    result, pack = batches
    found = {(i.code, i.cell) for i in result.report.issues}
    b1, b2, b3 = pack["batches"][:3]
    assert ("batch-time-order", b1["end"]["cell"]) in found
    assert ("batch-time-missing", b2["end"]["cell"]) in found
    assert not any(cell == b2["start"]["cell"] for _, cell in found)
    assert ("batch-time-invalid", b3["start"]["cell"]) in found
    assert ("batch-time-no-date", b3["end"]["cell"]) in found  # a time of day alone
    rows = {(r["field"], r["value"]) for r in result.ratings if r["dimension"] == "batch"}
    assert ("1:start", "2026-11-02T09:00:00") in rows and ("1:end", "2026-11-02T08:30:00") in rows
    assert all(i.severity == "warning" for i in result.report.issues
               if i.code.startswith("batch-time"))


@pytest.mark.parametrize("hours_later,warned", [(20, True), (30, False)])
def test_sitting_two_less_than_24_hours_after_sitting_one_is_warned(tmp_path, hours_later,
                                                                     warned):
    root, packs = _study(tmp_path, "keep-known")
    rater = packs[0]["rater_id"]
    first = next(p for p in packs if p["rater_id"] == rater and p["sitting"] == 1)
    second = next(p for p in packs if p["rater_id"] == rater and p["sitting"] == 2)
    ended = DAY.replace(hour=17)
    _fill_batches(root, first, {c: ended - dt.timedelta(hours=1) if b["start"] is c_ref else ended
                                for b in first["batches"] for c_ref in (b["start"], b["end"])
                                for c in [c_ref["cell"]]})
    begun = ended + dt.timedelta(hours=hours_later)
    _fill_batches(root, second, {b[part]["cell"]: begun + dt.timedelta(minutes=40 * (part == "end"))
                                 for b in second["batches"] for part in ("start", "end")})
    result = collect(root, write=False)
    gaps = [i for i in result.report.issues if i.code == "sitting-too-soon"]
    if not warned:
        assert gaps == []
        return
    assert gaps and all(i.file == second["file"] and i.severity == "warning" for i in gaps)
    assert gaps[0].cell == second["batches"][0]["start"]["cell"]
    assert f"{hours_later:.1f} h after sitting 1 ended (2026-11-02 17:00)" in gaps[0].message


def test_csv_lines_are_what_csv_writer_writes():
    from sheetflow.collect.file_check import ROW_FIELDS, RatingBlock, csv_lines

    tricky = ['a","b', '"', '=1+1', '-1', 'line\r\nbreak', '＝x', '', '@x', 'tab\there']
    rows = [tuple(tricky[(i + k) % len(tricky)] for k in range(len(ROW_FIELDS)))
            for i in range(len(tricky))]
    block = RatingBlock('st"udy', "+R1", "1", "Sc\"ore", "-f.xlsx", "ab" * 32, rows)
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    for row in block.dicts():
        writer.writerow([neutralise(row[c]) for c in RATING_COLUMNS])
    assert csv_lines(block) == buf.getvalue().encode("utf-8")


def test_manifest_with_one_entry_in_another_order_is_read_whole(paired, tmp_path):
    root, packs = paired
    data = read_manifest(root / "packs" / "manifest.json")
    data["packs"][1] = dict(reversed(list(data["packs"][1].items())))
    (tmp_path / "packs").mkdir()
    (tmp_path / "packs" / "manifest.json").write_text(
        json.dumps(data, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
    manifest = open_manifest(tmp_path)
    try:
        assert manifest.temporary and [manifest.pack(h) for h in manifest.heads] == packs
    finally:
        manifest.close()


def test_outputs_of_a_collection_made_without_writing(paired, tmp_path):
    from sheetflow.collect.run import write_outputs

    root, _ = paired
    written = collect(root)
    quiet = collect(root, write=False)
    paths = write_outputs(tmp_path, quiet)
    assert Path(paths["ratings"]).read_bytes() == Path(written.outputs["ratings"]).read_bytes()
