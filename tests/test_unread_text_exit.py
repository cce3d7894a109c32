"""A return used that holds something its rater wrote that sheetflow does not read (text
outside the answer cells or beyond the scoring area, a sheet added, a cell comment) is
named, and ``collect`` and ``status`` exit 1 until nobody's words are left unread in
it; the other warnings about a file (a sheet renamed, hidden or shown: read as before)
keep exit 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.comments import Comment
from roundtrip_helpers import return_every_pack

from sheetflow.cli import cli
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study
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
    root = init_study(tmp_path_factory.mktemp("unread-text") / "s", "paired-rubric")
    generate_packs(root)
    return_every_pack(root)
    return root


def _returned_with(clean: Path, tmp_path: Path, change) -> tuple[Path, str]:
    """A copy of the study whose first return (by name) was changed by ``change``."""
    root = Path(shutil.copytree(clean, tmp_path / "s"))
    path = sorted((root / L.RETURNS_DIR).glob("*.xlsx"))[0]
    wb = openpyxl.load_workbook(path)
    change(wb)
    wb.save(path)
    return root, path.name


def _codes(doc: dict) -> set[str]:
    return {i["code"] for i in doc["issues"]}


@pytest.mark.parametrize("code", sorted(UNREAD))
def test_a_return_holding_text_sheetflow_does_not_read_makes_collect_exit_1(
        clean, tmp_path, code):
    root, name = _returned_with(clean, tmp_path, UNREAD[code])
    shown = CliRunner().invoke(cli, ["collect", str(root)])
    assert shown.exit_code == 1, shown.output
    assert f"[{code}]" in shown.stdout
    last = shown.stdout.splitlines()[-1]
    assert " 0 errors, " in last and last.endswith(
        " warnings; 1 return holds text sheetflow does not read: read it in the files "
        "named above"), last
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
    root, _ = _returned_with(clean, tmp_path, READ[code])
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert _codes(doc) & {*UNREAD, *READ} == {code}
    assert doc["ok"] is True and doc["unread_text"] == []
    assert CliRunner().invoke(cli, ["collect", str(root)]).exit_code == 0
    assert CliRunner().invoke(cli, ["status", str(root)]).exit_code == 0
