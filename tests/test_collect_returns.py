"""Every entry of returns/ gets a verdict, and file names print safely.

Unreadable files, links outside the study, folders and FIFOs are reported and the
batch goes on; names that are not UTF-8 are collected; names with line breaks or
escape sequences cannot forge terminal lines.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from roundtrip_helpers import fill_openpyxl, paired_study_with_filled_packs, plan_answers

import sheetflow.collect.run as collect_module
from sheetflow.cli import cli
from sheetflow.collect.returns import display_name, escape_controls
from sheetflow.collect.run import collect
from sheetflow.packs.manifest import read_manifest


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A paired study and its three packs filled in, kept aside in ``filled/``."""
    return paired_study_with_filled_packs(tmp_path_factory.mktemp("returns") / "study")


@pytest.fixture
def study(made, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(made, root)
    (root / "returns").mkdir(exist_ok=True)
    return root


def _filled(root: Path) -> list[Path]:
    return sorted((root / "filled").iterdir())


def _codes(result, name: str) -> set[str]:
    return {i.code for i in result.report.issues if i.file == name}


def test_a_name_that_is_not_utf8_is_collected(study):
    first, second = _filled(study)[:2]
    shutil.copyfile(first, study / "returns" / first.name)
    odd = os.fsdecode(b"R\xff\xfe-return.xlsx")
    shutil.copyfile(second, study / "returns" / odd)
    result = CliRunner().invoke(cli, ["collect", str(study)])
    assert result.exit_code == 1, result.output  # the third pack has not come back
    assert "1 of 3 packs not returned" in result.output
    shown = display_name(odd)
    assert shown == "R\\xff\\xfe-return.xlsx"
    assert f"{shown}: rater" in result.output
    record = json.loads((study / "out" / "collection.json").read_text(encoding="utf-8"))
    assert {f["file"]: f["used"] for f in record["files"]} == {first.name: True, shown: True}
    wb = openpyxl.load_workbook(study / "out" / "validation.xlsx")
    assert shown in [c.value for c in wb["Files"]["A"]]
    assert shown in (study / "out" / "ratings.csv").read_text(encoding="utf-8")


def test_a_name_cannot_forge_lines_or_escape_sequences(study):
    first = _filled(study)[0]
    shutil.copyfile(first, study / "returns" / first.name)
    evil = "x.xlsx\n3 files, 999 rating rows, 0 errors\x1b[2K\u202e.xlsx"
    (study / "returns" / evil).write_bytes(b"not a workbook")
    result = CliRunner().invoke(cli, ["collect", str(study)])
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\u202e" not in result.output
    lines = result.output.splitlines()
    assert not any(line.startswith("3 files") for line in lines)
    assert "x.xlsx\\x0a3 files, 999 rating rows, 0 errors\\x1b[2K\\u202e.xlsx" in result.output
    assert escape_controls("tab\there") == "tab\\x09here"


def test_an_unreadable_file_is_coded_and_the_batch_goes_on(study, monkeypatch):
    first, second = _filled(study)[:2]
    shutil.copyfile(first, study / "returns" / first.name)
    locked = study / "returns" / second.name
    shutil.copyfile(second, locked)
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads any file: make this one fail as it would for a user
        real = collect_module.file_digest

        def refuse(path):
            if Path(path).name == second.name:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real(path)

        monkeypatch.setattr(collect_module, "file_digest", refuse)
    try:
        result = collect(study)
    finally:
        locked.chmod(0o644)
    assert "file-unreadable" in _codes(result, second.name)
    used = {f.file: f.used for f in result.report.files}
    assert used == {first.name: True, second.name: False}
    assert len(result.ratings) > 0


def test_links_folders_and_fifos_each_get_a_verdict(study, tmp_path):
    files = _filled(study)
    outside = tmp_path / "outside.xlsx"
    shutil.copyfile(files[0], outside)
    returns = study / "returns"
    (returns / "outside-link.xlsx").symlink_to(outside)
    (returns / "inside-link.xlsx").symlink_to(files[1])
    (returns / "dangling.xlsx").symlink_to(study / "nowhere.xlsx")
    (returns / "a-folder").mkdir()
    os.mkfifo(returns / "pipe.xlsx")
    (returns / "loop.xlsx").symlink_to(returns / "loop.xlsx")  # resolves to nothing
    shutil.copyfile(files[2], returns / files[2].name)
    result = collect(study, write=False)
    assert "symlink-outside-study" in _codes(result, "outside-link.xlsx")
    assert not {c for c in _codes(result, "inside-link.xlsx") if "link" in c or "file" in c}
    for name in ("a-folder", "pipe.xlsx", "dangling.xlsx", "loop.xlsx"):
        assert _codes(result, name) == {"not-a-file"}, name
    (loop,) = [i for i in result.report.issues if i.file == "loop.xlsx"]
    assert "leads back to itself" in loop.message
    used = {f.file: f.used for f in result.report.files}
    assert used == {"outside-link.xlsx": False, "inside-link.xlsx": True,
                    "dangling.xlsx": False, "a-folder": False, "pipe.xlsx": False,
                    "loop.xlsx": False, files[2].name: True}
    named = CliRunner().invoke(cli, ["collect", str(study), str(returns / "loop.xlsx")])
    assert named.exit_code == 1 and "Traceback" not in named.output, named.output  # none used
    assert "loop.xlsx" in named.output and "leads back to itself" in named.output


def test_a_blank_pack_sent_back_lists_twenty_problems_and_points_to_the_rest(study):
    """A pack returned unfilled has 346 blanks; the screen shows the first twenty
    (errors first) and says how many more and where they all are."""
    from sheetflow.cli.collect_commands import SHOWN_PER_FILE, _more

    blank = sorted((study / "packs").glob("*.xlsx"))[0]
    _resaved(blank, study / "returns" / blank.name)  # blank, but not the pack as sent
    for filled in _filled(study)[1:]:
        shutil.copyfile(filled, study / "returns" / filled.name)
    as_json = CliRunner().invoke(cli, ["collect", str(study), "--json"])
    mine = [i for i in json.loads(as_json.output)["issues"] if i["file"] == blank.name]
    assert len(mine) > 300  # --json lists every one
    result = CliRunner().invoke(cli, ["collect", str(study)])
    assert result.exit_code == 1, result.output
    listed = [line for line in result.output.splitlines()
              if line.startswith(f"  error: {blank.name} ")]
    assert len(listed) == SHOWN_PER_FILE == 20
    assert (f"  ... and {len(mine) - 20} more errors for {blank.name}: every one is on "
            f"the Issues sheet of {study / 'out' / 'validation.xlsx'}") in result.output
    wb = openpyxl.load_workbook(study / "out" / "validation.xlsx", read_only=True)
    assert sum(blank.name in row for row in wb["Issues"].iter_rows(values_only=True)) \
        == len(mine)

    class Item:
        def __init__(self, severity):
            self.severity = severity
    issues = [Item("warning")] * 2 + [Item("error")] * 30 + [Item("warning")]
    assert _more(issues, issues[2:22]) == "13 more (10 errors, 3 warnings)"
    assert _more(issues[:2] * 15, issues[:2] * 10) == "10 more warnings"
    assert _more(issues[2:5], issues[2:4]) == "1 more error"


def test_two_different_files_as_one_rater_get_a_reply_asking_which_is_theirs(study):
    """A colleague can return a pack in another rater's name: when two different files
    come back as one rater's, the reply asks which is theirs and quotes nothing of
    either (one may hold someone else's answers); the Status sheet says the same."""
    import email
    import email.policy

    filled = _filled(study)[0]
    blank = study / "packs" / filled.name
    shutil.copyfile(filled, study / "returns" / "mine-final.xlsx")
    pack = next(p for p in read_manifest(study / "packs" / "manifest.json")["packs"]
                if p["file"] == filled.name)
    first = dict(list(plan_answers(pack).items())[:1])  # one answer: begun, not blank
    fill_openpyxl(blank, study / "returns" / "mine-first.xlsx", first)
    result = CliRunner().invoke(cli, ["collect", str(study), "--json"])
    doc = json.loads(result.output)
    assert {i["code"] for i in doc["issues"] if i["file"] == "mine-first.xlsx"} >= {
        "duplicate-rater", "answer-missing"}
    (row,) = [r for r in doc["raters"] if r["file"] == "mine-final.xlsx, mine-first.xlsx"]
    rater = row["rater_id"]
    assert row["todo"] == (
        "2 different files came back as theirs (both under File returned): send the "
        f"reply draft out/feedback/{rater}.eml, which asks them which one is theirs, then "
        f"remove the other from the returns folder and run 'sheetflow collect {study}'")
    draft = study / "out" / "feedback" / f"{rater}.eml"
    msg = email.message_from_bytes(draft.read_bytes(), policy=email.policy.default)
    assert msg["Subject"].endswith(": two different workbooks came back as yours")
    body = msg.get_body(preferencelist=("plain",)).get_content()
    assert "Two different workbooks came back as yours: mine-final.xlsx, " \
           "mine-first.xlsx. Only one can be used, so none is used for now." in body
    assert "If you did not send one of them, please say so." in body
    assert "is blank" not in body and "returns folder" not in body
    assert [p.get_filename() for p in msg.iter_attachments()] == [blank.name]
    # status names both files (it named one, and its errors, with nothing of the other)
    status = CliRunner().invoke(cli, ["status", str(study)])
    (line,) = [ln for ln in status.output.splitlines() if ln.startswith(rater)]
    assert line.endswith("mine-final.xlsx and mine-first.xlsx (DIFFERENT FILES for one "
                         "pack)"), line


def _resaved(src: Path, dst: Path) -> None:
    """``src`` opened and saved again (its bytes differ from the pack's)."""
    openpyxl.load_workbook(src).save(dst)


def test_the_pack_sent_back_as_it_was_sent_is_one_line_and_no_rival(study):
    """The invitation's own attachment came back (forwarded with the filled file, or
    alone): it was read as a return with hundreds of blanks and, beside the filled
    file, made both 'duplicate-rater', so neither was used. Now it is one line: a
    warning beside the filled file (which is used), an error alone."""
    filled = _filled(study)[0]
    sent = study / "packs" / filled.name
    shutil.copyfile(filled, study / "returns" / "mine.xlsx")
    shutil.copyfile(sent, study / "returns" / "forwarded-invitation.xlsx")
    alone = _filled(study)[1]
    shutil.copyfile(study / "packs" / alone.name, study / "returns" / alone.name)
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(study), "--json"]).output)
    by_file = {f["file"]: f for f in doc["files"]}
    assert by_file["mine.xlsx"]["used"] is True
    assert not by_file["forwarded-invitation.xlsx"]["used"]
    again = [i for i in doc["issues"] if i["file"] == "forwarded-invitation.xlsx"]
    assert [(i["code"], i["severity"]) for i in again] == [("pack-as-sent-again", "warning")]
    assert "beside their filled file (mine.xlsx), which is the one used" in again[0]["message"]
    (lone,) = [i for i in doc["issues"] if i["file"] == alone.name]
    assert (lone["code"], lone["severity"]) == ("pack-as-sent", "error")
    assert lone["message"].startswith("This is the workbook exactly as it was sent, with "
                                      "nothing filled in.")
    assert not any(i["code"] == "duplicate-rater" for i in doc["issues"])


