"""What the protocol decision tests read after ``sheetflow analyze``."""

from __future__ import annotations

import json
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
