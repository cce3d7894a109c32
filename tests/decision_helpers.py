"""What the protocol decision tests read after ``sheetflow analyze``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
from click.testing import CliRunner

from sheetflow.cli import cli


def run_analyze(root: Path, *args: str) -> tuple[Any, dict[str, Any], list[str]]:
    """``sheetflow analyze ROOT ARGS``: the CLI result, ``summary.json`` and the text of the
    Summary sheet's first column, row by row (blank rows left out)."""
    result = CliRunner().invoke(cli, ["analyze", str(root), *args])
    summary = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    rows = [str(r[0]) for r in sheet.iter_rows(max_col=1, values_only=True) if r[0] is not None]
    return result, summary, rows


def passed_cell(root: Path, check: str) -> str:
    """The Summary sheet's "passed" cell (column D) on the row of the check named
    ``check``, as written."""
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    return next(r[3] for r in sheet.iter_rows(max_col=4, values_only=True) if r[0] == check)


def refused_before_unsealing(root: Path, *words: str) -> str:
    """``sheetflow analyze ROOT`` on an incomplete panel: exit 1, one line naming who is
    missing (each of ``words``), and nothing written: the key stays sealed."""
    before = sorted(p.name for p in (root / "out").iterdir())
    result = CliRunner().invoke(cli, ["analyze", str(root)])
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: the panel is incomplete, so "
                                                   "nothing was unsealed"), lines
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert sorted(p.name for p in (root / "out").iterdir()) == before
    assert not (root / "out" / "summary.json").exists()
    return lines[0]


KEEP = object()
"""Returned by a ``fill_returns`` answer function: leave the cell as generated."""


def fill_returns(root: Path, answer: Callable[[dict[str, Any], dict[str, Any]], Any]
                 ) -> list[dict[str, Any]]:
    """Fill every pack's value cells with ``answer(pack, cell)`` (None blanks the cell,
    :data:`KEEP` leaves it) and save each copy into ``returns/``; the manifest's packs."""
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.workbook import layout as L

    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    (root / L.RETURNS_DIR).mkdir(exist_ok=True)
    for pack in manifest["packs"]:
        wb = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])
        for cell in L.iter_answer_cells(pack):
            if cell["part"] != "value":
                continue
            value = answer(pack, cell)
            if value is not KEEP:
                wb[cell["sheet"]][cell["cell"]].value = value
        wb.save(root / L.RETURNS_DIR / pack["file"])
    return manifest["packs"]


def edit_returns(root: Path, change: Callable[[dict[str, Any], dict[str, Any]], Any],
                 raters: set[str] | None = None) -> None:
    """Change the value cells of the returns already in ``returns/`` (of ``raters``, or
    every pack's): ``change(pack, cell)`` gives the new value (None blanks the cell,
    :data:`KEEP` leaves it)."""
    from sheetflow.packs.manifest import read_manifest
    from sheetflow.workbook import layout as L

    for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
        if raters is not None and pack["rater_id"] not in raters:
            continue
        path = root / L.RETURNS_DIR / pack["file"]
        wb = openpyxl.load_workbook(path)
        for cell in L.iter_answer_cells(pack):
            if cell["part"] == "value":
                value = change(pack, cell)
                if value is not KEEP:
                    wb[cell["sheet"]][cell["cell"]].value = value
        wb.save(path)


def methods_by_topic(root: Path) -> dict[str, str]:
    """The Methods sheet of ``root/out/analysis.xlsx`` by topic, its continuation rows
    joined: a long text is written over several rows, only the first naming its topic."""
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Methods"]
    current, text = "", {}
    for topic, said in sheet.iter_rows(values_only=True, max_col=2):
        current = topic or current
        text[current] = f"{text.get(current, '')} {said or ''}".strip()
    return text
