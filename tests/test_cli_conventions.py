"""CLI conventions: one exit-code table for every command, --json everywhere, DIRECTORY
defaulting to '.', did-you-mean, colour only when wanted, fast start-up."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.spec.templates import init_study

# Every command with the arguments it needs besides DIRECTORY (files made in the test).
COMMANDS = {
    "init": [], "check": [], "generate": [], "verify": [], "status": [], "collect": [],
    "remind": [], "import-judges": ["judges.jsonl"], "analyze": [], "demo": [],
    "plan": ["--simulations", "20", "--n-boot", "40"],
    "lock": [], "send": [], "fetch": [],
}
# (command, folder kind) -> exit code; folder kinds: "empty" folder, "initialised" study
# (init, not generated), "missing" path. Unlisted pairs are 2 (usage / missing step).
EXPECTED = {
    ("init", "empty"): 0, ("init", "missing"): 0, ("init", "initialised"): 2,
    ("check", "initialised"): 0, ("generate", "initialised"): 0,
    ("demo", "empty"): 0, ("demo", "missing"): 0, ("demo", "initialised"): 2,
    ("plan", "initialised"): 0,  # plans the protocol's statistic with a stated default
}


def test_every_command_is_in_the_table():
    assert set(COMMANDS) == set(cli.commands), "add the new command to COMMANDS"


def _folder(tmp_path: Path, kind: str) -> Path:
    if kind == "empty":
        (tmp_path / "f").mkdir()
    elif kind == "initialised":
        init_study(tmp_path / "f", "paired-rubric")
    return tmp_path / "f"


@pytest.mark.parametrize("kind", ["empty", "initialised", "missing"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_exit_code_and_json_for_every_command(tmp_path, monkeypatch, name, kind):
    folder = _folder(tmp_path, kind)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "judges.jsonl").write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, [name, str(folder), *COMMANDS[name], "--json"])
    expected = EXPECTED.get((name, kind), 2)
    assert result.exit_code == expected, (result.stdout, result.stderr)
    doc = json.loads(result.stdout)  # exactly one JSON document on stdout
    assert doc["ok"] is (expected == 0) and doc["exit_code"] == expected, doc
    if expected:
        assert doc["exit_code"] == expected and doc["errors"], doc
        assert str(folder) in " ".join(doc["errors"]), doc
        assert all(line.startswith("error: ") for line in result.stderr.splitlines())


def test_a_missing_path_is_named_as_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["status", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {tmp_path / 'nope'}: no such folder; give "
                                     "an existing study folder (default: the current folder)")


def test_a_subfolder_of_a_study_names_the_study_folder(tmp_path):
    study = init_study(tmp_path / "s", "paired-rubric")
    (study / "returns").mkdir()
    result = CliRunner().invoke(cli, ["status", str(study / "returns")])
    assert result.exit_code == 2
    assert f"the study folder is {study}: run 'sheetflow status" in result.stderr
    assert "generate" not in result.stderr


def test_directory_defaults_to_the_current_folder(tmp_path, monkeypatch):
    init_study(tmp_path / "s", "paired-rubric")
    monkeypatch.chdir(tmp_path / "s")
    result = CliRunner().invoke(cli, ["check", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["study_id"]


def test_did_you_mean_a_command_and_a_template(tmp_path):
    result = CliRunner().invoke(cli, ["colect"])
    assert result.exit_code == 2 and "Did you mean 'collect'?" in result.output
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "x"), "-t", "keep-know"])
    assert result.exit_code == 2 and "did you mean 'keep-known'?" in result.output


def test_usage_errors_answer_in_json_too():
    result = CliRunner().invoke(cli, ["status", "--json", "--nope"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["exit_code"] == 2


def test_quiet_keeps_the_result_line_only(tmp_path):
    study = init_study(tmp_path / "s", "paired-rubric")
    result = CliRunner().invoke(cli, ["check", str(study), "-q"])
    assert result.exit_code == 0 and result.stdout == "ok\n"


def test_generate_creates_returns(tmp_path):
    study = init_study(tmp_path / "s", "paired-rubric")
    result = CliRunner().invoke(cli, ["generate", str(study), "--json"])
    assert result.exit_code == 0, result.output
    assert (study / "returns").is_dir()
    assert json.loads(result.stdout)["returns"] == str(study / "returns")
    from sheetflow.collect.run import collect

    # the README's Python loop: collect right after generate finds returns/ (empty)
    assert collect(study).report.files == []


def test_check_and_collect_say_when_the_spec_changed_after_generate(tmp_path):
    study = init_study(tmp_path / "s", "paired-rubric")
    assert CliRunner().invoke(cli, ["generate", str(study), "-q"]).exit_code == 0
    spec = study / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("seed = ", "seed = 1", 1),
                    encoding="utf-8")
    for name in ("check", "collect"):
        result = CliRunner().invoke(cli, [name, str(study)])
        assert result.exit_code == 3, (name, result.output)
        assert "changed after generate" in result.stderr
        assert f"sheetflow generate --force {study}" in result.stderr
    assert not (study / "out").exists()  # collect refused before writing anything



@pytest.mark.parametrize("args", [
    ["remind"], ["send", "invitations", "--dry-run"], ["send", "reminders", "--dry-run"],
    ["send", "replies", "--dry-run"], ["send", "invitations", "--yes"]])
def test_remind_and_send_stop_as_check_does_when_the_spec_changed(tmp_path, args):
    """remind read the returns, and send went out with packs, against a spec no pack
    was generated from (exit 0) where check, status and collect stop."""
    study = init_study(tmp_path / "s", "paired-rubric")
    assert CliRunner().invoke(cli, ["generate", str(study), "-q"]).exit_code == 0
    spec = study / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace('title = "', 'title = "x ', 1),
                    encoding="utf-8")
    checked = CliRunner().invoke(cli, ["check", str(study)])
    line = next(x for x in checked.stderr.splitlines() if "changed after generate" in x)
    # a real send too: a server nobody listens on, never reached
    mail = ["--from", "a@b.org", "--smtp", "127.0.0.1:9"] if args[0] == "send" else []
    result = CliRunner().invoke(cli, [args[0], str(study), *args[1:], *mail])
    assert result.exit_code == 3, (args, result.output)
    assert line in result.stderr.splitlines(), result.stderr
    # nothing drafted, sent or journalled
    assert not (study / "out").exists() and not (study / "mail.jsonl").exists()


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sheetflow", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path):
    from sheetflow.cli.common import Output, colour_wanted

    assert colour_wanted() in (None, False)
    runner = CliRunner()
    study = init_study(tmp_path / "s", "paired-rubric")
    # CliRunner is not a terminal: click strips colour unless told otherwise
    assert "\x1b[" not in runner.invoke(cli, ["check", str(study)]).output
    coloured = runner.invoke(cli, ["check", str(study)], color=True)
    assert "\x1b[32m" in coloured.output
    plain = runner.invoke(cli, ["check", str(study)], color=True, env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain.output
    assert Output(as_json=True).progress("x").enabled is False


def test_importing_the_cli_loads_no_heavy_library():
    code = ("import sys, sheetflow.cli; "
            "print(sorted(m for m in ('pandas', 'scipy', 'openpyxl', 'xlsxwriter', 'numpy') "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_help_texts_carry_an_example():
    for name, command in cli.commands.items():
        assert "Example: sheetflow " + name in (command.help or ""), name


def test_exit_codes_are_documented():
    from sheetflow.cli.common import EXIT_CODES

    doc = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text("utf-8")
    for code in EXIT_CODES:
        assert f"| {code} |" in doc
    for name in cli.commands:
        assert f"sheetflow {name}" in doc, name


def test_the_help_names_every_command_the_readme_gives_exit_code_1():
    """`sheetflow --help` left out two cases README's table gives code 1 (plan finding
    no design that meets the target, import-judges without --execution-window); docs/cli.md
    repeats the help's line word for word."""
    from sheetflow.cli.common import EXIT_CODES, EXIT_DATA

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text("utf-8")
    row = next(ln for ln in readme.splitlines() if ln.startswith(f"| {EXIT_DATA} |"))
    named = {w for w in re.findall(r"`([a-z-]+)`", row) if w in cli.commands}
    assert {"collect", "plan", "import-judges"} <= named
    said = set(re.findall(r"[a-z-]+", EXIT_CODES[EXIT_DATA]))
    assert named <= said, named - said
    epilog = CliRunner().invoke(cli, ["--help"]).output
    assert "(plan)" in epilog and "(import-judges)" in epilog
    doc = (root / "docs" / "cli.md").read_text("utf-8")
    assert f"| {EXIT_DATA} | {EXIT_CODES[EXIT_DATA]} |" in doc


