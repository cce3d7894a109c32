"""A return used that holds something its rater wrote that sheetflow does not read (text
outside the answer cells or beyond the scoring area, a sheet added, a cell comment) is
named, and ``collect`` and ``status`` exit 1 until nobody's words are left unread in
it; the other warnings about a file (a sheet renamed, hidden or shown: read as before)
keep exit 0."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.comments import Comment
from roundtrip_helpers import first_return_changed, paired_study_every_pack_returned

from sheetflow.cli import cli
from sheetflow.workbook import layout as L

NOTE = "case 3 looked odd to me"


def _below(ws, rows: int) -> None:
    """``NOTE`` in column B, ``rows`` rows below the sheet's last row with content."""
    ws.cell(ws.max_row + rows, 2).value = NOTE


def _comment(wb) -> None:
    ws = wb[L.SCORING_SHEET]
    cell = next(c for row in ws.iter_rows() for c in row if isinstance(c.value, str))
    cell.comment = Comment(NOTE, "rater")


UNREAD = {
    "text-outside-answers": lambda wb: _below(wb[L.INSTRUCTIONS_SHEET], 2),
    "content-outside-window": lambda wb: _below(wb[L.SCORING_SHEET], 100),
    "sheet-added": lambda wb: wb.create_sheet("My notes").__setitem__("A1", NOTE),
    "cell-comment": _comment,
}
READ = {
    "sheet-renamed": lambda wb: setattr(wb[L.SCORING_SHEET], "title", "Scores"),
    "sheet-visibility-changed": lambda wb: setattr(wb[L.INSTRUCTIONS_SHEET],
                                                   "sheet_state", "hidden"),
}


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A study whose every pack came back filled in: no error, and warnings about the
    answers only (none of these)."""
    return paired_study_every_pack_returned(tmp_path_factory.mktemp("unread-text") / "s")


def _codes(doc: dict) -> set[str]:
    return {i["code"] for i in doc["issues"]}


@pytest.mark.parametrize("code", sorted(UNREAD))
def test_a_return_holding_text_sheetflow_does_not_read_makes_collect_exit_1(
        clean, tmp_path, code):
    root, path = first_return_changed(clean, tmp_path, UNREAD[code])
    name = path.name
    shown = CliRunner().invoke(cli, ["collect", str(root)])
    assert shown.exit_code == 1, shown.output
    assert f"[{code}]" in shown.stdout
    last = shown.stdout.splitlines()[-1]
    assert " 0 errors, " in last and last.endswith(
        " warnings; 1 return holds text sheetflow does not read: read it in the files "
        f"named above (then 'sheetflow collect {root} --mark-read FILE')"), last
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert doc["ok"] is False and doc["valid"] is True and doc["unread_text"] == [name]
    assert _codes(doc) & set(UNREAD) == {code}
    assert all(f["used"] for f in doc["files"])  # a warning: the ratings are used
    status = CliRunner().invoke(cli, ["status", str(root)])
    assert status.exit_code == 1, status.output
    assert status.stdout.splitlines()[-2].endswith(
        "; 1 return holds text sheetflow does not read")
    assert status.stdout.splitlines()[-1].startswith(
        f"text sheetflow does not read is in {name}: read it in those files")
    doc = json.loads(CliRunner().invoke(cli, ["status", str(root), "--json"]).stdout)
    assert doc["ok"] is False and doc["unread_text"] == [name]


@pytest.mark.parametrize("code", sorted(READ))
def test_a_sheet_read_as_before_keeps_exit_0(clean, tmp_path, code):
    root, _ = first_return_changed(clean, tmp_path, READ[code])
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert _codes(doc) & {*UNREAD, *READ} == {code}
    assert doc["ok"] is True and doc["unread_text"] == []
    assert CliRunner().invoke(cli, ["collect", str(root)]).exit_code == 0
    assert CliRunner().invoke(cli, ["status", str(root)]).exit_code == 0


def _note_on_instructions(wb) -> None:
    UNREAD["text-outside-answers"](wb)


def test_a_return_marked_read_no_longer_makes_collect_or_status_exit_1(clean, tmp_path):
    """--mark-read records the file's name and sha256 in text-read.json: its issues
    stay, marked read, the exit code is 0 and stays 0 in the next collect and in
    status; a new version of the file (other bytes) is unread again."""
    root, path = first_return_changed(clean, tmp_path, _note_on_instructions)
    name = path.name
    shown = CliRunner().invoke(cli, ["collect", str(root), "--mark-read", name])
    assert shown.exit_code == 0, shown.output
    (line,) = [ln for ln in shown.stdout.splitlines() if "[text-outside-answers]" in ln]
    assert re.search(r" \(marked read \d{4}-\d\d-\d\d \d\d:\d\d UTC, recorded in "
                     r"text-read.json\)$", line), line
    last = shown.stdout.splitlines()[-1]
    assert last.endswith("; 1 return marked read (text-read.json)"), last
    assert "does not read" not in last
    recorded = json.loads((root / "text-read.json").read_text(encoding="utf-8"))["read"]
    digest = hashlib.sha256((root / L.RETURNS_DIR / name).read_bytes()).hexdigest()
    assert [(r["file"], r["sha256"]) for r in recorded] == [(name, digest)]
    # the next collect and status read the acknowledgement; --json says which
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert doc["ok"] is True and doc["unread_text"] == [] and doc["text_read"] == [name]
    (found,) = [i for i in doc["issues"] if i["code"] == "text-outside-answers"]
    assert found["read"].startswith("marked read ")
    ws = openpyxl.load_workbook(root / "out" / "validation.xlsx")["Issues"]
    header = [c.value for c in ws[1]]
    rows = [dict(zip(header, (c.value for c in r), strict=True))
            for r in ws.iter_rows(min_row=2)]
    (row,) = [r for r in rows if r["Code"] == "text-outside-answers"]
    assert row["Message"] == f"{found['message']} ({found['read']})"
    status = CliRunner().invoke(cli, ["status", str(root)])
    assert status.exit_code == 0, status.output
    assert status.stdout.splitlines()[-1].endswith("; 1 return marked read (text-read.json)")
    # another note: other bytes, unread again
    wb = openpyxl.load_workbook(root / L.RETURNS_DIR / name)
    wb[L.INSTRUCTIONS_SHEET]["H2"] = "and one more"
    wb.save(root / L.RETURNS_DIR / name)
    again = CliRunner().invoke(cli, ["collect", str(root), "--json"])
    assert again.exit_code == 1
    doc = json.loads(again.stdout)
    assert doc["unread_text"] == [name] and doc["text_read"] == []
    assert CliRunner().invoke(cli, ["status", str(root)]).exit_code == 1


def test_marking_read_what_holds_no_unread_text_is_a_usage_error(clean, tmp_path):
    """A file holding no such text, no file of returns/, or a file collected from
    elsewhere: exit 2 naming it, and nothing recorded or written."""
    root, path = first_return_changed(clean, tmp_path, _note_on_instructions)
    name = path.name
    other = sorted((root / L.RETURNS_DIR).glob("*.xlsx"))[1].name
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copyfile(root / L.RETURNS_DIR / name, outside / "copy.xlsx")
    for args, said in (
            ([other], f"--mark-read {other}: it holds no text sheetflow does not read"),
            (["nosuch.xlsx"], "--mark-read nosuch.xlsx: collect read no file of that name"),
            ([str(outside / "copy.xlsx"), "--mark-read", "copy.xlsx"],
             "--mark-read copy.xlsx: not in returns/")):
        if len(args) == 1:
            args = ["--mark-read", *args]
        shown = CliRunner().invoke(cli, ["collect", str(root), *args])
        assert shown.exit_code == 2, shown.output
        assert said in shown.stderr, shown.stderr
        assert not (root / "text-read.json").exists()
        assert not (root / "out" / "collection.json").exists()


def test_a_damaged_text_read_file_is_named_in_one_line(clean, tmp_path):
    root, _ = first_return_changed(clean, tmp_path, _note_on_instructions)
    (root / "text-read.json").write_text('{"read": [{"file": "x"}]}', encoding="utf-8")
    for command in ("collect", "status"):
        shown = CliRunner().invoke(cli, [command, str(root)])
        assert shown.exit_code == 2, shown.output
        (line,) = shown.stderr.splitlines()
        assert "text-read.json: entry 1 of \"read\" is not a file name" in line
