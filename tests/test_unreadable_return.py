"""A return that could not be read or identified, but is tied to a pack that was sent,
is that pack's return, unusable: never "not returned", never a stranger's file.

EV-01 returns a workbook cut off in transfer (named like EV-01's pack); EV-02 returns
their own workbook with one identity store edited (renamed, so only the stores tie it
to EV-02); EV-03 never returns; a cut-off file named like no pack comes in, and an
exact copy of EV-01's cut-off file.
"""

from __future__ import annotations

import email
import email.policy
import json
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner

from sheetflow.analysis.panel import build_panel, missing_before_unsealing
from sheetflow.cli import cli
from sheetflow.collect.coordinator import Expected, roster
from sheetflow.collect.drafts import write_feedback
from sheetflow.collect.links import DETAIL_ROOM, conflict_detail
from sheetflow.collect.outputs import verify_ratings
from sheetflow.collect.validate import FileStatus, ValidationReport, issue
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import open_manifest, read_manifest
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L

CONFLICT_NAME = "EV02-scores-final.xlsx"
STRAY_NAME = "stray.xlsx"
COPY_NAME = "stray-copy.xlsx"  # after EV-01's file by name: the copy, not the original


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    root = init_study(tmp_path_factory.mktemp("unreadable") / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=5)
    cut = files[0].read_bytes()[:6000]
    files[0].write_bytes(cut)  # EV-01: cut off in transfer, named like EV-01's pack
    wb = openpyxl.load_workbook(files[1])  # EV-02: one identity store edited
    row = L.IDENTITY_KEYS.index("rater_id") + 1
    assert wb[L.IDENTITY_SHEET].cell(row, 1).value == "rater_id"
    wb[L.IDENTITY_SHEET].cell(row, 2).value = "EV-03"
    wb.save(files[1])
    files[1].rename(files[1].with_name(CONFLICT_NAME))
    files[2].unlink()  # EV-03 never returns
    (root / "returns" / STRAY_NAME).write_bytes(cut[:5000])  # named like no pack
    (root / "returns" / COPY_NAME).write_bytes(cut)  # read once, as EV-01's file
    return root


@pytest.fixture(scope="module")
def collected(study) -> str:
    result = CliRunner().invoke(cli, ["collect", str(study)])
    assert result.exit_code == 1, result.output
    return result.stdout


def _pack_file(root: Path, rater: str) -> str:
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    return next(p["file"] for p in manifest["packs"] if p["rater_id"] == rater)


def _status_rows(root: Path) -> list[dict[str, object]]:
    ws = openpyxl.load_workbook(root / "out" / "validation.xlsx")["Status"]
    header = [c.value for c in ws[1]]
    return [dict(zip(header, (c.value for c in row), strict=True))
            for row in ws.iter_rows(min_row=2)]


def test_collect_says_what_ties_each_file_to_a_pack(study, collected):
    ev01 = _pack_file(study, "EV-01")
    lines = collected.splitlines()
    assert f"{ev01}: could not be read; named like EV-01's pack, 1 error, 0 warnings" in collected
    assert f"{ev01}: rater unknown" not in collected
    assert (f"{CONFLICT_NAME}: its identity stores disagree; defined names and document "
            "properties name EV-02's pack, 1 error, 0 warnings") in collected
    assert not any(ln.startswith(("not returned: EV-01", "not returned: EV-02"))
                   for ln in lines)
    assert any(ln.startswith("not returned: EV-03") for ln in lines)
    # a damaged file tied to no pack may be anyone's: it is unreadable, its rater unknown
    assert f"{STRAY_NAME}: could not be read, so its rater is unknown, 1 error" in collected
    assert f"{STRAY_NAME}: rater unknown" not in collected
    # nor is a copy of a file that could not be read a stranger's file
    assert f"{COPY_NAME}: an exact copy of {ev01}, read once, 0 errors, 1 warning" in collected


