"""Option values and folders a command once took in silence, or answered with a line
that named no option or said something untrue: each is now one ``error:`` line naming
the option (or the path) and what to give, exit 2.

``plan --cost-rater -5`` (or nan) made the cheapest design a nonsense one; ``--seed -1``
said only "expected non-negative integer"; ``--items 100000000`` ran out of memory (exit
3); ``--width 0`` and ``--probability 1.5`` named no option; ``--shares`` with a nan
named none either; ``fetch --mbox F --since X`` ignored ``--since``, even an invalid
one; a folder named study.toml was "no study.toml here: run 'sheetflow init'", which
then refused the folder as not empty; ``status --agreement`` before any collect said
"run sheetflow collect again" and exit 3.
"""

from __future__ import annotations

import errno

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.cli.common import os_error_line
from sheetflow.spec import init_study

SHARES_21 = ",".join(["nan"] + ["0.05"] * 20)
OPTIONS = [
    (["plan", "{D}", "--seed", "-1"], "Invalid value for '--seed': -1 is not in the range"),
    (["plan", "{D}", "--cost-rater", "-5"], "Invalid value for '--cost-rater': '-5': give a "
                                            "cost of 0 or more"),
    (["plan", "{D}", "--cost-item", "nan"], "Invalid value for '--cost-item': 'nan'"),
    (["plan", "{D}", "--width", "0"], "--width 0: the target width must be between 0 and 2"),
    (["plan", "{D}", "--above", "0.6", "--probability", "1.5"],
     "--probability 1.5: the probability must be between 0 and 1"),
    (["plan", "{D}", "--items", "100000000"], "--items 100000000: give counts from 2 to "
                                               "10,000 (an interval needs at least 2 items; "
                                               "a study holds at most 10,000)"),
    (["plan", "{D}", "--raters", "2-5000"], "--raters 1001: give counts from 1 to 1,000"),
    (["plan", "{D}", "--shares", SHARES_21], "--shares must be non-negative numbers"),
    (["fetch", "{D}", "--mbox", "{D}/box.mbox", "--since", "lastweek"], "--since "),
    (["fetch", "{D}", "--mbox", "{D}/box.mbox", "--since", "2026-09-01"],
     "--since applies to an IMAP folder, not to --mbox or .eml files"),
    (["fetch", "{D}", "--mbox", "{D}/box.mbox", "--mark-seen"],
     "--mark-seen applies to an IMAP folder"),
    (["status", "{D}", "--agreement"], "out/ratings.csv: no ratings collected yet; run "
                                        "'sheetflow collect "),
]


@pytest.mark.parametrize("args,words", OPTIONS, ids=[" ".join(a[2:])[:30] for a, _ in OPTIONS])
def test_a_bad_option_value_is_one_line_naming_it(tmp_path, args, words):
    root = init_study(tmp_path / "s", "paired-rubric")
    if args[0] == "status":
        from sheetflow.packs.generate import generate_packs

        generate_packs(root)
    (root / "box.mbox").write_text("From a@example.org Sat Jan  3 01:05:34 2026\n"
                                   "From: a@example.org\n\nhello\n", encoding="utf-8")
    result = CliRunner().invoke(cli, [a.replace("{D}", str(root)) for a in args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]  # status: its table first
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert words in lines[0], lines[0]


def test_a_folder_named_study_toml_is_named_as_one(tmp_path):
    (tmp_path / "study.toml").mkdir()
    result = CliRunner().invoke(cli, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output == (f"error: {tmp_path / 'study.toml'}: is a folder, not the "
                             "study's spec; move it aside and put the study's study.toml "
                             "there\n")


def test_a_refused_read_is_not_called_a_refused_write():
    line = os_error_line(PermissionError(errno.EACCES, "Permission denied", "/s/items.csv"))
    assert line == ("/s/items.csv: permission denied; fix the permissions (or run as a user "
                    "who may read and write there), then run again")


@pytest.mark.parametrize("command", ["collect", "status", "remind"])
def test_a_file_named_returns_is_refused_and_nothing_written(tmp_path, command):
    """collect read such a file as one return ('not an Excel workbook', a reply drafted
    to nobody) and rewrote out/ with no ratings; status and remind took every pack as
    not returned and remind drafted a reminder to every rater."""
    from sheetflow.packs.generate import generate_packs

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    (root / "returns").rmdir()
    (root / "returns").write_text("x", encoding="utf-8")
    result = CliRunner().invoke(cli, [command, str(root)])
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: {root / 'returns'}: is a file, not the returns folder; "
                             "move it aside and put the returned workbooks in a folder named "
                             "returns\n")
    written = [p.name for p in (root / "out").rglob("*")] if (root / "out").exists() else []
    assert written == [], written  # nor the study lock collect took before reading


@pytest.mark.parametrize("command", ["collect", "status", "remind"])
def test_a_missing_returns_folder_is_refused_and_nothing_written(tmp_path, command):
    """Generate makes returns/: remind read a missing one as nothing returned, said
    every pack was not returned and drafted a reminder to every rater, those who had
    returned too; status and collect said only "no such file or folder"."""
    from sheetflow.packs.generate import generate_packs

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    (root / "returns").rmdir()
    result = CliRunner().invoke(cli, [command, str(root)])
    assert result.exit_code == 2, result.output
    assert result.output == (f"error: {root / 'returns'}: no such folder; generate made it "
                             "for the returned workbooks: make a folder named returns there "
                             "again and put them in it (an empty one if none has come back)\n")
    written = [p.name for p in (root / "out").rglob("*")] if (root / "out").exists() else []
    assert written == [], written
