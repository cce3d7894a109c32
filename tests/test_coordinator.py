"""What the coordinator gets from collect and remind: the Status sheet (every expected
rater, returned or not), reply drafts for files with errors, reminders for the missing."""

from __future__ import annotations

import email
import email.policy
import json
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """Three raters: EV-01 returns a pasted 'Maybe', EV-02 is clean, EV-03 never returns;
    and someone sends an empty file."""
    root = init_study(tmp_path_factory.mktemp("coord") / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=5)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    by_rater = {p["rater_id"]: p for p in manifest["packs"]}
    files[2].unlink()  # EV-03
    listed = next(a for a in L.iter_answer_cells(by_rater["EV-01"])
                  if a["validation"]["type"] == "list")
    wb = openpyxl.load_workbook(files[0])
    wb[listed["sheet"]][listed["cell"]].value = "Maybe"
    wb.save(files[0])
    (root / "returns" / "empty.xlsx").write_bytes(b"")
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 1, result.output  # EV-01's file has an error
    lines = result.stdout.splitlines()
    assert any(ln.startswith("not returned: EV-03 (Validator Three") for ln in lines)
    assert "empty.xlsx: could not be read, so its rater is unknown" in result.stdout
    assert "100% complete, rater ?" not in result.stdout
    assert lines[-1].endswith(f"; 1 of 3 packs not returned ('sheetflow remind {root}' "
                              "drafts reminders for those due); 1 file that could not be "
                              "read, its rater unknown")
    root.joinpath("bad-cell.txt").write_text(f"{listed['sheet']}!{listed['cell']}")
    return root


def _status_rows(root: Path, sheet: str = "Status") -> list[dict[str, object]]:
    ws = openpyxl.load_workbook(root / "out" / "validation.xlsx")[sheet]
    header = [c.value for c in ws[1]]
    return [dict(zip(header, (c.value for c in row), strict=True))
            for row in ws.iter_rows(min_row=2)]


def test_status_sheet_lists_every_expected_rater_returned_or_not(study):
    rows = {r["Rater"]: r for r in _status_rows(study)}
    assert rows["EV-03"]["State"] == "Not returned"
    assert rows["EV-03"]["File returned"] is None and rows["EV-03"]["Complete %"] is None
    mail = {r["Rater"]: r for r in _status_rows(study, "Mail")}  # who to write to
    assert mail["EV-03"]["E-mail"] == "ev03@example.org"
    assert mail["EV-03"]["State"] == "Not returned" and mail["EV-03"]["Returned"] is None
    assert "sheetflow remind" in rows["EV-03"]["What to do"]
    assert rows["EV-01"]["State"] == "Errors: fix" and rows["EV-01"]["Errors"] >= 1
    assert "out/feedback/EV-01.eml" in rows["EV-01"]["What to do"]
    assert rows["EV-02"]["State"] in ("OK", "OK, warnings")
    assert rows["EV-02"]["Name"] == "Validator Two"


def test_an_empty_file_is_not_shown_complete(study):
    unknown = [r for r in _status_rows(study) if r["File returned"] == "empty.xlsx"]
    assert len(unknown) == 1
    row = unknown[0]
    assert row["State"] == "Unknown file" and row["Complete %"] is None
    assert row["Rater"] is None and row["Errors"] >= 1
    assert row["Sitting"] is None  # a file of no pack has no sitting (not "0")
    assert {r["Sitting"] for r in _status_rows(study) if r["Rater"]} == {1}


def test_status_sheet_is_ready_to_read_and_print(study):
    wb = openpyxl.load_workbook(study / "out" / "validation.xlsx")
    assert wb.sheetnames[:2] == ["Status", "Issues"] and wb.active.title == "Status"
    for name in ("Status", "Issues", "Mail"):
        ws = wb[name]
        assert ws.freeze_panes == "A2"
        assert ws.auto_filter.ref and ws.auto_filter.ref.startswith("A1:")
        assert ws.page_setup.orientation == "landscape"
        assert ws.print_title_rows.replace("$", "") == "1:1"  # the header on every page
        # one page wide, at 70% or more (the columns' widths are chosen for it)
        assert ws.sheet_properties.pageSetUpPr.fitToPage, name
        assert ws.page_setup.fitToWidth in (None, 1)  # 1 is the default, left out
        assert ws.page_setup.fitToHeight == 0
    fills = {r[0].value: r[0].fill.fgColor.rgb for r in wb["Status"].iter_rows(min_row=2)}
    assert fills["Not returned"] != fills["Errors: fix"]
    issues = wb["Issues"]
    header = [c.value for c in issues[1]]
    message = issues.cell(row=2, column=header.index("Message") + 1)
    assert message.alignment.wrap_text