def test_status_sheet_shows_the_packs_returned_unusable(study, collected):
    rows = _status_rows(study)
    by_rater = {r["Rater"]: r for r in rows if r["Rater"]}
    ev01 = _pack_file(study, "EV-01")
    assert by_rater["EV-01"]["State"] == "Returned, unusable"
    assert by_rater["EV-01"]["File returned"] == ev01
    assert "asking EV-01 to attach it again" in by_rater["EV-01"]["What to do"]
    assert by_rater["EV-02"]["State"] == "Returned, unusable"
    assert by_rater["EV-02"]["File returned"] == CONFLICT_NAME
    # the same edited file would be refused again: its answers go into the original
    assert "asking EV-02 to copy their answers into their original workbook, as the " \
           "same file sent again would be refused again (see" in by_rater["EV-02"]["What to do"]
    assert "attach it again" not in by_rater["EV-02"]["What to do"]
    assert by_rater["EV-03"]["State"] == "Not returned"
    unknown = {r["File returned"]: r["What to do"] for r in rows
               if r["State"] == "Unknown file"}
    assert sorted(unknown) == [COPY_NAME, STRAY_NAME]
    assert unknown[COPY_NAME] == (f"an exact copy of {ev01}, read once: that file's row "
                                  "says what to do; remove this copy from the returns folder")
    assert unknown[STRAY_NAME].startswith("could not be read, so its rater is unknown: ")


def test_reply_drafts_ask_for_the_file_again(study, collected):
    drafts = study / "out" / "feedback"
    assert sorted(p.name for p in drafts.iterdir()) == ["EV-01.eml", "EV-02.eml"]
    msg = email.message_from_bytes((drafts / "EV-01.eml").read_bytes(),
                                   policy=email.policy.default)
    assert msg["X-Unsent"] == "1" and "ev01@example.org" in msg["To"]
    body = msg.get_body(preferencelist=("plain",)).get_content()
    assert _pack_file(study, "EV-01") in body and "It arrived" in body
    assert "damaged or incomplete" in body and "Please attach" in body
    assert [a.get_filename() for a in msg.iter_attachments()] == [_pack_file(study, "EV-01")]


def test_reply_to_an_edited_identity_asks_for_the_answers_in_the_original(study, collected):
    """The draft asked EV-02 to attach the same file again, which would be refused
    again, and quoted the coordinator's message, naming rater EV-03."""
    msg = email.message_from_bytes((study / "out" / "feedback" / "EV-02.eml").read_bytes(),
                                   policy=email.policy.default)
    body = msg.get_body(preferencelist=("plain",)).get_content()
    assert "attach your filled-in workbook again" not in body
    assert "EV-03" not in body and L.IDENTITY_SHEET not in body
    assert "The hidden part of this workbook that says whose it is was changed, so it " \
           "cannot be matched to you. Please copy your answers into the workbook " \
           "attached and send that one." in body
    assert "Sending this file again would not help" in body
    assert [a.get_filename() for a in msg.iter_attachments()] == [_pack_file(study, "EV-02")]


def test_identity_conflict_message_shows_the_odd_value(study, collected):
    doc = json.loads((study / "out" / "collection.json").read_text(encoding="utf-8"))
    assert doc["files"]  # the record is there
    result = CliRunner().invoke(cli, ["collect", str(study), "--json"])
    found = [i for i in json.loads(result.stdout)["issues"] if i["code"] == "identity-conflict"]
    assert len(found) == 1
    message = found[0]["message"]
    assert f"(rater_id 'EV-03' in sheet {L.IDENTITY_SHEET}; 'EV-02' in" in message
    assert "..." not in message


def test_remind_writes_no_has_not_arrived_draft_for_an_unusable_return(study, collected):
    result = CliRunner().invoke(cli, ["remind", str(study), "--min-days", "0", "--json"])
    assert result.exit_code == 1, result.output  # the unusable files still need the coordinator
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    assert [r["rater_id"] for r in doc["not_returned"]] == ["EV-03"]
    assert [u["rater"] for u in doc["unusable"]] == ["EV-01", "EV-02"]
    drafts = sorted(p.name for p in (study / "out" / "reminders").iterdir())
    assert drafts == ["EV-03.eml"]
    text = CliRunner().invoke(cli, ["remind", str(study), "--min-days", "0"]).stdout
    assert "no reminder EV-01 (sitting 1): a file came back but cannot be used" in text