@pytest.mark.skipif(shutil.which("true") is None, reason="needs a POSIX shell")
def test_piped_output_has_no_progress_or_colour(tmp_path):
    import os

    study = init_study(tmp_path / "s", "paired-rubric")
    result = _run(["generate", str(study)], dict(os.environ))
    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stdout + result.stderr
    assert "writing packs" not in result.stderr


def test_every_readme_picture_exists_and_is_rendered_by_the_script():
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    script = (root / "docs" / "render.py").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\((docs/[^)]+\.png)\)", readme)
    assert {"docs/scoring-sheet.png", "docs/status-sheet.png", "docs/summary-sheet.png",
            "docs/demo-closing.png"} <= set(pictures)
    for picture in pictures:
        assert (root / picture).stat().st_size > 1000, picture
        assert f'"{Path(picture).name}"' in script, f"{picture}: no render function"


_LIGHT = """
import sys
from sheetflow.cli import cli
for args in ({commands}):
    try:
        cli.main(args, standalone_mode=False)
    except SystemExit:
        pass
print(sorted(m for m in ("pandas", "scipy", "openpyxl", "numpy") if m in sys.modules))
"""


def test_commands_that_need_no_statistics_load_no_heavy_library(tmp_path):
    study = init_study(tmp_path / "s", "paired-rubric")
    assert CliRunner().invoke(cli, ["generate", str(study), "-q"]).exit_code == 0
    commands = ", ".join(repr([name, str(study), "-q"])
                         for name in ("check", "verify", "status", "remind"))
    result = subprocess.run([sys.executable, "-c", _LIGHT.format(commands=commands)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.skipif(sys.platform == "win32", reason="a closed pipe is detected by poll()")
def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """``sheetflow check | head -1``: once the reader has gone, no error line and no
    traceback on stderr, and the shell's code for it (141, 128 + SIGPIPE); the
    command's own broken pipes still report as errors (``reports_errors``)."""
    root = init_study(tmp_path / "s", "paired-rubric")
    cmd = [sys.executable, "-m", "sheetflow", "check", str(root)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader goes before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""
    whole = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert whole.returncode == 0 and whole.stdout  # read to the end: the usual output


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="/dev/full is Linux's full disk")
def test_a_full_disk_under_the_output_says_what_to_do(tmp_path):
    """``sheetflow check > /dev/full`` said "[Errno 28] No space left on device; run
    again with --debug": no path (it is the output stream) and nothing to mend."""
    root = init_study(tmp_path / "s", "paired-rubric")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "sheetflow", "check", str(root)],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 3
    assert proc.stderr.strip() == ("error: writing the output: no space left on device; free "
                                   "some space, then run again")


@pytest.mark.parametrize(("n", "noun", "plural", "text"), [
    (0, "error", None, "0 errors"), (1, "error", None, "1 error"),
    (2, "rating row", None, "2 rating rows"), (800300, "rating row", None, "800,300 rating rows"),
    (1, "analysis", "analyses", "1 analysis"), (3, "analysis", "analyses", "3 analyses")])
def test_counts_take_the_noun_in_their_number(n, noun, plural, text):
    """The command lines say "1 error", "1 rater", "1 pack written", never "1 errors"."""
    from sheetflow.words import counted

    assert counted(n, noun, plural) == text


@pytest.mark.parametrize(("args", "line"), [
    (["bogus"], "error: No such command 'bogus'. Commands: "),
    # click words it "No such option '--nope'" from 8.2, "No such option: --nope" before
    (["collect", "--nope"], "error: No such option"),
    (["--nope", "status"], "error: No such option"),  # before the command: the group's own
    (["remind", "--min-days", "nan"], "error: Invalid value for '--min-days': 'nan': give a "
                                      "number of days, 0 or more (see 'sheetflow remind "
                                      "--help')"),
    (["remind", "--min-days", "-1"], "error: Invalid value for '--min-days': '-1': give a "
                                     "number of days, 0 or more"),
    # one resample gave every design width 0, "meets" and "cheapest"
    (["plan", ".", "--n-boot", "1"], "error: Invalid value for '--n-boot': 1 is too few: a 95% "
                                     "interval from fewer comes out narrow by construction; "
                                     "give 40 or more"),
    (["plan", ".", "--simulations", "19"], "error: Invalid value for '--simulations': 19 is "
                                           "too few"),
    (["plan", ".", "--raters", "6-2"], "error: --raters '6-2' runs backwards; give it low to "
                                       "high, like 2-6"),
    # which of the two count options was refused went unsaid
    (["plan", ".", "--items", "-5"], "error: --items '-5' is not a list of whole numbers"),
    (["plan", ".", "--raters", "a"], "error: --raters 'a' is not a list of whole numbers"),
])
def test_a_usage_error_is_one_line_exit_2(tmp_path, args, line):
    """click's own form was four lines (usage, a pointer to --help, a blank, the error);
    '--min-days nan' and '--raters 6-2' were taken (the latter as the default range)."""
    init_study(tmp_path / "s", "paired-rubric")
    args = [str(tmp_path / "s") if a == "." else a for a in args]
    result = CliRunner().invoke(cli, args, prog_name="sheetflow")
    assert result.exit_code == 2, result.output
    (only,) = result.output.strip().splitlines()
    assert only.startswith(line), only
    where = "sheetflow" if args[0].startswith("-") else f"sheetflow {args[0]}"
    assert only.endswith(f"(see '{where} --help')") or args[0] == "bogus" or \
        args[0] == "plan", only
