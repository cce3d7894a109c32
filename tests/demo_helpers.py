"""The demo study as a fixture: built once per test module, copied for each test."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from sheetflow.cli import cli


def built_demo(folder: Path) -> Path:
    """``sheetflow demo`` into ``folder``: four returns collected and analysed."""
    result = CliRunner().invoke(cli, ["demo", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def copy_of(demo: Path, tmp_path: Path) -> Path:
    """A copy of the demo study for one test to change."""
    root = tmp_path / "study"
    shutil.copytree(demo, root)
    return root