def test_status_shows_the_unusable_return_and_exits_1(study, collected):
    result = CliRunner().invoke(cli, ["status", str(study), "--json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    rows = {r["rater"]: r for r in doc["raters"]}
    assert rows["EV-01"]["returned"] is True and rows["EV-01"]["errors"] == 1
    assert "could not be read; named like EV-01's pack" in rows["EV-01"]["unusable"]
    assert rows["EV-02"]["returned"] is True and rows["EV-02"]["unusable"]
    assert rows["EV-03"]["returned"] is False and not rows["EV-03"]["unusable"]
    text = CliRunner().invoke(cli, ["status", str(study)])
    assert text.exit_code == 1
    assert text.stdout.splitlines()[-1] == (
        "2 of 3 packs returned; 2 with a file that cannot be used (collect's reply drafts "
        f"in out/feedback/ ask for the files again; 'sheetflow send {study} replies' sends "
        "them); 1 file that could not be read, its rater unknown (find out who sent it)")
    assert COPY_NAME not in text.stdout  # read once: its original is on EV-01's row


def test_panel_names_the_file_and_why_it_was_not_used(study, collected):
    verdicts = verify_ratings(study, incomplete=True).files  # what analyze reads
    ev01 = _pack_file(study, "EV-01")
    verdict = next(v for v in verdicts if v["file"] == ev01)
    assert verdict["linked_raters"] == ["EV-01"] and verdict["rater"] == ""
    expected = [("EV-01", 1), ("EV-02", 1), ("EV-03", 1)]
    panel = build_panel(expected, pd.DataFrame({"rater": [], "sitting": []}), verdicts)
    reasons = {p["rater"]: p["reason"] for p in panel.missing_packs}
    assert reasons["EV-01"].startswith(f"file {ev01} not used: could not be read; named "
                                       "like EV-01's pack; 1 error: corrupt-file")
    assert CONFLICT_NAME in reasons["EV-02"] and "identity-conflict" in reasons["EV-02"]
    assert reasons["EV-03"] == "no return collected"
    before = missing_before_unsealing(study, verdicts)
    assert any(ln.startswith(f"EV-01 (sitting 1): file {ev01} not used: could not be read")
               for ln in before)
    assert "EV-03 (sitting 1): no return collected" in before


def test_a_file_naming_two_packs_is_nobodys_guess(study):
    """A file tied to two packs shows on both, but neither rater gets a draft."""
    manifest = open_manifest(study)
    manifest.close()
    expected = [Expected(h.pack_id, h.rater_id, h.sitting, h.file) for h in manifest.heads]
    two = [expected[0].pack_id, expected[2].pack_id]
    f = FileStatus("both.xlsx", "0" * 64, errors=1, linked=two,
                   linked_raters=["EV-01", "EV-03"],
                   link="its identity stores disagree; defined names name EV-01's pack; "
                        "sheet _sheetflow names EV-03's pack")
    report = ValidationReport([f], [issue("identity-conflict", file="both.xlsx",
                                          detail="x")])
    loaded = load_study(study)
    rows = roster(loaded, expected, report)
    states = {r.rater_id: r.state for r in rows}
    assert states == {"EV-01": "unclear", "EV-02": "missing", "EV-03": "unclear"}
    assert "unclear whose it is" in rows[0].todo
    drafts = write_feedback(loaded, study, rows, report, manifest.heads)
    assert drafts.unwritten == {} and drafts.changed == [] and drafts.no_email == []


@pytest.mark.parametrize("seen", [
    {"document properties": "R2", "defined names": "R2", "sheet _sheetflow": "R9"},
    {"document properties": "EV-02-s1", "defined names": "EV-02-s1",
     "sheet _sheetflow": "EV-03-s1"},
    {"document properties": "a" * 64, "defined names": "a" * 64, "sheet _sheetflow": "b" * 64},
    {"document properties": "A-long-value", "defined names": "B-long-value",
     "sheet _sheetflow": "C-long-value"},
])
def test_conflict_detail_fits_and_leads_with_the_odd_value(seen):
    text = conflict_detail("rater_id", seen)
    assert len(text) <= DETAIL_ROOM
    values = list(seen.values())
    odd = min(set(values), key=lambda v: (values.count(v), v))
    first = text.split("'")[1]
    assert text.startswith(f"rater_id '{first}'") and len(first) >= min(len(odd), 6)
    assert odd.startswith(first.removesuffix("..."))
    if len(odd) <= 24:  # short values are shown whole, every one of them
        assert all(f"'{v}'" in text for v in values)
    message = issue("identity-conflict", file="f.xlsx", detail=text).message
    assert f"({text})" in message


def test_a_return_saved_as_ods_or_xls_under_the_packs_name_is_linked(tmp_path):
    """LibreOffice's "Use ODF format" turns pack.xlsx into pack.ods: it was "rater
    unknown", the pack "not returned", and remind told the rater it had not arrived.
    Linked by its name, extension aside, the rater gets the reply asking for .xlsx."""
    import zipfile

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=5)
    ods = files[0].with_suffix(".ods")
    with zipfile.ZipFile(ods, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", "<office:document-content/>")
    files[0].unlink()
    files[1].with_suffix(".xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    files[1].unlink()
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 1, result.output
    assert f"{ods.name}: could not be read; named like EV-01's pack" in result.stdout
    assert "xls: could not be read; named like EV-02's pack" in result.stdout
    assert "not returned: EV-01" not in result.stdout
    drafts = sorted(p.name for p in (root / "out" / "feedback").iterdir())
    assert drafts == ["EV-01.eml", "EV-02.eml"]
    reminders = CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0"])
    for rater in ("EV-01", "EV-02"):
        assert f"no reminder {rater} (sitting 1): a file came back but cannot be used" \
            in reminders.output
    assert "no reminders needed" in reminders.output


def test_a_copy_sorting_first_never_stands_for_the_packs_unreadable_file(tmp_path):
    """An exact copy of EV-01's cut-off file, named to sort before it: the file named
    like the pack is the original (the pack returned, unusable), the copy the copy; the
    pack was "not returned" and the pack's own file called the copy."""
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=5)
    cut = files[0].read_bytes()[:6000]
    files[0].write_bytes(cut)
    first = "0-copy.xlsx"
    assert first < files[0].name
    (root / "returns" / first).write_bytes(cut)
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 1, result.output
    ev01 = files[0].name
    assert f"{ev01}: could not be read; named like EV-01's pack, 1 error" in result.stdout
    assert f"{first}: an exact copy of {ev01}, read once, 0 errors, 1 warning" \
        in result.stdout
    assert "not returned: EV-01" not in result.stdout
    by_rater = {r["Rater"]: r for r in _status_rows(root) if r["Rater"]}
    assert by_rater["EV-01"]["State"] == "Returned, unusable"
    assert by_rater["EV-01"]["File returned"] == ev01


@pytest.mark.parametrize("code", ["identity-missing", "identity-mismatch"])
def test_reply_to_a_file_without_its_identity_asks_for_the_answers_in_the_original(code):
    """A file named like a pack whose identity is missing or names another pack: the
    same file would be refused again, and the coordinator's words ("names a rater of
    this study with a pack that is not theirs") are not the rater's."""
    from sheetflow.collect.replies import unusable_body
    from sheetflow.spec.study import Rater

    found = issue(code, file="EV-02.xlsx", detail="pack_id 'EV-03-s1' names EV-03")
    row = type("Row", (), {"file": "EV-02.xlsx"})()
    body = unusable_body(Rater("EV-02", "Validator Two"), row, [found])
    assert "attach your filled-in workbook again" not in body
    assert "EV-03" not in body and "a pack that is not theirs" not in body
    assert "Please copy your answers into the workbook attached and send that one." in body
    assert "Sending this file again would not help" in body