def test_reply_draft_names_the_cells_and_attaches_the_pack(study):
    path = study / "out" / "feedback" / "EV-01.eml"
    msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert msg["X-Unsent"] == "1"
    assert "ev01@example.org" in msg["To"]
    assert msg["Subject"].endswith(": please fix 1 problem in your workbook")  # one error
    body = msg.get_body(preferencelist=("plain",)).get_content()
    assert (study / "bad-cell.txt").read_text() in body
    assert "Maybe" in body
    names = [part.get_filename() for part in msg.iter_attachments()]
    assert names == [p.name for p in (study / "packs").glob("*Okafor*.xlsx")]
    assert sorted(p.name for p in (study / "out" / "feedback").iterdir()) == ["EV-01.eml"]


def test_remind_drafts_for_the_missing_only(study):
    result = CliRunner().invoke(cli, ["remind", str(study), "--min-days", "0", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [r["rater_id"] for r in doc["not_returned"]] == ["EV-03"]
    drafts = sorted((study / "out" / "reminders").iterdir())
    assert [p.name for p in drafts] == ["EV-03.eml"]
    msg = email.message_from_bytes(drafts[0].read_bytes(), policy=email.policy.default)
    assert msg["X-Unsent"] == "1" and "ev03@example.org" in msg["To"]
    assert [a.get_filename() for a in msg.iter_attachments()] == \
        [p.name for p in (study / "packs").glob("*Moreau*.xlsx")]


def test_remind_exits_1_when_a_rater_has_no_address_to_remind(tmp_path):
    """The drafts cannot bring back a pack whose rater has no e-mail address: remind
    names them and exits 1, so a script does not read the run as done."""
    root = init_study(tmp_path / "s", "paired-rubric")
    raters = root / "raters.csv"
    raters.write_text(raters.read_text().replace("ev03@example.org", ""))
    generate_packs(root)
    files = fill_packs(root, seed=5)
    files[2].unlink()  # EV-03, who has no address
    result = CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0", "--json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["no_email"] == ["EV-03"] and doc["drafts"] == []
    text = CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0"]).output
    assert "EV-03 has not returned and has no e-mail address" in text


def test_collect_json_lists_the_raters(study):
    result = CliRunner().invoke(cli, ["collect", str(study), "--json"])
    doc = json.loads(result.stdout)
    assert result.exit_code == doc["exit_code"] == 1 and doc["ok"] is False
    states = {r["rater_id"]: r["state"] for r in doc["raters"]}
    assert states["EV-03"] == "missing" and states["EV-01"] == "errors"
    assert doc["feedback"] == [str(study / "out" / "feedback" / "EV-01.eml")]


def test_a_reply_to_a_rater_who_stopped_half_way_names_the_cases_left():
    """171 blank answers in cases 10-18: the reply listed 60 cells and "and 111 more of
    the same kind", never saying which cases were left. Now the cases left are one line
    (cases one after another share it); a case with one or two blanks is still listed
    cell by cell."""
    from sheetflow.collect.replies import _issue_lines
    from sheetflow.collect.validate import issue

    issues = [issue("answer-missing", file="f.xlsx", sheet="Scoring", cell=f"{col}{row}",
                    case=f"{case} (C{case:03d})", what="Depth")
              for case in range(10, 19) for row in range(case * 25, case * 25 + 10)
              for col in "CE"]
    issues.append(issue("answer-missing", file="f.xlsx", sheet="Scoring", cell="C20",
                        case="1 (C001)", what="Depth for case 1 (C001), response A"))
    lines = _issue_lines(issues)
    assert lines[0] == "- cases 10 (C010) to 18 (C018): 180 answers are blank (Scoring " \
        "rows 250 to 459)"
    assert len(lines) == 2
    assert lines[1].startswith("- Scoring!C20: Depth for case 1 (C001), response A is blank")
    # one case alone keeps its own line, two share one
    assert _issue_lines(issues[:20]) == [
        "- case 10 (C010): 20 answers are blank (Scoring rows 250 to 259)"]
    assert _issue_lines(issues[:40])[0].startswith("- cases 10 (C010) and 11 (C011): 40 ")


def test_a_pack_not_returned_shows_no_checked_counts(tmp_path):
    """Nothing came back, so nothing was checked: the row showed Errors 0, Warnings 0,
    Used No, which reads as a clean file. The pack column names the file made for the
    rater ("Pack sent" read as sent while the Mail sheet's Invited was blank)."""
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    assert CliRunner().invoke(cli, ["collect", str(root)]).exit_code == 1
    ws = openpyxl.load_workbook(root / "out" / "validation.xlsx")["Status"]
    head = [c.value for c in ws[1]]
    assert "Pack file" in head and "Pack sent" not in head
    row = [c.value for c in ws[2]]
    shown = dict(zip(head, row, strict=True))
    assert shown["State"] == "Not returned"
    assert shown["Errors"] is None and shown["Warnings"] is None and shown["Used"] is None


def test_a_reply_leaves_out_what_only_the_coordinator_can_act_on():
    """sender-unknown told the rater to "add it to the raters file or ask them to send
    from the address given there": words for the coordinator, in the rater's reply."""
    from sheetflow.collect.coordinator import RosterRow
    from sheetflow.collect.replies import feedback_body
    from sheetflow.collect.validate import issue
    from sheetflow.spec.study import Rater

    issues = [issue("answer-missing", file="f.xlsx", sheet="Scoring", cell="C5",
                    what="Depth", expected="a whole number"),
              issue("sender-unknown", file="f.xlsx", detail="someone@example.org"),
              issue("number-stored-as-text", file="f.xlsx", sheet="Scoring", cell="C6",
                    what="Depth", value="4", accepted="4")]
    row = RosterRow("errors", "EV-01", "Ann", "ann@example.org", 1, "p.xlsx", "f.xlsx", 99.0,
                    1, 2, False, "")
    body = feedback_body(Rater("EV-01", "Ann", "ann@example.org"), row, issues)
    assert "raters file" not in body and "someone@example.org" not in body
    # a value read as the rater meant it is nothing for them to do (the Issues sheet has it)
    assert "Scoring!C5" in body and "Scoring!C6" not in body


def test_remind_rows_carry_the_mail_history_status_shows(study, monkeypatch):
    """remind --json's not_returned rows said never invited and not overdue while
    status said invited and overdue: they now carry the pack's mail history."""
    import dataclasses
    import datetime as dt

    import sheetflow.collect.reminders as reminders
    from sheetflow.collect.mail_state import PackMail

    real = reminders.status

    def invited(*args, **kwargs):
        mail = PackMail(invited="2026-09-15T09:00:00+00:00", overdue=True)
        return [dataclasses.replace(p, mail=mail) if not p.returned else p
                for p in real(*args, **kwargs)]
    monkeypatch.setattr(reminders, "status", invited)
    result = reminders.remind(study, min_days=0, now=dt.datetime(2026, 10, 5, tzinfo=dt.UTC))
    (row,) = result.rows
    assert (row.invited, row.overdue) == ("2026-09-15 09:00", True)


def _drafts_state(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every entry in a drafts folder (hidden ones too): its bytes and modification time."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def _change_pack(root: Path, rater: str) -> str:
    """Append a byte to ``rater``'s pack workbook, as an edit after generate would; its
    file name."""
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    name = next(p["file"] for p in manifest["packs"] if p["rater_id"] == rater)
    pack = root / L.PACKS_DIR / name
    pack.write_bytes(pack.read_bytes() + b"\0")
    return name


def test_remind_refuses_a_pack_changed_after_generate_and_writes_nothing(tmp_path):
    """remind attached whatever bytes were in packs/: a coordinator who sent its draft
    sent a workbook changed after generate. Now it stops (exit 3), naming the pack and
    the whole command to run again, before any draft is written or removed. A manifest
    written before sheetflow recorded the hashes has nothing to compare with: its drafts
    are written as before."""
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    assert CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0"]).exit_code == 0
    reminders = root / "out" / "reminders"
    before = _drafts_state(reminders)
    assert len(before) == 3
    name = _change_pack(root, "EV-02")
    # the hint names the whole command as typed: --min-days and --now were left out
    result = CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0", "--now",
                                      "2030-01-06 09:00"])
    assert result.exit_code == 3, result.output
    assert result.stderr.splitlines() == [
        f"error: packs/{name}: the bytes attached are not the ones packs/manifest.json "
        "records the sha256 of: the workbook was changed or replaced after generate, so no "
        "reminder was drafted or sent; restore the workbook generate wrote ('sheetflow "
        f"generate {root}' on the unchanged spec writes the same bytes again), then run "
        f"'sheetflow remind {root} --min-days 0 --now \"2030-01-06 09:00\"' again"]
    assert _drafts_state(reminders) == before
    path = root / L.PACKS_DIR / L.MANIFEST_FILE
    manifest = json.loads(path.read_bytes())
    for entry in manifest["packs"]:
        del entry["sha256"]
    path.write_text(json.dumps(manifest), encoding="utf-8")
    again = CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0"])
    assert again.exit_code == 0, again.output
    after = _drafts_state(reminders)
    assert sorted(after) == sorted(before) and after != before  # written anew


def test_remind_replaces_its_drafts_whole_or_not_at_all(tmp_path, monkeypatch):
    """remind removed the earlier drafts, then wrote the new ones one by one: a failure
    on the second (a full disk) left one new draft and none of the others. Now the set
    is staged and replaced whole: a failure leaves the earlier drafts as they were."""
    from sheetflow.collect.reminders import remind

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    assert CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0"]).exit_code == 0
    reminders = root / "out" / "reminders"
    before = _drafts_state(reminders)
    real = Path.write_bytes
    drafts: list[str] = []

    def disk_full_at_the_second_draft(self: Path, data: bytes) -> int:
        if ".eml" in self.name:
            drafts.append(self.name)
            if len(drafts) == 2:
                raise OSError(28, "No space left on device")
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", disk_full_at_the_second_draft)
    with pytest.raises(OSError, match="No space left"):
        remind(root, min_days=0)
    monkeypatch.undo()
    assert _drafts_state(reminders) == before


def test_a_reply_whose_pack_changed_is_left_out_and_named(tmp_path):
    """collect's reply draft attached the pack whatever its bytes. Now a reply whose
    pack changed after generate is left out, and said where the coordinator looks: a
    warning, the Status sheet's "What to do", the JSON and the exit code; the other
    raters' replies are written all the same."""
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    files = fill_packs(root, seed=5)
    manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
    for path, pack in zip(files[:2], manifest["packs"][:2], strict=True):
        listed = next(a for a in L.iter_answer_cells(pack)
                      if a["validation"]["type"] == "list")
        wb = openpyxl.load_workbook(path)
        wb[listed["sheet"]][listed["cell"]].value = "Maybe"
        wb.save(path)
    raters = [p["rater_id"] for p in manifest["packs"][:2]]
    name = _change_pack(root, raters[0])
    why = (f"packs/{name}: the bytes attached are not the ones packs/manifest.json records "
           "the sha256 of: the workbook was changed or replaced after generate, so no reply "
           f"draft was written for {raters[0]}; restore the workbook generate wrote "
           f"('sheetflow generate {root}' on the unchanged spec writes the same bytes again), "
           f"then run 'sheetflow collect {root}' again")
    result = CliRunner().invoke(cli, ["collect", str(root)])
    assert result.exit_code == 1, result.output
    assert f"warning: {why}" in result.stderr.splitlines()
    feedback = root / "out" / "feedback"
    assert sorted(p.name for p in feedback.iterdir()) == [f"{raters[1]}.eml"]
    rows = {r["Rater"]: r for r in _status_rows(root)}
    assert rows[raters[0]]["What to do"] == why
    assert f"out/feedback/{raters[1]}.eml" in rows[raters[1]]["What to do"]
    doc = json.loads(CliRunner().invoke(cli, ["collect", str(root), "--json"]).stdout)
    assert doc["ok"] is False and doc["feedback"] == [str(feedback / f"{raters[1]}.eml")]
    assert doc["feedback_left_out"] == [
        {"rater": raters[0], "sitting": 1, "pack": f"packs/{name}", "why": why}]
    # status said 'send replies sends them' of this reply too: it names it now
    status = CliRunner().invoke(cli, ["status", str(root)])
    assert f"no reply to {raters[0]} (sitting 1): {why}" in status.stdout.splitlines()
    shown = json.loads(CliRunner().invoke(cli, ["status", str(root), "--json"]).stdout)
    assert [r["reply_held"] for r in shown["raters"][:2]] == [why, ""]


def test_a_reply_attaches_its_pack_when_the_manifest_recorded_no_hashes(study):
    """A manifest written before sheetflow recorded each pack's sha256 has nothing to
    compare the attachment with: the reply is drafted as before."""
    import dataclasses

    from sheetflow.collect.drafts import write_feedback
    from sheetflow.collect.run import collect
    from sheetflow.spec.study import load_study

    result = collect(study, write=False)
    unhashed = [dataclasses.replace(h, sha256="") for h in result.heads]
    name = next(h.file for h in result.heads if h.rater_id == "EV-01")
    pack = study / L.PACKS_DIR / name
    original = pack.read_bytes()
    pack.write_bytes(original + b"\0")
    try:
        loaded = load_study(study)
        hashed = write_feedback(loaded, study, result.roster, result.report, result.heads)
        drafts = write_feedback(loaded, study, result.roster, result.report, unhashed)
    finally:
        pack.write_bytes(original)
    assert hashed.changed == [("EV-01", 1, f"packs/{name}")] and not hashed.unwritten
    assert drafts.changed == [] and list(drafts.unwritten) == ["EV-01.eml"]


def test_the_issues_sheet_puts_errors_before_warnings(study):
    """EV-01's pasted 'Maybe' (an error) stood below the other raters' warnings, filed
    by file name: the Issues sheet lists every error first, then every warning, each
    part by file, sheet, row and column."""
    rows = _status_rows(study, "Issues")
    severities = [r["Severity"] for r in rows]
    errors = severities.count("error")
    assert errors >= 2 and "warning" in severities  # the empty file's and EV-01's
    assert severities == ["error"] * errors + ["warning"] * (len(rows) - errors)
    cell = (study / "bad-cell.txt").read_text().split("!")[1]
    assert any(r["Cell"] == cell for r in rows[:errors])
    files = [r["File"] for r in rows]
    assert files[:errors] == sorted(files[:errors]) and files[errors:] == sorted(files[errors:])


def test_an_issue_s_dimension_and_value_are_never_broken_mid_word(tmp_path):
    """A 004 verdict warning names the dimension ``overall_verdict`` and the value
    ``PASS_ADEQUATE``: wider than their columns, they printed broken mid-word
    (``overall_verdic`` / ``t``). Each column now holds its longest word, and the sheet
    still prints one landscape page wide at 70% or more."""
    from sheetflow.collect.coordinator import write_validation_workbook
    from sheetflow.collect.validate import Issue, ValidationReport
    from sheetflow.workbook.printing import MIN_SCALE, page_pixels

    issue = Issue(file="judge-scores-judge-1-2026-04-26.xlsx", code="verdict-off-band",
                  severity="warning", message="Overall verdict for case 1 (NTR7) is "
                  "'PASS_ADEQUATE', but the mean of this response's scores is 3.17.",
                  sheet="Scoring", cell="C24", rater="judge-1", case="1 (NTR7)",
                  dimension="overall_verdict", value="PASS_ADEQUATE")
    path = tmp_path / "validation.xlsx"
    write_validation_workbook(path, [], ValidationReport(files=[], issues=[issue]),
                              study_dir="s")
    ws = openpyxl.load_workbook(path)["Issues"]
    header = [c.value for c in ws[1]]
    widths = [0.0] * len(header)
    for dim in ws.column_dimensions.values():  # equal neighbours share one entry
        for j in range(dim.min - 1, dim.max):
            widths[j] = dim.width
    for name in ("Dimension", "Value"):
        j = header.index(name)
        word = ws.cell(row=2, column=j + 1).value
        assert widths[j] >= len(word) + 1, (name, word, widths[j])
    # a stored width is the column's pixels / 7 (xlsxwriter adds the cell padding)
    assert sum(round(w * 7) for w in widths) * MIN_SCALE <= page_pixels(True)
    assert widths[header.index("Message")] >= 24
