"""A returned file left out beside a full panel is named and changes analyze's exit code.

The decision rests on every expected rater, so it is computed and shown; but a file the
coordinator received and collect did not use (a stray workbook, a damaged second copy)
must not pass in silence: analyze names it and exits 1 unless --allow-partial. An exact
copy of a file used is counted once by collect and leaves nothing out.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from demo_helpers import built_demo, copy_of

from sheetflow.cli import cli


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return built_demo(tmp_path_factory.mktemp("leftout") / "demo")


_study = copy_of


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_a_stray_file_beside_a_full_panel_is_named_and_exits_1(demo, tmp_path):
    root = _study(demo, tmp_path)
    (root / "returns" / "stray.xlsx").write_bytes(b"not a workbook at all")
    assert _run("collect", str(root)).exit_code == 1  # the stray file has an error
    result = _run("analyze", str(root), "--json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)  # stderr: the demo seal's warning
    assert doc["ok"] is False
    assert doc["summary"]["decision"]["status"] != "incomplete"  # every rater is in
    assert [f["file"] for f in doc["summary"]["panel"]["excluded_files"]] == ["stray.xlsx"]
    text = _run("analyze", str(root)).output
    assert "file left out: stray.xlsx" in text
    assert "exit 1: 1 returned file left out (stray.xlsx); the decision above rests on " \
        "every expected rater. Remove or replace it in returns/" in text


def test_allow_partial_still_exits_1_for_the_file_left_out(demo, tmp_path):
    """--allow-partial once made this exit 0: a file left out never leaves exit 0."""
    root = _study(demo, tmp_path)
    (root / "returns" / "stray.xlsx").write_bytes(b"not a workbook at all")
    _run("collect", str(root))
    result = _run("analyze", str(root), "--allow-partial")
    assert result.exit_code == 1, result.output  # analysed, the file named, still exit 1
    assert "file left out: stray.xlsx" in result.output
    assert "exit 1: 1 returned file left out (stray.xlsx)" in result.output


def test_an_exact_copy_of_a_file_used_leaves_nothing_out(demo, tmp_path):
    root = _study(demo, tmp_path)
    first = sorted((root / "returns").glob("*.xlsx"))[0]
    shutil.copyfile(first, root / "returns" / "copy of my return.xlsx")
    assert _run("collect", str(root)).exit_code == 0
    result = _run("analyze", str(root))
    assert result.exit_code == 0, result.output
    assert "exit 1" not in result.output


def test_an_exact_copy_is_shown_on_its_packs_row_not_as_an_unknown_file(demo, tmp_path):
    """The Status sheet: a copy of a return is the same pack's, whoever named it."""
    from sheetflow.collect.run import collect

    root = _study(demo, tmp_path)
    first = sorted((root / "returns").glob("*.xlsx"))[0]
    shutil.copyfile(first, root / "returns" / "copy of my return.xlsx")
    result = collect(root)
    assert [r.file for r in result.roster if r.state == "unknown"] == []
    row = next(r for r in result.roster if first.name in r.file)
    assert "copy of my return.xlsx" in row.file and row.used


def test_collect_names_an_exact_copy_as_a_copy_not_an_unknown_rater(demo, tmp_path):
    root = _study(demo, tmp_path)
    first = sorted((root / "returns").glob("*.xlsx"))[0]
    shutil.copyfile(first, root / "returns" / "a copy.xlsx")  # sorts before the original
    result = _run("collect", str(root))
    assert result.exit_code == 0, result.output
    # the file named like the pack is the original, whatever the names' order
    line = next(ln for ln in result.output.splitlines() if ln.startswith("a copy.xlsx:"))
    assert f"an exact copy of {first.name} (rater R1), read once" in line
    assert "rater unknown" not in result.output


def test_collect_lists_what_each_output_holds(demo, tmp_path):
    """An empty draft folder or a header-only table is not listed as if it held any."""
    root = _study(demo, tmp_path)
    text = _run("collect", str(root)).output
    assert "out/feedback (0 reply drafts)" in text
    assert "ratings-incomplete.csv (0 rows of files left out" in text
    rows = sum(1 for _ in (root / "out" / "ratings.csv").open(encoding="utf-8")) - 1
    assert f"ratings.csv ({rows:,} rows)" in text


def test_a_folder_in_returns_is_not_shown_as_a_file_someone_sent(demo, tmp_path):
    from sheetflow.collect.run import collect

    root = _study(demo, tmp_path)
    (root / "returns" / "old").mkdir()
    row = next(r for r in collect(root).roster if r.file == "old")
    assert row.state == "unknown" and row.todo.startswith("not a file")
    assert "who sent it" not in row.todo
