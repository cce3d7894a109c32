"""Every next step status, collect, remind and send point to is a command that works as
typed: the whole command with the study folder as given, never one whose work is done.

EV-01 sends two different files for one pack (a reply draft asks which is theirs),
EV-02 a clean one, and EV-03 none.
"""

from __future__ import annotations

import email
import email.policy
import re
import shlex
import shutil
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

COMMANDS = r"(init|check|plan|generate|verify|lock|send|fetch|collect|status|remind|analyze)"
QUOTED = re.compile(r"'(sheetflow [^']+)'")


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def _hints(text: str, root: Path) -> list[str]:
    """Each command ``text`` tells the user to run, checked: quoted whole, parsed by the
    CLI itself, and run on the study folder; no bare ``sheetflow <command>`` left."""
    found = QUOTED.findall(text)
    bare = re.findall(rf"\bsheetflow {COMMANDS}\b", QUOTED.sub("", text))
    assert not bare, f"a hint that is no whole command: {bare} in {text!r}"
    for line in found:
        words = shlex.split(line)[1:]
        group = cli.make_context("sheetflow", list(words), resilient_parsing=False)
        sub = cli.get_command(group, words[0])
        assert sub is not None, line
        ctx = sub.make_context(words[0], words[1:], parent=group)
        assert str(ctx.params["directory"]) == str(root), line
    return found


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = init_study(tmp_path_factory.mktemp("hints") / "s", "paired-rubric")
    with (root / "study.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[mail]\nfrom = "coordinator@example.org"\n')
    generate_packs(root)
    files = fill_packs(root, seed=7)
    files[2].unlink()  # EV-03 never returns
    rival = root / L.RETURNS_DIR / "EV-01-second-try.xlsx"
    shutil.copyfile(files[0], rival)
    pack = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"][0]
    cell = next(a for a in L.iter_answer_cells(pack) if a["validation"]["type"] == "list")
    wb = openpyxl.load_workbook(rival)
    wb[cell["sheet"]][cell["cell"]].value = "Maybe"  # no choice of the list: an error
    wb.save(rival)
    return root


@pytest.fixture
def study(base, tmp_path) -> Path:
    return Path(shutil.copytree(base, tmp_path / "s"))


def test_hints_before_any_collect_are_whole_commands(study):
    status = _run("status", str(study))
    assert status.exit_code == 1
    assert f"'sheetflow collect {study}' is the next step" in status.stdout
    assert f"'sheetflow collect {study}' writes a reply draft to each" in status.stdout
    assert f"'sheetflow send {study} replies' sends them" in status.stdout
    _hints(status.output, study)
    replies = _run("send", str(study), "replies", "--dry-run")
    assert replies.exit_code == 2  # not "0 replies would be sent"
    assert "collect has not run" in replies.stderr
    assert _hints(replies.output, study) == [f"sheetflow collect {study}"]


def test_hints_after_collect_send_what_collect_wrote(study):
    collected = _run("collect", str(study))
    assert collected.exit_code == 1
    assert collected.stdout.splitlines()[-1].endswith(
        f"1 of 3 packs not returned ('sheetflow remind {study}' drafts reminders for those due)")
    _hints(collected.output, study)
    status = _run("status", str(study))
    assert status.exit_code == 1
    (due,) = [ln for ln in status.stdout.splitlines() if "with errors: " in ln]
    # collect has written the draft: the step left is sending it, not collecting again
    assert due.endswith("collect wrote a reply draft to each (out/feedback/); "
                        f"'sheetflow send {study} replies' sends them")
    assert "is the next step" not in status.stdout
    _hints(status.output, study)
    ws = openpyxl.load_workbook(study / "out" / "validation.xlsx")["Status"]
    todo = [str(row[-1].value) for row in ws.iter_rows(min_row=2)]
    assert any(f"'sheetflow remind {study}'" in t for t in todo)
    # EV-01's two files: which is theirs, then collect on this folder once more
    assert any(t.endswith(f"from the returns folder and run 'sheetflow collect {study}'")
               for t in todo)
    _hints("\n".join(todo), study)
    remind = _run("remind", str(study), "--min-days", "0")
    assert remind.exit_code == 0
    _hints(remind.output, study)
    assert _run("send", str(study), "replies", "--dry-run").exit_code == 0


def test_an_unconfirmed_invitation_names_the_whole_command(study):
    from sheetflow.collect.reminders import unconfirmed_invitation

    text = unconfirmed_invitation("EV-03", "2026-09-16T10:00:00Z", study)
    assert _hints(text, study) == [
        f"sheetflow send {study} invitations --resend --rater EV-03"]


def test_remind_right_after_generate_holds_packs_sent_by_hand(study):
    """remind wrote reminders for packs generate made seconds earlier."""
    result = _run("remind", str(study))
    assert result.exit_code == 0, result.output
    assert not list((study / "out").glob("reminders/*.eml"))
    assert "no invitation in mail.jsonl: packs taken as sent by hand when generate " \
        "wrote them (" in result.stdout
    assert "no reminder EV-03 (sitting 1): sent by hand (no invitation in mail.jsonl), " \
        "so taken as sent when generate wrote it on " in result.stdout
    assert "less than 3 days ago" in result.stdout
    assert _run("remind", str(study), "--min-days", "0").exit_code == 0
    assert (study / "out" / "reminders" / "EV-03.eml").is_file()


@pytest.mark.parametrize(("deadline", "said"), [
    ("2000-01-31", "The deadline was Monday 31 January 2000: please send it as soon as you "
     "can."),
    ("2999-01-31", "Please send it back by Thursday 31 January 2999, the deadline of the "
     "study."),
])
def test_a_reminder_states_the_deadline(study, deadline, said):
    spec = study / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8") + f'deadline = "{deadline}"\n',
                    encoding="utf-8")
    assert _run("remind", str(study), "--min-days", "0").exit_code == 0
    draft = email.message_from_bytes(
        (study / "out" / "reminders" / "EV-03.eml").read_bytes(), policy=email.policy.default)
    body = draft.get_body(("plain",)).get_content()
    assert said in " ".join(body.split())


