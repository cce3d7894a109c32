"""The decision's first line is one text: what ``sheetflow analyze`` prints, the
Summary sheet's first headline row and ``summary.json``'s ``decision.headline``."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.cli import cli
from sheetflow.collect.data_lock import lock_second_rater
from sheetflow.collect.run import collect
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.packs.second_rater import selects_at_lock
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

TEMPLATES = ("paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert")
HEADLINE_ROW = 4  # the Summary sheet's title and study lines come first


def _fill_new_packs(root: Path) -> None:
    """Fill with valid answers every pack not returned yet."""
    for pack in read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]:
        if not (root / L.RETURNS_DIR / pack["file"]).exists():
            fill_openpyxl(root / L.PACKS_DIR / pack["file"],
                          root / L.RETURNS_DIR / pack["file"], plan_answers(pack))


def _collected(root: Path) -> Path:
    """Every pack returned and collected (002's second rater after its lock)."""
    _fill_new_packs(root)
    collect(root)
    if selects_at_lock(load_study(root)):
        lock_second_rater(root)
        _fill_new_packs(root)
        collect(root)
    return root


@pytest.mark.parametrize("template", TEMPLATES)
def test_screen_summary_sheet_and_json_share_the_headline(tmp_path, template):
    root = init_study(tmp_path / "s", template)
    generate_packs(root)
    result = CliRunner().invoke(cli, ["analyze", str(_collected(root))])
    assert result.exit_code in (0, 1), result.output
    headline = json.loads((root / "out" / "summary.json").read_text(
        encoding="utf-8"))["decision"]["headline"]
    sheet = openpyxl.load_workbook(root / "out" / "analysis.xlsx")["Summary"]
    assert sheet.cell(HEADLINE_ROW, 1).value == headline
    printed = result.output.splitlines()
    assert headline in printed, (headline, result.output)
    # the decision block the screen ends with starts with it, the rule under it
    assert printed[printed.index(headline) + 1].startswith("rule: ")
