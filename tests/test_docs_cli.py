"""docs/cli.md against the commands themselves: every option a command takes is named in
its row, and every key its --json document holds is named in its row of the --json
table, so a reader of the page learns of everything `--help` and `--json` show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = (ROOT / "docs" / "cli.md").read_text("utf-8")
# Options every command takes, explained once under "Output" and "--json".
COMMON = {"--json", "--quiet", "--help"}
# Keys every --json document may hold, explained once under "--json".
COMMON_KEYS = {"ok", "exit_code", "warnings", "errors", "next"}


def _row(prefix: str) -> str:
    """The line of docs/cli.md that starts with ``prefix``."""
    rows = [ln for ln in CLI_DOC.splitlines() if ln.startswith(prefix)]
    assert len(rows) == 1, prefix
    return rows[0]


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_option_of_a_command_is_named_in_its_row(name):
    row = _row(f"| `sheetflow {name} ")
    if name == "plan":  # its options are described in docs/plan.md, which the row links
        row += (ROOT / "docs" / "plan.md").read_text("utf-8")
    options = {opt for param in cli.commands[name].params
               for opt in param.opts if opt.startswith("--")}
    missing = sorted(opt for opt in options - COMMON
                     if not re.search(re.escape(opt) + r"(?![\w-])", row))
    assert not missing, f"docs/cli.md does not name {missing} for {name}"


def _keys(args: list[str]) -> set[str]:
    result = CliRunner().invoke(cli, [*args, "--json"])
    return set(json.loads(result.stdout)) - COMMON_KEYS


def test_every_json_key_of_the_study_commands_is_named_in_its_row(tmp_path):
    study = str(tmp_path / "s")
    runs = {"init": ["init", study, "-t", "paired-rubric"], "check": ["check", study],
            "generate": ["generate", study], "verify": ["verify", study],
            "status": ["status", study], "remind": ["remind", study]}
    for name, args in runs.items():
        row = _row(f"| `{name}` | ")
        missing = sorted(k for k in _keys(args) if f"`{k}`" not in row)
        assert not missing, f"docs/cli.md's --json table does not name {missing} for {name}"


def test_the_help_gives_the_exit_code_3_line_of_docs_cli():
    """`sheetflow --help` left out that an arm id in a pack stops generate with code 3,
    which docs/cli.md's table, "the same table for every command", gives."""
    from sheetflow.cli.common import EXIT_CODES, EXIT_FAILED

    row = _row(f"| {EXIT_FAILED} | ").split(" | ")[1].rstrip(" |").replace("`", "")
    assert row == EXIT_CODES[EXIT_FAILED]
    epilog = " ".join(CliRunner().invoke(cli, ["--help"]).stdout.split())
    assert "holds an arm id" in epilog