def _raised(call, *args, **kwargs) -> str:
    """The message of the sheetflow error ``call`` raises."""
    from sheetflow.errors import SheetflowError

    with pytest.raises(SheetflowError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_the_checks_of_out_name_whole_commands(tmp_path):
    """"run sheetflow collect again", "run sheetflow analyze again": run where?"""
    from sheetflow.collect.mail_state import collect_caveat, journal_issue
    from sheetflow.collect.outputs import (
        check_mark,
        check_row_count,
        check_run,
        table_replaced,
        verify_ratings,
        verify_returns,
    )

    root = tmp_path / "my study"  # a folder the shell splits: quoted in each hint
    (root / "out").mkdir(parents=True)
    (root / "out" / "summary.json").write_text("{}", encoding="utf-8")
    analyze, collect = f'sheetflow analyze "{root}"', f'sheetflow collect "{root}"'
    assert [_hints(line, root) for line in check_run(root)] == [[analyze]]
    assert _hints(table_replaced(root), root) == [analyze]
    for text in (_raised(verify_ratings, root),
                 _raised(check_mark, {}, b"k" * 32, study_dir=root),
                 _raised(check_row_count, 1, 2, study_dir=root),
                 _raised(verify_returns, root, [{"used": True, "file": "a.xlsx",
                                                  "sha256": "0" * 64}]),
                 collect_caveat([3], root), journal_issue([3], root).message):
        assert _hints(text, root) == [collect], text


def test_a_changed_pack_names_generate_and_collect_on_the_folder(tmp_path):
    from sheetflow.collect.drafts import reply_left_out
    from sheetflow.packs.manifest import changed_packs_problem

    root = tmp_path / "my study"
    generate = f'sheetflow generate "{root}"'
    assert _hints(changed_packs_problem(["packs/a.xlsx"], root, not_done="nothing was sent",
                                        then="send again"), root) == [generate]
    assert _hints(reply_left_out("EV-01", "packs/a.xlsx", root), root) == [
        generate, f'sheetflow collect "{root}"']


def test_the_seal_checks_name_whole_commands(study):
    """'sheetflow generate --force', 'sheetflow lock' again: on which study?"""
    from sheetflow.packs.seal import verify_seal
    from sheetflow.packs.second_rater import locked_selection, selection_path
    from sheetflow.spec.study import load_study

    spec = study / "study.toml"
    spec.write_text(re.sub(r'(?m)^title = "', 'title = "Edited: ', spec.read_text(
        encoding="utf-8"), count=1), encoding="utf-8")  # the spec changed after generate
    selection = selection_path(load_study(study))
    selection.write_text("not json", encoding="utf-8")  # a lock that stopped half-way
    problems = verify_seal(study).problems
    assert [_hints(p, study) for p in problems if "sheetflow" in p] == [
        [f"sheetflow generate {study} --force"], [f"sheetflow lock {study}"]]
    assert _hints(_raised(locked_selection, load_study(study)), study) == [
        f"sheetflow lock {study}"]


def test_a_judge_without_a_pack_names_generate_on_the_folder(study):
    from sheetflow.judges.importer import _pack_of
    from sheetflow.packs.manifest import open_manifest

    manifest = open_manifest(study)
    try:
        text = _raised(_pack_of, manifest, "judge-9", study)
    finally:
        manifest.close()
    assert _hints(text, study) == [f"sheetflow generate {study}"]


def test_what_to_run_again_names_the_folder(study):
    """"run remind again", "run status again", "run sheetflow collect again": on which
    study? Each names the whole command on the folder as given."""
    from sheetflow.analysis.panel import build_panel, journal_note, recorded_journal_damage
    from sheetflow.collect.reminders import remind

    with (study / "mail.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("not a record\n")  # a damaged line: remind stops, status warns
    collect, analyze = f"sheetflow collect {study}", f"sheetflow analyze {study}"
    assert _hints(_raised(remind, study), study) == [f"sheetflow remind {study}"]
    status = _run("status", str(study))
    assert f"then run 'sheetflow status {study}' again" in status.stderr
    assert _hints(status.stderr, study) == [f"sheetflow status {study}"]
    assert _hints(journal_note([3], study), study) == [collect, analyze]
    panel = build_panel([("EV-01", 1)], pd.DataFrame({"rater": [], "sitting": []}), None,
                        journal_damaged=[3], study_dir=study)
    assert [_hints(note, study) for note in panel.notes] == [[collect], [collect, analyze]]
    assert _hints(_raised(recorded_journal_damage, {"journal_damaged": "3"}, study),
                  study) == [collect]


def test_a_manifest_changed_while_read_says_run_the_same_command(study):
    """Several commands read the manifest: "run collect again" was wrong for the others."""
    from sheetflow.packs.manifest import open_manifest

    manifest = open_manifest(study)
    try:
        path = study / L.PACKS_DIR / L.MANIFEST_FILE
        path.write_bytes(b" " * 64 + path.read_bytes())  # every pack moved meanwhile
        text = _raised(manifest.pack, manifest.heads[0])
    finally:
        manifest.close()
    assert text.endswith("the manifest changed while it was read; once nothing is writing "
                         "it, run the same command again")
    assert _hints(text, study) == []


def test_a_returned_files_issue_names_collect_on_the_folder_as_typed(study, monkeypatch):
    """"remove the wrong one ... and run collect again", "then collect again": each
    file's issue names the whole command, on the study folder as the user typed it."""
    import sheetflow.collect.run as run

    digest = run.file_digest
    packs = read_manifest(study / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    (ev02,) = [p["file"] for p in packs if p["rater_id"] == "EV-02"]

    def unreadable(path):  # as a file the account may not read (root may read any)
        if Path(path).name == ev02:
            raise PermissionError(13, "Permission denied", str(path))
        return digest(path)

    monkeypatch.setattr(run, "file_digest", unreadable)
    monkeypatch.chdir(study.parent)
    collected = _run("collect", "s")
    assert collected.exit_code == 1
    typed = Path("s")
    lines = [ln for ln in collected.stdout.splitlines() if "[duplicate-rater]" in ln]
    assert len(lines) == 2
    assert all(ln.endswith("remove the wrong one from the returns folder and run "
                           "'sheetflow collect s' again.") for ln in lines)
    (unread,) = [ln for ln in collected.stdout.splitlines() if "[file-unreadable]" in ln]
    assert unread.endswith("(permissions, a synced folder not yet downloaded), then run "
                           "'sheetflow collect s' again.")
    assert _hints("\n".join([*lines, unread]), typed) == ["sheetflow collect s"] * 3
    sheet = openpyxl.load_workbook(study / "out" / "validation.xlsx")["Issues"]
    texts = [str(c.value) for row in sheet.iter_rows() for c in row if c.value]
    assert sum("run 'sheetflow collect s' again." in t for t in texts) == 3