def test_a_blank_copy_saved_again_beside_the_filled_one_is_set_aside(study):
    """A rater who opened the blank workbook, saved it, and sent it with the filled one
    made both files 'duplicate-rater': neither was used and the reply asked which was
    theirs. The blank copy is set aside now (a warning) and the filled file is used;
    a blank copy with anything else wrong in it still rivals it."""
    filled = _filled(study)[0]
    shutil.copyfile(filled, study / "returns" / "mine.xlsx")
    _resaved(study / "packs" / filled.name, study / "returns" / "blank-copy.xlsx")
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(study), "--json"]).output)
    by_file = {f["file"]: f for f in doc["files"]}
    assert by_file["mine.xlsx"]["used"] is True
    assert not by_file["blank-copy.xlsx"]["used"]
    again = [i for i in doc["issues"] if i["file"] == "blank-copy.xlsx"]
    assert [(i["code"], i["severity"]) for i in again] == [("blank-copy-again", "warning")]
    assert "nothing filled in, saved again after it was sent; it came back beside their " \
           "filled file (mine.xlsx), which is the one used" in again[0]["message"]
    assert not any(i["code"] == "duplicate-rater" for i in doc["issues"])

    pack = next(p for p in read_manifest(study / "packs" / "manifest.json")["packs"]
                if p["file"] == filled.name)
    cell = pack["cards"][0]["locked"][0]["cells"][0]  # a locked text changed
    wb = openpyxl.load_workbook(study / "returns" / "blank-copy.xlsx")
    wb["Scoring"][cell].value = "Changed. " + str(wb["Scoring"][cell].value)
    wb.save(study / "returns" / "blank-copy.xlsx")
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(study), "--json"]).output)
    assert not any(f["used"] for f in doc["files"])
    assert {i["file"] for i in doc["issues"] if i["code"] == "duplicate-rater"} == \
        {"mine.xlsx", "blank-copy.xlsx"}


def test_a_workbook_named_like_an_owner_file_is_collected(study):
    """Excel's owner file (~$name.xlsx, some 165 bytes) is passed over; a workbook
    saved under such a name was passed over too, named nowhere and counted nowhere."""
    first, second = _filled(study)[:2]
    (study / "returns" / f"~${first.name}").write_bytes(b"\x05owner" + b" " * 159)
    shutil.copyfile(second, study / "returns" / f"~${second.name}")
    result = collect(study)
    files = {f.file: f for f in result.report.files}
    assert f"~${first.name}" not in files
    assert files[f"~${second.name}"].used


def test_an_entry_left_unread_is_not_called_no_pack_of_this_study(study, tmp_path):
    """A link out of the study is never read (nor a file that changes while collect
    reads it): it may be a rater's return, so collect's line says it was not read, not
    that it is no pack of this study."""
    outside = tmp_path / "outside.xlsx"
    shutil.copyfile(_filled(study)[0], outside)
    (study / "returns" / "outside-link.xlsx").symlink_to(outside)
    result = CliRunner().invoke(cli, ["collect", str(study)])
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("outside-link.xlsx: ")]
    assert line.startswith("outside-link.xlsx: not read, so its rater is unknown, 1 error"), line
