"""The command line as a whole: every command documented, one-line errors, exit codes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec.templates import init_study

README = Path(__file__).resolve().parent.parent / "README.md"


def test_every_command_has_help_and_is_in_the_readme():
    readme = README.read_text(encoding="utf-8")
    runner = CliRunner()
    for name, command in cli.commands.items():
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, name
        assert command.help and command.help.strip(), name
        assert re.search(rf"sheetflow {re.escape(name)}\b", readme), f"{name} not in README"


def test_a_missing_step_is_one_line_naming_the_command(tmp_path):
    study = init_study(tmp_path / "s", "paired-rubric")
    result = CliRunner().invoke(cli, ["analyze", str(study)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert f"run 'sheetflow generate {study}' first" in lines[0] and "Error:" not in lines[0]


def test_debug_shows_the_traceback(tmp_path):
    study = init_study(tmp_path / "s", "paired-rubric")
    (study / "raters.csv").write_text("name\nx\n", encoding="utf-8")
    plain = CliRunner().invoke(cli, ["check", str(study)])
    debug = CliRunner().invoke(cli, ["--debug", "check", str(study)])
    assert plain.exit_code == debug.exit_code == 1
    assert "Traceback" not in plain.output
    assert "Traceback" in debug.output


def test_debug_after_the_command_says_where_it_goes(tmp_path):
    """`sheetflow check DIR --debug` said only "No such option '--debug'" and pointed at
    the command's help, which does not list it: it is sheetflow's own option."""
    study = init_study(tmp_path / "s", "paired-rubric")
    result = CliRunner().invoke(cli, ["check", str(study), "--debug"], prog_name="sheetflow")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: No such option"), lines
    assert "it goes before the command: sheetflow --debug check ..." in lines[0]
    other = CliRunner().invoke(cli, ["check", str(study), "--nope"], prog_name="sheetflow")
    assert "(see 'sheetflow check --help')" in other.output


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_python_dash_m_runs(args):
    result = subprocess.run([sys.executable, "-m", "sheetflow", *args], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "sheetflow" in result.stdout.lower()


def test_readme_python_example_runs(tmp_path, monkeypatch):
    """The README's Python loop runs as written (raters simulated where it says '...')."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert "# ... raters return" in block
    block = block.replace(
        "# ... raters return their workbooks into my-study/returns/ ...",
        "from sheetflow.demo.simulate import fill_packs; fill_packs(study, seed=1)")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {"__name__": "readme"})
    assert (tmp_path / "my-study" / "out" / "analysis.xlsx").stat().st_size > 0
