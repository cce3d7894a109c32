"""Ctrl-C while the command line is still loading (click and the commands take a few
tenths of a second) printed a KeyboardInterrupt traceback."""

from __future__ import annotations

import builtins
import json
import sys

import pytest
from click.testing import CliRunner

import sheetflow.__main__ as entry
from sheetflow.cli import cli
from sheetflow.spec import init_study


def _interrupt_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the entry point's import of the command line stop as Ctrl-C would."""
    real = builtins.__import__

    def importing(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 1 and name == "cli" and (globals or {}).get("__package__") == "sheetflow":
            raise KeyboardInterrupt
        return real(name, globals, locals, fromlist, level)
    monkeypatch.setattr(builtins, "__import__", importing)


@pytest.mark.parametrize("json_wanted", [False, True])
def test_ctrl_c_while_loading_says_one_line_and_exits_130(monkeypatch, capsys, tmp_path,
                                                           json_wanted):
    root = init_study(tmp_path / "s", "keep-known")
    args = ["check", str(root), *(["--json"] if json_wanted else [])]
    monkeypatch.setattr(sys, "argv", ["sheetflow", *args])
    _interrupt_loading(monkeypatch)
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    assert stopped.value.code == 130
    out, err = capsys.readouterr()
    monkeypatch.undo()
    # the same words as a command interrupted while it runs
    from sheetflow.spec.loader import Loader

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(Loader, "load", interrupted)  # what every command loads by
    running = CliRunner().invoke(cli, args)
    assert running.exit_code == 130, running.output
    assert "Traceback" not in err
    assert err == running.stderr, (err, running.stderr)
    assert out == running.stdout
    if json_wanted:
        assert json.loads(out)["exit_code"] == 130
