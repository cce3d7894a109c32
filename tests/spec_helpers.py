"""Shared by the spec tests: edit a study file, and run ``check`` expecting one error line."""

from __future__ import annotations

import contextlib
from pathlib import Path

from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec.templates import init_study


def replace_once(path: Path, old: str, new: str) -> None:
    """Replace the first ``old`` in ``path`` (which must hold it) by ``new``."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def check_gives_one_line(study_dir: Path, words: list[str]) -> str:
    """``sheetflow check`` exits 1 with one ``error:`` line holding every word; no traceback.

    It runs from the folder holding the study, naming the study by its folder name, as
    a user does: the line names each file with that folder (``s/study.toml: ...``).
    """
    with contextlib.chdir(study_dir.parent):
        result = CliRunner().invoke(cli, ["check", study_dir.name])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("error: ")
    for word in words:
        assert word in line, f"{word!r} missing from: {line}"
    return line


def edited_gives_one_line(base: Path, template: str, edits: list[tuple[str, str, str]],
                          words: list[str]) -> str:
    """A study made from ``template`` in ``base / "s"``, each (file, old, new) of
    ``edits`` replaced once: :func:`check_gives_one_line`."""
    root = init_study(base / "s", template)
    for name, old, new in edits:
        replace_once(root / name, old, new)
    return check_gives_one_line(root, words)
